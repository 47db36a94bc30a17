package main

import (
	"context"
	"crypto/ed25519"
	"log/slog"
	"path/filepath"
	"time"
	"wicket/deploy"
	"wicket/internal/project"
	"wicket/node"
	"wicket/node/server"
	"wicket/strategy"
	"wicket/strategy/history"
)

// deployments is what `wicket node serve` runs its deployments with.
type deployments struct {
	handler *deploy.Handler
	start   func(ctx context.Context, srv *server.Server) // once the node is up
}

// nodeDeployments builds the deployments' surface and, when the project
// has strategies, the runner behind it: the worker pool research uses,
// the history store for warm-up, and the node's in-process connection
// (server.Local, acting as the control key) for the one write path.
// Without strategies the surface says the node runs none.
func nodeDeployments(p project.Project, cfg project.Config, bars string, tape *deploy.TapeRun, operator ed25519.PublicKey, log *slog.Logger) (*deployments, func(), error) {
	h := deploy.NewHandler()
	out := &deployments{handler: h, start: func(context.Context, *server.Server) {}}
	stars, _ := filepath.Glob(filepath.Join(p.StrategiesDir(), "*.star"))
	if len(stars) == 0 {
		return out, func() {}, nil
	}
	store, err := deploy.OpenStore(filepath.Join(p.StateDir(), "deployments.db"))
	if err != nil {
		return nil, nil, err
	}
	pool, err := researchPool(cfg)
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	// With --bars tape every deployment reads the recorded tape (a
	// wicket data record beside the node, or a test, appends it): the
	// node records nothing itself.
	candles, closeCandles, err := (*deploy.Candles)(nil), func() {}, error(nil)
	if bars != barsTape {
		candles, closeCandles, err = nodeCandles(p, cfg, log) // node_candles.go
	}
	if err != nil {
		pool.Close()
		store.Close()
		return nil, nil, err
	}
	closeAll := func() { pool.Close(); closeCandles(); store.Close() }
	h.Starting()
	out.start = func(ctx context.Context, srv *server.Server) {
		conn, err := srv.Local(node.KeyControl) // in process, acting as the control key; no HTTP to itself
		if err != nil {
			h.Failed()
			log.Error("deployments: no connection to the node", "err", err)
			return
		}
		dc := deploy.Config{Project: cfg, Store: store, Node: conn, Strategies: pool,
			IndicatorsDir: p.IndicatorsDir(), OperatorKey: operator, Logger: log,
			Research: localResearch(p, cfg, pool, nil), Candles: candles,
			History: historyWarmup(p.HistoryPath()), FundingRates: deploy.StoredFunding(p.HistoryPath()),
			Plans: ledgerPlans{p: p}, // node_plans.go
			Bars: func(vc project.Venue, series string) deploy.BarSource {
				if tape != nil && tape.Plays(series) && !vc.Real() && vc.Marks == "" { // node_tape.go
					return tape.Source()
				}
				if bars == barsTape {
					return &deploy.TapeBars{Read: historyTape(p.HistoryPath()), Every: tapePoll}
				}
				return &deploy.MarkBars{Node: conn, Venue: vc.Name, Every: time.Second, Now: time.Now}
			}}
		if tape != nil { // on the tape's clock
			dc.Now, dc.NextOpen = tape.Clock.Now, tape.NextOpen
		}
		r, err := deploy.New(ctx, dc)
		if err != nil {
			h.Failed()
			log.Error("deployments did not start", "err", err)
			return
		}
		h.Attach(r)
		r.Start(ctx)
		log.Info("deployments running", "count", len(r.List()))
	}
	return out, closeAll, nil
}

// historyTape reads the recorded tape of a series from the history store
// at path: the bars `wicket data record` appended after a time, or the
// latest one. A store or series not there yet has no bars.
func historyTape(path string) deploy.TapeRead {
	return func(ctx context.Context, series string, after time.Time) (strategy.Bars, error) {
		none := strategy.Bars{Series: series}
		store, err := history.OpenReadOnly(path)
		if err != nil {
			if history.IsNotFound(err) {
				return none, nil
			}
			return none, err
		}
		defer store.Close()
		info, err := store.Info(series)
		if err != nil {
			if history.IsNotFound(err) {
				return none, nil
			}
			return none, err
		}
		if info.Bars == 0 || !info.Last.After(after) {
			return none, nil
		}
		from, to := info.Last, info.Last
		if !after.IsZero() {
			g := info.Granularity.Duration()
			from = after.Add(g)
			if lim := from.Add(time.Duration(tapePage-1) * g); lim.Before(to) {
				to = lim
			}
		}
		return store.Load(series, from, to)
	}
}

// historyWarmup reads warm-up bars from the history store at path.
func historyWarmup(path string) deploy.History {
	return func(ctx context.Context, series string, before time.Time, n int) (strategy.Bars, error) {
		store, err := history.OpenReadOnly(path)
		if err != nil {
			if history.IsNotFound(err) {
				return strategy.Bars{Series: series}, nil
			}
			return strategy.Bars{}, err
		}
		defer store.Close()
		_, g, err := strategy.ParseSeries(series)
		if err != nil {
			return strategy.Bars{}, err
		}
		b, err := store.Load(series, before.Add(-time.Duration(n+1)*g.Duration()), before.Add(-g.Duration()))
		if err != nil {
			if history.IsNotFound(err) {
				return strategy.Bars{Series: series}, nil
			}
			return strategy.Bars{}, err
		}
		if b.Len() > n {
			b = b.Slice(b.Len()-n, b.Len())
		}
		return b, nil
	}
}
