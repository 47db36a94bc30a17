package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/shopspring/decimal"
	"github.com/urfave/cli/v2"

	"wicket/internal/project"
	"wicket/node/paper"
	"wicket/node/server"
	"wicket/strategy/history"
)

func nodeCommand() *cli.Command {
	return &cli.Command{
		Name:  "node",
		Usage: "run the trading node (paper and real venues, signed HTTP API, durable journal), and arm or disarm its real venues",
		Subcommands: append([]*cli.Command{{
			Name:  "serve",
			Usage: "run the node from this project until interrupted",
			Description: "Serves the node's signed HTTP/JSON API for the venues in wicket.toml, with the journal at " +
				"settings/state/node.db. Keys come from WICKET_NODE_OBSERVE_KEY and WICKET_NODE_CONTROL_KEY in the " +
				"environment, then settings/secrets.env. Marks start at each symbol's last SYMBOL@1h close in the " +
				"history store (else the venue's start_prices, else 100) and follow a seeded random walk, or the " +
				"closes of --replay SERIES; a paper venue with marks = \"binance\" or \"alpaca\" in wicket.toml takes " +
				"the provider's last trade price instead, polled every " + markPoll.String() + " (orders still fill on paper). On start it prints `wicket node: listening on HOST:PORT` on stderr.",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "listen", Usage: "host:port to listen on (default: wicket.toml [node] address); port 0 picks a free one"},
				&cli.StringSliceFlag{Name: "replay", Usage: "drive SYMBOL's marks with the closes of `SERIES` (e.g. BTC-USD@1h) from the history store; several series: repeat the flag or give a comma list (BTC-USD@1m,ETH-USD@1m; with --from, a portfolio's universe on one calendar)"},
				&cli.StringFlag{Name: "from", Usage: "with --replay: play the recorded tape from `T` (2026-03-01 or RFC 3339) on its own clock: deployments warm up from the bars before T, trade each bar at its close and fill on paper at the tape's prices by the backtest's rules (node_tape.go)"},
				&cli.StringFlag{Name: "speed", Usage: "with --from: tape time per wall time, `S` (60: a 1m bar a second; the default), or max (as fast as the deployments keep up)"},
				&cli.BoolFlag{Name: "allow-remote", Usage: "allow a listen address that is not loopback (anyone who can reach it and holds a key can trade)"},
				&cli.DurationFlag{Name: "tick", Value: time.Second, Usage: "interval between mark steps; 0 keeps marks still"},
				&cli.StringFlag{Name: "log", Usage: "append the node's log lines to `FILE` (e.g. settings/state/node.log) instead of stderr"},
				&cli.BoolFlag{Name: "allow-live", Usage: "let an operator arm venues whose environment is live (real money) with wicket node arm; without it they stay disarmed"},
				&cli.DurationFlag{Name: "venue-timeout", Value: server.DefaultVenueTimeout, Usage: "bound on one call to a real venue; an unanswered write stays pending and is reconciled, never resent"},
				&cli.StringFlag{Name: "bars", Value: barsMarks, Usage: "where deployments take their closed bars: marks (paper venues: the venue's marks aggregated to the series' granularity; real venues: the provider's candles, which the node records) or tape (every venue: the series' recorded tape in the history store, which a wicket data record beside the node appends; the node records nothing)"},
			},
			Action: func(c *cli.Context) error {
				if c.NArg() > 0 {
					return usagef("node serve takes no arguments, got %q", c.Args().First())
				}
				return runServeNode(c.Context, nodeOptions{
					project: c.String("project"), listen: c.String("listen"), replay: strings.Join(c.StringSlice("replay"), ","),
					allowRemote: c.Bool("allow-remote"), tick: c.Duration("tick"), logPath: c.String("log"),
					allowLive: c.Bool("allow-live"), venueTimeout: c.Duration("venue-timeout"), bars: c.String("bars"),
					from: c.String("from"), speed: c.String("speed"),
				}, c.App.Writer, c.App.ErrWriter)
			},
		}, nodeArmCommand(), nodeDisarmCommand(),
			nodeDeploymentsCommand(), nodeStopDeploymentCommand(), nodeResumeCommand(), nodeApproveProposalCommand(),
			nodeClearBreakerCommand(), nodeRotateOperatorKeyCommand(), nodeStatementCommand()}, nodeRiskCommands()...), // node_risk.go
	}
}

