package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"wicket/agent"
	"wicket/agent/front"
	"wicket/internal/project"
	"wicket/node/command"
	"wicket/strategy/research"
	"wicket/trace"
)

func mcpCommand() *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: "serve the agent surface (MCP over stdio, or Streamable HTTP with --http): authoring, research, node reads and gated writes",
		Description: "Runs an MCP server on stdin/stdout for an AI agent. The operator chooses what the agent is offered: " +
			"--profile full|read-only|offline and --deny-tool NAME (repeatable). Stdout carries protocol only; logs go to " +
			"stderr. With --trace every tool call is appended to settings/state/agent/YYYY-MM.jsonl (review it with " +
			"`wicket trace`). --check prints the served and refused tool sets and exits.\n\n" +
			"With --http 127.0.0.1:8765 it serves MCP over Streamable HTTP at /mcp instead: many sessions in one process, " +
			"each with its own previews and trace session. Every request carries a caller's bearer token (`wicket callers add`), " +
			"and each caller's own profile and deny list scope its sessions; --no-auth serves one local operator with the " +
			"command line's --profile instead. Loopback only, unless --allow-remote with --tls-cert and --tls-key. " +
			"SIGTERM lets calls in flight finish (up to --shutdown-grace).\n\n" +
			"--approval elicit|operator makes a person approve every confirmed write (through the client, or at a terminal " +
			"with `wicket approve`); --max-writes, --max-notional and --max-writes-per-minute bound what one session may send " +
			"(defaults in wicket.toml [agent]; over HTTP every session has its own).",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "profile", Value: agent.ProfileFull, Usage: "what the agent is offered: " + strings.Join(agent.Profiles, ", ")},
			&cli.StringSliceFlag{Name: "deny-tool", Usage: "refuse this tool although the profile allows it (repeatable)"},
			&cli.StringFlag{Name: "node", Usage: "the trading node's `HOST:PORT` (without it, node tools explain how to start one)"},
			&cli.StringFlag{Name: "addr", Usage: "send research calls to `wicket data serve` at `HOST:PORT` instead of the embedded history store"},
			clusterFlag(),
			insecureClusterFlag(),
			&cli.BoolFlag{Name: "trace", Usage: "trace every tool call under the project's settings/state/agent"},
			&cli.StringFlag{Name: "trace-dir", Usage: "trace every tool call under `DIR`"},
			&cli.BoolFlag{Name: "check", Usage: "print the served and refused tool sets and exit"},
			&cli.StringFlag{Name: "max-message", Value: "4MiB", Usage: "the largest JSON-RPC message (a stdio line or an HTTP body) accepted: bytes, or with KiB/MiB"},
			&cli.StringFlag{Name: "http", Usage: "serve MCP over Streamable HTTP at `HOST:PORT` (path /mcp) instead of stdio"},
			&cli.BoolFlag{Name: "no-auth", Usage: "with --http: serve without callers (loopback only); every session gets --profile and --deny-tool"},
			&cli.BoolFlag{Name: "allow-remote", Usage: "with --http: allow a non-loopback listen address (needs --tls-cert and --tls-key)"},
			&cli.StringFlag{Name: "tls-cert", Usage: "with --http: serve HTTPS with this certificate `FILE` (PEM)"},
			&cli.StringFlag{Name: "tls-key", Usage: "with --http: the certificate's private key `FILE` (PEM)"},
			&cli.StringSliceFlag{Name: "allow-origin", Usage: "with --http: also accept this Origin (scheme://host[:port]; repeatable)"},
			&cli.DurationFlag{Name: "shutdown-grace", Value: 30 * time.Second, Usage: "with --http: on SIGTERM, how long calls in flight may take to finish"},
		}, mcpLoopFlags()...), // approval and budgets: mcp_loop.go
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("mcp takes no arguments, got %q", c.Args().First())
			}
			o := mcpOptions{
				project: c.String("project"), profile: c.String("profile"), deny: c.StringSlice("deny-tool"),
				node: c.String("node"), addr: c.String("addr"), trace: c.Bool("trace"), traceDir: c.String("trace-dir"),
				check: c.Bool("check"), maxMessage: c.String("max-message"),
				http: mcpHTTPFlagsOf(c), loop: mcpLoopFlagsOf(c), research: clusteredResearchOf(c), stdin: c.App.Reader,
			}
			return runMCP(c.Context, o, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// mcpOptions is what wicket mcp works with, filled from its flags.
type mcpOptions struct {
	project    string // the --project flag
	profile    string
	deny       []string
	node       string // the node's HOST:PORT; empty: none
	addr       string // wicket data serve's HOST:PORT; empty: embedded
	trace      bool
	traceDir   string
	check      bool
	maxMessage string // the --max-message text
	http       mcpHTTPOptions
	loop       mcpLoopOptions
	research   researchEngine
	stdin      io.Reader // stdio's requests (stdout carries the answers)
}

// runMCP prints the tool sets (--check), or serves MCP over stdio until
// stdin closes, or over HTTP until ctx ends.
func runMCP(ctx context.Context, o mcpOptions, stdout, stderr io.Writer) error {
	profile, deny := o.profile, o.deny
	if o.check {
		access, err := agent.Check(profile, deny)
		if err != nil {
			return usagef("%v", err)
		}
		printAccess(stdout, access)
		_, cfg, err := openProjectAt(o.project) // [agent] defaults, when there is a project
		if err != nil {
			cfg = project.Defaults()
		}
		loop, err := mcpLoopConfig(o.loop, cfg)
		if err != nil {
			return err
		}
		printLoop(stdout, loop)
		return nil
	}
	return serveMCP(ctx, o, stdout, stderr)
}

func printAccess(w io.Writer, a *agent.ToolAccess) {
	fmt.Fprintf(w, "profile: %s\n", a.Profile)
	if len(a.Denied) > 0 {
		fmt.Fprintf(w, "deny-tool: %s\n", strings.Join(a.Denied, ", "))
	}
	fmt.Fprintf(w, "served (%d):\n", len(a.ServedNames()))
	for _, n := range a.ServedNames() {
		fmt.Fprintf(w, "  %s\n", n)
	}
	fmt.Fprintf(w, "refused (%d):\n", len(a.RefusedNames()))
	for _, n := range a.RefusedNames() {
		fmt.Fprintf(w, "  %-20s [%s]\n", n, a.Refused(n))
	}
}

// serveMCP wires the backends and serves stdio until stdin closes, or
// HTTP until SIGTERM.
func serveMCP(ctx context.Context, o mcpOptions, stdout, stderr io.Writer) error {
	profile, deny := o.profile, o.deny
	if err := refuseOperatorKey(); err != nil { // keys.go: before any worker inherits the environment
		return err
	}
	if _, err := agent.Check(profile, deny); err != nil {
		return usagef("%v", err)
	}
	maxMessage, err := parseSize(o.maxMessage)
	if err != nil {
		return usagef("--max-message: %v", err)
	}
	httpAddr := o.http.addr
	if err := checkHTTPFlags(o.http); err != nil {
		return err
	}
	p, cfg, perr := openProjectAt(o.project)
	hasProject := perr == nil
	if perr != nil && !errors.Is(perr, project.ErrNoProject) {
		return perr // a project that exists but is broken is reported, never ignored
	}
	if !hasProject {
		cfg = project.Defaults()
	}
	opts := agent.Options{
		Profile: profile, Deny: deny, Version: buildVersion(),
		NewID: command.NewID, Stderr: stderr, // wk-<uuidv7> client order ids, as the write tools document
		DataService: "embedded (the project's history store)",
		MaxMessage:  maxMessage,
	}
	b := agent.Backends{Config: cfg}
	if hasProject {
		b.Project = &p
	}
	// Strategy code runs only in worker processes of this binary.
	pool, err := researchPool(cfg) // a dead worker is explained by the error it causes; its stderr is not logged
	if err != nil {
		return err
	}
	defer pool.Close()
	b.Strategies = pool
	var rec research.Recorder
	if hasProject {
		l, closeLedger := openLedgerFile(stderr, p, "wicket mcp")
		defer closeLedger()
		if l != nil {
			rec, b.Ledger = l, l
		}
	}
	switch addr := o.addr; {
	case addr != "":
		client, err := dataClient(addr, b.Project)
		if err != nil {
			return err
		}
		b.Research = client
		opts.DataService = "wicket data serve at " + addr
	case hasProject:
		local, closeCluster, err := o.research(p, cfg, pool, rec)
		if err != nil {
			return err
		}
		defer closeCluster()
		b.Research = local
	}

	// Tracing.
	traceDir := o.traceDir
	if o.trace {
		if traceDir != "" {
			return usagef("give --trace or --trace-dir, not both")
		}
		if !hasProject {
			return usagef("--trace needs a project: %v; or give --trace-dir DIR", perr)
		}
		traceDir = p.TraceDir()
	}
	if traceDir != "" {
		w, err := trace.Open(traceDir, trace.Options{Stderr: stderr})
		if err != nil {
			return fmt.Errorf("open the trace: %w", err)
		}
		defer w.Close()
		opts.Trace, opts.TraceDir = w, traceDir
	}

	// The node, with keys resolved once: environment, then secrets.env.
	if addr := o.node; addr != "" {
		opts.NodeAddr = addr
		client, err := mcpNodeClient(addr, b.Project) // agent_key.go
		if err != nil {
			b.NodeErr = err
			fmt.Fprintf(stderr, "wicket mcp: the node tools will answer with this error: %v\n", err)
		} else {
			b.Node = client
		}
	}

	loop, closeLoop, err := mcpLoop(o.loop, cfg, b.Project) // mcp_loop.go
	if err != nil {
		return err
	}
	defer closeLoop()
	opts.Loop = loop

	if httpAddr != "" {
		var callers *front.Callers
		if !o.http.noAuth {
			if !hasProject {
				return usagef("--http needs a project for its callers (settings/%s): %v; or serve one local operator with --no-auth", front.CallersFile, perr)
			}
			if callers, err = front.LoadCallers(callersPath(p)); err != nil {
				return err
			}
			if fi, err := os.Stat(callersPath(p)); err == nil && runtime.GOOS != "windows" {
				switch perm := fi.Mode().Perm(); {
				case perm&0o022 != 0:
					// Whoever can write the file can add a caller of their own.
					return usagef("%s is writable by others (mode %o): anyone who can write it can add a caller; chmod 600 it", callersPath(p), perm)
				case perm&0o044 != 0:
					fmt.Fprintf(stderr, "wicket mcp: warning: %s is readable by others (mode %o); it holds token hashes: chmod 600 it\n", callersPath(p), perm)
				}
			}
		}
		var oauth *front.OAuth
		if cfg.Agent.OAuth != nil && !o.http.noAuth {
			// wicket.toml [agent.oauth]: JWT access tokens as well (agent/front/oauth.go).
			if oauth, err = front.NewOAuth(ctx, *cfg.Agent.OAuth, front.OAuthOptions{Project: &p}); err != nil {
				var ue *agent.UsageError
				if errors.As(err, &ue) {
					return usagef("%v", err)
				}
				return err
			}
		}
		return serveHTTP(ctx, opts, b, o.http, callers, oauth, stderr)
	}

	srv, err := agent.New(opts, b)
	if err != nil {
		var ue *agent.UsageError
		if errors.As(err, &ue) {
			return usagef("%v", err)
		}
		return err
	}
	fmt.Fprintf(stderr, "wicket mcp: serving profile %s (%d tools served, %d refused), approval %s, budgets %s, session %s\n",
		profile, len(srv.Access().ServedNames()), len(srv.Access().RefusedNames()), loop.Approval, loop.Budget, srv.Session())
	return srv.Serve(ctx, o.stdin, stdout)
}
