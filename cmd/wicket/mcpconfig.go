package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"wicket/agent"
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
			if addr := c.String("http"); addr != "" {
				return printHTTPConfig(c, addr)
			}
			for _, f := range []string{"https", "no-auth"} {
				if c.IsSet(f) {
					return usagef("--%s needs --http HOST:PORT", f)
				}
			}
			if c.Bool("no-node") && c.String("node") != "" {
				return usagef("give --node or --no-node, not both")
			}
			p, cfg, err := openProject(c)
			if err != nil {
				return err
			}
			if _, err := agent.Check(c.String("profile"), c.StringSlice("deny-tool")); err != nil {
				return usagef("%v", err)
			}
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("locate the wicket binary: %w", err)
			}
			if exe, err = filepath.EvalSymlinks(exe); err != nil {
				return fmt.Errorf("locate the wicket binary: %w", err)
			}
			args := []string{"--project", p.Root, "mcp", "--profile", c.String("profile")}
			for _, d := range c.StringSlice("deny-tool") {
				args = append(args, "--deny-tool", d)
			}
			if !c.Bool("no-node") {
				addr := c.String("node")
				if addr == "" {
					addr = cfg.Node.Address
				}
				args = append(args, "--node", addr)
			}
			if !c.Bool("no-trace") {
				args = append(args, "--trace")
			}
			if c.IsSet("approval") {
				if err := project.ValidApproval(c.String("approval")); err != nil {
					return usagef("--approval: %v", err)
				}
				args = append(args, "--approval", c.String("approval"))
			}
			block := map[string]any{
				"mcpServers": map[string]any{
					c.String("name"): map[string]any{"command": exe, "args": args},
				},
			}
			if err := writeJSON(c.App.Writer, block); err != nil {
				return err
			}
			fmt.Fprintln(c.App.ErrWriter, "Claude Desktop: merge this into claude_desktop_config.json. Claude Code: save it as .mcp.json in your working folder.")
			return nil
		},
	}
}

// printHTTPConfig prints the mcpServers block for an HTTP server: the
// profile lives with the caller, so only the URL and the header go here.
func printHTTPConfig(c *cli.Context, addr string) error {
	for _, f := range []string{"profile", "deny-tool", "node", "no-node", "no-trace"} {
		if c.IsSet(f) {
			return usagef("--%s does not apply with --http: an HTTP server's caller carries its profile (wicket callers add NAME --profile P)", f)
		}
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("--http %q: want HOST:PORT: %v", addr, err)
	}
	scheme := "http"
	if c.Bool("https") {
		scheme = "https"
	}
	entry := map[string]any{"type": "http", "url": scheme + "://" + net.JoinHostPort(host, port) + agent.MCPPath}
	if !c.Bool("no-auth") {
		env := c.String("token-env")
		if env == "" || strings.ContainsAny(env, " ${}") {
			return usagef("--token-env %q: want an environment variable name", env)
		}
		entry["headers"] = map[string]string{"Authorization": "Bearer ${" + env + "}"}
	}
	if err := writeJSON(c.App.Writer, map[string]any{"mcpServers": map[string]any{c.String("name"): entry}}); err != nil {
		return err
	}
	if !c.Bool("no-auth") {
		fmt.Fprintf(c.App.ErrWriter, "Set %s to the caller's token (printed once by `wicket callers add`) where the client runs.\n", c.String("token-env"))
	}
	return nil
}