// nodeOptions is what wicket node serve works with, filled from its
// flags.
type nodeOptions struct {
	project     string // the --project flag
	listen      string // empty: wicket.toml [node] address
	replay      string // --replay's series, a comma list (replaySeries)
	allowRemote bool
	tick        time.Duration
	logPath     string // the log file; empty: stderr
	allowLive   bool
	// venueTimeout bounds one call to a real venue.
	venueTimeout time.Duration
	bars         string // deployments' bar source: barsMarks or barsTape
	from, speed  string // --from and --speed: replay's tape on its clock (node_tape.go)
}

// runServeNode serves the node until ctx ends; its notes and (without
// --log) its log go to stderr, nothing to stdout.
func runServeNode(ctx context.Context, o nodeOptions, _, stderr io.Writer) error {
	p, cfg, err := openProjectAt(o.project)
	if err != nil {
		return err
	}
	if o.tick < 0 {
		return usagef("--tick %s is negative; give an interval such as 1s, or 0 to keep marks still", o.tick)
	}
	if o.bars != barsMarks && o.bars != barsTape {
		return usagef("--bars %q: give marks or tape", o.bars)
	}
	if o.listen == "" {
		o.listen = cfg.Node.Address
	}
	return serveNode(ctx, p, cfg, o, stderr)
}

