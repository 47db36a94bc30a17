package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/urfave/cli/v2"

	"wicket/internal/project"
	"wicket/strategy/history"
)

func demoCommand() *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "run the whole loop end to end in a temporary project: research, a gated order, a refusal, the trace",
		Description: "Creates a temporary project, seeds the demo series, starts a paper node on an ephemeral loopback " +
			"port, runs `wicket mcp --trace` as a child and drives it with an MCP client through templates, validation, " +
			"knobs, a backtest, a sweep, a walk-forward, a snapshot, a preview, a confirmed order, a token replay and a " +
			"write refused by a second, read-only server. It prints a transcript, then `wicket trace stats` for the " +
			"session, cleans up, and exits 0 only if every step behaved as expected.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "keep", Usage: "keep the temporary project (its path is printed) instead of removing it"},
			&cli.DurationFlag{Name: "timeout", Value: 5 * time.Minute, Usage: "give up after this long"},
			&cli.StringFlag{Name: "docs", Usage: "instead of the loop, call every tool once and write the MCP tool reference to `FILE` (make docs)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("demo takes no arguments, got %q", c.Args().First())
			}
			o := demoOptions{keep: c.Bool("keep"), timeout: c.Duration("timeout"), docs: c.String("docs")}
			return runDemo(c.Context, o, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// demoOptions is what wicket demo works with, filled from its flags.
type demoOptions struct {
	keep    bool          // keep the temporary project
	timeout time.Duration // give up after this long
	docs    string        // write the MCP tool reference to this file instead of the loop
	// exe is the wicket binary the demo runs as its node and servers;
	// empty: this process's own executable.
	exe string
}

// demo is one run of `wicket demo`.
type demo struct {
	out     io.Writer
	exe     string
	proj    project.Project
	node    string // address
	session string // the traced server's session id
	failed  []string
}

// runDemo runs the whole loop in a temporary project, or with o.docs
// writes the MCP tool reference.
func runDemo(ctx context.Context, o demoOptions, stdout, stderr io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	keep, docsPath, exe := o.keep, o.docs, o.exe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return fmt.Errorf("locate the wicket binary: %w", err)
		}
	}
	dir, err := os.MkdirTemp("", "wicket-demo-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Fprintf(stderr, "demo project kept at %s\n", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	d := &demo{out: stdout, exe: exe}
	d.section("Set-up")
	d.proj, err = project.Init(filepath.Join(dir, "project"), rand.Reader)
	if err != nil {
		return err
	}
	d.say("project      %s", d.proj.Root)
	if err := d.seed(ctx); err != nil {
		return err
	}
	if docsPath != "" {
		if err := d.writeDocsStrategy(); err != nil {
			return err
		}
		if err := d.writeDocsTape(ctx); err != nil {
			return err
		}
	}
	stop, err := d.startNode(ctx)
	if err != nil {
		return err
	}
	defer stop()
	d.say("paper node   %s (wicket node serve)", d.node)

	agentSession, err := d.startMCP(ctx, "--trace", "--node", d.node)
	if err != nil {
		return err
	}
	defer agentSession.Close()
	if docsPath != "" {
		return d.docs(ctx, agentSession, docsPath)
	}
	d.loop(ctx, agentSession)
	agentSession.Close()

	d.section("Trace review: wicket trace stats --session " + d.session) // in full: session ids are uuidv7, so two started together share a short prefix
	stats := exec.CommandContext(ctx, d.exe, "--project", d.proj.Root, "trace", "stats", "--session", d.session)
	stats.Env, stats.Stdout, stats.Stderr = demoEnv(), d.out, stderr
	if err := stats.Run(); err != nil {
		d.fail("wicket trace stats: %v", err)
	}

	fmt.Fprintln(d.out)
	if len(d.failed) > 0 {
		return fmt.Errorf("demo: %d step(s) did not behave as expected: %s", len(d.failed), strings.Join(d.failed, "; "))
	}
	fmt.Fprintln(d.out, "demo: every step behaved as expected")
	return nil
}

func (d *demo) section(title string) { fmt.Fprintf(d.out, "\n== %s\n", title) }

func (d *demo) say(format string, a ...any) { fmt.Fprintf(d.out, "  "+format+"\n", a...) }

func (d *demo) fail(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	d.failed = append(d.failed, msg)
	fmt.Fprintf(d.out, "  FAILED: %s\n", msg)
}

// seed writes the demo series into the project's history store.
func (d *demo) seed(ctx context.Context) error {
	store, err := history.Open(d.proj.HistoryPath())
	if err != nil {
		return err
	}
	defer store.Close()
	results, err := history.SeedDemo(ctx, store)
	if err != nil {
		return err
	}
	bars := 0
	for _, r := range results {
		bars += r.Bars
	}
	d.say("demo data    %d series, %d bars (wicket data seed-demo)", len(results), bars)
	return nil
}

// startNode runs `wicket node serve` on an ephemeral loopback port.
func (d *demo) startNode(ctx context.Context) (func(), error) {
	cmd := exec.CommandContext(ctx, d.exe, "--project", d.proj.Root, "node", "serve", "--listen", "127.0.0.1:0")
	cmd.Env = demoEnv()
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the node: %w", err)
	}
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "wicket node: listening on "); ok {
				addr <- a
			}
		}
	}()
	select {
	case a := <-addr:
		d.node = a
		return stop, nil
	case <-time.After(30 * time.Second):
	case <-ctx.Done():
	}
	stop()
	return nil, errors.New("the node did not start listening within 30 s")
}

// demoEnv is the children's environment: the temporary project's own keys
// come from its secrets.env, never from the caller's environment.
func demoEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "WICKET_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// mcpSession is a `wicket mcp` child driven by mcp-go's client.
type mcpSession struct {
	*client.Client
	instructions string
}

// startMCP starts `wicket mcp` with args in the demo project.
func (d *demo) startMCP(ctx context.Context, args ...string) (*mcpSession, error) {
	argv := append([]string{"--project", d.proj.Root, "mcp"}, args...)
	c, err := client.NewStdioMCPClientWithOptions(d.exe, nil, argv, transport.WithCommandFunc(
		func(ctx context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Env = demoEnv()
			return cmd, nil
		}))
	if err != nil {
		return nil, fmt.Errorf("start wicket mcp: %w", err)
	}
	if err := c.Start(ctx); err != nil { // wires notification handlers
		c.Close()
		return nil, fmt.Errorf("start the MCP client: %w", err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "wicket-demo", Version: buildVersion()}
	init, err := c.Initialize(ctx, req)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("initialize wicket mcp: %w", err)
	}
	return &mcpSession{Client: c, instructions: init.Instructions}, nil
}

// demoCall is one tools/call with its decoded result.
type demoCall struct {
	res     *mcp.CallToolResult
	text    string
	obj     map[string]any
	isError bool
}

// call makes one tools/call and decodes its result.
func (s *mcpSession) call(ctx context.Context, tool string, args map[string]any) (demoCall, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := s.CallTool(ctx, req)
	if err != nil {
		return demoCall{}, err
	}
	dc := demoCall{res: res, isError: res.IsError}
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			dc.text = tc.Text
			break
		}
	}
	if !res.IsError {
		body := []byte(dc.text)
		if res.StructuredContent != nil { // a large result's text is a summary (agent/runs.go)
			body, _ = json.Marshal(res.StructuredContent)
		}
		_ = json.Unmarshal(body, &dc.obj)
	}
	return dc, nil
}

// short cuts an id for display.
func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
