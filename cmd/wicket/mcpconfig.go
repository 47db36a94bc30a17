package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"wicket/agent"
	"wicket/agent/front"
	"wicket/internal/project"
)

func mcpConfigCommand() *cli.Command {
	return &cli.Command{
		Name:  "mcp-config",
		Usage: "print the mcpServers JSON block a client (Claude Desktop, Claude Code) needs for this project",
		Description: "Prints a JSON object with one mcpServers entry that runs `wicket mcp` for this project with the " +
			"absolute path of this binary. Paste it into claude_desktop_config.json, or into .mcp.json at a project root " +
			"for Claude Code (or pass it to `claude mcp add-json`).\n\n" +
			"With --http HOST:PORT it prints the block for a running `wicket mcp --http` server instead: its URL and an " +
			"Authorization header that reads the caller's token (from `wicket callers add`) from the environment variable " +
			"named by --token-env.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "profile", Value: agent.ProfileFull, Usage: "profile the server runs with: " + strings.Join(agent.Profiles, ", ")},
			&cli.StringSliceFlag{Name: "deny-tool", Usage: "tool the server refuses (repeatable)"},
			&cli.StringFlag{Name: "name", Value: "wicket", Usage: "the server's key in mcpServers"},
			&cli.StringFlag{Name: "node", Usage: "node address the server talks to (default: [node] address in wicket.toml)"},
			&cli.BoolFlag{Name: "no-node", Usage: "leave the node out (authoring and research only)"},
			&cli.BoolFlag{Name: "no-trace", Usage: "do not pass --trace"},
			&cli.StringFlag{Name: "http", Usage: "print a client block for `wicket mcp --http` at `HOST:PORT` (URL and header)"},
			&cli.BoolFlag{Name: "https", Usage: "with --http: the server runs with --tls-cert/--tls-key"},
			&cli.BoolFlag{Name: "no-auth", Usage: "with --http: the server runs with --no-auth (no header)"},
			&cli.StringFlag{Name: "token-env", Value: "WICKET_MCP_TOKEN", Usage: "with --http: the environment variable the client reads the bearer token from"},
			&cli.StringFlag{Name: "approval", Usage: "pass --approval MODE (" + strings.Join(project.ApprovalModes, ", ") + "; default: leave it to [agent] approval in wicket.toml)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("mcp-config takes no arguments, got %q", c.Args().First())
			}
			o := mcpConfigOptions{
				project: c.String("project"), profile: c.String("profile"), denyTools: c.StringSlice("deny-tool"),
				name: c.String("name"), node: c.String("node"), noNode: c.Bool("no-node"), noTrace: c.Bool("no-trace"),
				http: c.String("http"), https: c.Bool("https"), noAuth: c.Bool("no-auth"), tokenEnv: c.String("token-env"),
				approval: c.String("approval"),
				set:      setFlags(c, "https", "no-auth", "profile", "deny-tool", "node", "no-node", "no-trace", "approval"),
			}
			return runMCPConfig(c.Context, o, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// mcpConfigOptions is what wicket mcp-config works with, filled from its
// flags.
type mcpConfigOptions struct {
	project   string // the --project flag
	profile   string
	denyTools []string
	name      string // the server's key in mcpServers
	node      string
	noNode    bool
	noTrace   bool
	http      string // HOST:PORT of a wicket mcp --http server
	https     bool
	noAuth    bool
	tokenEnv  string
	approval  string
	set       map[string]bool // the flags given on the command line
}

// runMCPConfig prints the mcpServers block for this project's wicket mcp,
// or for a running wicket mcp --http.
func runMCPConfig(_ context.Context, o mcpConfigOptions, stdout, stderr io.Writer) error {
	if o.http != "" {
		return printHTTPConfig(o, stdout, stderr)
	}
	for _, f := range []string{"https", "no-auth"} {
		if o.set[f] {
			return usagef("--%s needs --http HOST:PORT", f)
		}
	}
	if o.noNode && o.node != "" {
		return usagef("give --node or --no-node, not both")
	}
	p, cfg, err := openProjectAt(o.project)
	if err != nil {
		return err
	}
	if _, err := agent.Check(o.profile, o.denyTools); err != nil {
		return usagef("%v", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("locate the wicket binary: %w", err)
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return fmt.Errorf("locate the wicket binary: %w", err)
	}
	args := []string{"--project", p.Root, "mcp", "--profile", o.profile}
	for _, d := range o.denyTools {
		args = append(args, "--deny-tool", d)
	}
	if !o.noNode {
		addr := o.node
		if addr == "" {
			addr = cfg.Node.Address
		}
		args = append(args, "--node", addr)
	}
	if !o.noTrace {
		args = append(args, "--trace")
	}
	if o.set["approval"] {
		if err := project.ValidApproval(o.approval); err != nil {
			return usagef("--approval: %v", err)
		}
		args = append(args, "--approval", o.approval)
	}
	block := map[string]any{
		"mcpServers": map[string]any{
			o.name: map[string]any{"command": exe, "args": args},
		},
	}
	if err := writeJSON(stdout, block); err != nil {
		return err
	}
	fmt.Fprintln(stderr, "Claude Desktop: merge this into claude_desktop_config.json. Claude Code: save it as .mcp.json in your working folder.")
	return nil
}

// printHTTPConfig prints the mcpServers block for an HTTP server: the
// profile lives with the caller, so only the URL and the header go here.
func printHTTPConfig(o mcpConfigOptions, stdout, stderr io.Writer) error {
	addr := o.http
	for _, f := range []string{"profile", "deny-tool", "node", "no-node", "no-trace"} {
		if o.set[f] {
			return usagef("--%s does not apply with --http: an HTTP server's caller carries its profile (wicket callers add NAME --profile P)", f)
		}
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("--http %q: want HOST:PORT: %v", addr, err)
	}
	scheme := "http"
	if o.https {
		scheme = "https"
	}
	entry := map[string]any{"type": "http", "url": scheme + "://" + net.JoinHostPort(host, port) + front.MCPPath}
	if !o.noAuth {
		env := o.tokenEnv
		if env == "" || strings.ContainsAny(env, " ${}") {
			return usagef("--token-env %q: want an environment variable name", env)
		}
		entry["headers"] = map[string]string{"Authorization": "Bearer ${" + env + "}"}
	}
	if err := writeJSON(stdout, map[string]any{"mcpServers": map[string]any{o.name: entry}}); err != nil {
		return err
	}
	if !o.noAuth {
		fmt.Fprintf(stderr, "Set %s to the caller's token (printed once by `wicket callers add`) where the client runs.\n", o.tokenEnv)
	}
	return nil
}