// serveNode is runServeNode once the project is open and the options
// checked.
func serveNode(ctx context.Context, p project.Project, cfg project.Config, o nodeOptions, stderr io.Writer) error {
	logTo := stderr
	if o.logPath != "" {
		f, err := os.OpenFile(o.logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return fmt.Errorf("--log: %w", err)
		}
		defer f.Close()
		fmt.Fprintf(stderr, "wicket node: logging to %s\n", o.logPath)
		logTo = f
	}
	log := slog.New(slog.NewTextHandler(logTo, &slog.HandlerOptions{Level: slog.LevelInfo}))
	observe, control, err := nodeKeys(&p)
	if err != nil {
		return err
	}
	agent, err := agentKey(&p) // agent_key.go
	if err != nil {
		return err
	}
	operator, err := p.OperatorPublic() // arming is verified with it (node_arming.go)
	if errors.Is(err, project.ErrNoOperatorKey) {
		for _, vc := range cfg.Venues {
			if vc.Real() {
				log.Warn("no operator key: real venues cannot be armed", "why", err.Error())
				break
			}
		}
	} else if err != nil {
		return err
	}
	tape, err := nodeTape(p, cfg, o, log) // node_tape.go; nil: the wall clock
	if err != nil {
		return err
	}
	now, replay := time.Now, o.replay
	if tape != nil {
		now, replay = tape.Clock.Now, ""
	}
	feed, err := nodeFeed(p, cfg, replay, log)
	if err != nil {
		return err
	}
	if tape != nil {
		feed.Tape, o.tick = tape.Tape, 0 // the tape takes the mark steps
	}
	if o.venueTimeout <= 0 {
		o.venueTimeout = server.DefaultVenueTimeout
	}
	exchanges, err := venueExchanges(&p, cfg, o.venueTimeout)
	if err != nil {
		return err
	}
	ctx, stopMarks := context.WithCancel(ctx)
	defer stopMarks()
	marks, err := nodeMarks(ctx, p, cfg, o.tick, time.Now, log, logTo)
	if err != nil {
		return err
	}
	ln, err := server.Listen(o.listen, o.allowRemote)
	var le *server.ListenError
	if errors.As(err, &le) {
		return usageError{err}
	}
	if errors.Is(err, syscall.EADDRINUSE) {
		// Every command finds the node at wicket.toml's [node] address, so
		// that is where a new port goes; --listen would move this node alone.
		return fmt.Errorf("listen on %s: %w: another process (perhaps another node) holds it; stop it, or set another port in wicket.toml's [node] address (every command reads it there)", o.listen, syscall.EADDRINUSE)
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(p.StateDir(), 0o755); err != nil {
		ln.Close()
		return err
	}
	deps, closeDeps, err := nodeDeployments(p, cfg, o.bars, tape, operator, log) // node_deployments.go
	if err != nil {
		ln.Close()
		return err
	}
	defer closeDeps()
	alerts, err := nodeAlerts(p, cfg, log) // node_alerts.go
	if err != nil {
		ln.Close()
		return err
	}
	defer alerts.Close()
	srv, err := server.New(server.Config{
		Project: cfg, JournalPath: p.JournalPath(), ObserveKey: observe, ControlKey: control, AgentKey: agent, Alerts: alerts,
		Feed: feed, Marks: marks, TickEvery: o.tick, Logger: log, Version: buildVersion(), Now: now, SignNow: time.Now,
		Exchanges: exchanges, AllowLive: o.allowLive, VenueTimeout: o.venueTimeout, OperatorKey: operator,
		Deployments: deps.handler,
	})
	if err != nil {
		ln.Close()
		return err
	}
	if o.allowRemote {
		log.Warn("listening beyond loopback: anyone who can reach this address and holds a key can use the node", "listen", ln.Addr().String())
	}
	for _, v := range cfg.Venues {
		if v.Real() {
			log.Warn("real venue starts disarmed", "venue", v.Name, "kind", v.Kind, "environment", v.Environment, "may_arm", v.MayArm,
				"arm", "an operator at a terminal: wicket node arm "+v.Name)
		}
	}
	fmt.Fprintf(stderr, "wicket node: listening on %s\n", ln.Addr())
	go deps.start(ctx, srv)
	if tape != nil {
		go playTape(ctx, tape, srv.Tick, log) // node_tape.go
	}
	err = srv.Serve(ctx, ln)
	log.Info("node stopped")
	return err
}

// nodeFeed builds the marks' inputs from the history store: each symbol
// starts at the last close of SYMBOL@1h when that series exists, and
// --replay drives each of its series' symbols with the series' closes.
// The node itself never reads the history store; it gets plain values.
func nodeFeed(p project.Project, cfg project.Config, replay string, log *slog.Logger) (paper.Feed, error) {
	feed := paper.Feed{Seed: 1, Start: map[string]decimal.Decimal{}}
	store, err := history.OpenReadOnly(p.HistoryPath())
	if err != nil {
		if replay != "" {
			return feed, fmt.Errorf("--replay %s: %w", replay, err)
		}
		if history.IsNotFound(err) {
			log.Info("no history store: marks start at start_prices or 100", "hint", "wicket data seed-demo")
			return feed, nil
		}
		return feed, err
	}
	defer store.Close()
	for _, v := range cfg.Venues {
		for _, s := range v.Symbols {
			if _, done := feed.Start[s]; done {
				continue
			}
			last, _, err := store.LastClose(s + "@1h")
			if err != nil || last <= 0 {
				continue
			}
			feed.Start[s] = decimal.NewFromFloat(last)
		}
	}
	if replay == "" {
		return feed, nil
	}
	series, err := replaySeries(replay)
	if err != nil {
		return feed, err
	}
	feed.Replay = map[string][]decimal.Decimal{}
	for _, sr := range series {
		symbol, _, _ := history.CheckSeries(sr)
		listed := false
		for _, v := range cfg.Venues {
			for _, s := range v.Symbols {
				listed = listed || s == symbol
			}
		}
		if !listed {
			return feed, usageError{fmt.Errorf("--replay %s: no venue in wicket.toml lists %s", sr, symbol)}
		}
		bars, err := store.Load(sr, time.Time{}, time.Time{})
		if err != nil {
			return feed, fmt.Errorf("--replay: %w", err)
		}
		closes := make([]decimal.Decimal, len(bars.Close))
		for i, c := range bars.Close {
			closes[i] = decimal.NewFromFloat(c)
		}
		feed.Replay[symbol] = closes
		log.Info("replaying closes", "series", sr, "bars", len(closes))
	}
	return feed, nil
}
