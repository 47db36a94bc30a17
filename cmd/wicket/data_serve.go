package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"wicket/internal/project"
	"wicket/strategy/research"
)

// defaultDataAddress is where `wicket data serve` listens by default.
const defaultDataAddress = "127.0.0.1:7878"

// minDataToken is the shortest bearer token a remote data service accepts.
const minDataToken = 16

func dataServeCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "serve the research API (list_series, list_strategies, backtest, sweep, walk-forward) over HTTP/JSON for wicket mcp --addr",
		Description: "Listens on loopback only, unless --allow-remote is given; then every request must carry the bearer " +
			"token WICKET_DATA_TOKEN (from the environment, else settings/secrets.env, at least 16 characters), and the " +
			"service refuses to start without one. It speaks plain HTTP and the token travels with every request: beyond " +
			"loopback, put it behind TLS. Strategies run in worker processes (research.workers, " +
			"research.worker_memory_mib). Sweeps and walk-forward analyses stream their progress as JSON lines and stop " +
			"when the client closes the request. Stops on Ctrl-C or SIGTERM.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "listen", Value: defaultDataAddress, Usage: "`HOST:PORT` to listen on (port 0 picks a free one)"},
			&cli.BoolFlag{Name: "allow-remote", Usage: "allow a non-loopback address; requires the bearer token WICKET_DATA_TOKEN"},
			clusterFlag(),
			insecureClusterFlag(),
		},
		Action: dataServeAction,
	}
}

func dataServeAction(c *cli.Context) error {
	if c.Args().Present() {
		return usagef("data serve takes no arguments, got %q (usage: wicket data serve [--listen 127.0.0.1:7878] [--allow-remote])", c.Args().First())
	}
	o := dataServeOptions{
		project: c.String("project"), listen: c.String("listen"), allowRemote: c.Bool("allow-remote"),
		research: clusteredResearchOf(c),
	}
	return runDataServe(c.Context, o, c.App.Writer, c.App.ErrWriter)
}

// dataServeOptions is what wicket data serve works with, filled from its
// flags.
type dataServeOptions struct {
	project     string // the --project flag
	listen      string // HOST:PORT
	allowRemote bool
	research    researchEngine
}

// runDataServe serves the research API on o.listen until ctx ends.
func runDataServe(ctx context.Context, o dataServeOptions, _, stderr io.Writer) error {
	listen, allowRemote := o.listen, o.allowRemote
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return usagef("--listen %q: give HOST:PORT, e.g. 127.0.0.1:7878", listen)
	}
	if !allowRemote && !isLoopbackHost(host) {
		return usagef("--listen %s is not a loopback address; the data service listens on loopback (127.0.0.1, ::1, localhost) unless you pass --allow-remote, which also requires the bearer token %s", listen, project.KeyData)
	}
	p, cfg, err := openProjectAt(o.project)
	if err != nil {
		return err
	}
	opts := research.ServerOptions{Log: slog.New(slog.NewTextHandler(stderr, nil))}
	if allowRemote {
		secrets, err := p.Secrets(os.LookupEnv)
		if err != nil {
			return err
		}
		token, _, ok := secrets.Lookup(project.KeyData)
		switch {
		case !ok:
			return fmt.Errorf("--allow-remote needs a bearer token: set %s in the environment or in %s (`wicket secrets list` shows what is found)", project.KeyData, p.SecretsPath())
		case len(token) < minDataToken:
			return fmt.Errorf("%s is shorter than %d characters; use a long random value (e.g. `openssl rand -hex 32`)", project.KeyData, minDataToken)
		}
		opts.Token = token
	}

	pool, err := researchPool(cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	rec, closeLedger := openLedger(stderr, p, "wicket data serve")
	defer closeLedger()
	local, closeCluster, err := o.research(p, cfg, pool, rec)
	if err != nil {
		return err
	}
	defer closeCluster()

	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("data serve: %w", err)
	}
	if a, ok := ln.Addr().(*net.TCPAddr); ok && !allowRemote && !a.IP.IsLoopback() {
		ln.Close()
		return usagef("--listen %s resolved to %s, which is not loopback; pass --allow-remote (with %s) to serve beyond this machine", listen, a.IP, project.KeyData)
	}
	// Requests run under base: shutting down cancels the sweeps in flight,
	// which return what finished.
	base, stopAll := context.WithCancel(context.WithoutCancel(ctx))
	defer stopAll()
	srv := &http.Server{
		Handler:           research.NewServer(local, opts),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          slog.NewLogLogger(opts.Log.Handler(), slog.LevelWarn),
	}
	access := "loopback only"
	if allowRemote {
		access = "bearer token required"
	}
	fmt.Fprintf(stderr, "wicket data serve: serving the research API of %s on http://%s (%s); Ctrl-C stops\n", p.Root, ln.Addr(), access)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("data serve: %w", err)
	case <-ctx.Done():
	}
	stopAll()
	stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(stopCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("data serve: shut down: %w", err)
	}
	fmt.Fprintln(stderr, "wicket data serve: stopped")
	return nil
}

// isLoopbackHost reports whether a listen host is loopback: a loopback IP
// or "localhost". An empty host (every interface) and other names are not.
func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
