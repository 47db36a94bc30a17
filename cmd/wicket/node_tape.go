package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"wicket/deploy"
	"wicket/internal/project"
	"wicket/internal/tapeclock"
	"wicket/node/paper"
	"wicket/strategy/history"
)

// wicket node serve --replay SERIES[,SERIES...] --from T [--speed S]: the
// node's clock follows a recorded tape (deploy.TapeRun), so deployments
// warm up from the bars before T and trade the tape's bars at S times
// their pace, filled on paper at the tape's prices by the backtest's
// rules. Several series play on one calendar, the union of their bar
// times: a portfolio deployment over them is forward-tested as its
// backtest runs it.

// parseTapeSpeed reads --speed: a factor above 0 (60: a 1m bar each
// second), or max (as fast as the deployments keep up, 0).
func parseTapeSpeed(s string) (float64, error) {
	if strings.EqualFold(s, "max") {
		return 0, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0) || v > 1e9 {
		return 0, usagef("--speed %q: %v", s, deploy.ErrTapeSpeed)
	}
	return v, nil
}

// parseTapeFrom reads --from: RFC 3339 (2026-03-01T00:00:00Z) or a UTC
// date (2026-03-01).
func parseTapeFrom(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, usagef("--from %q: give a time such as 2026-03-01T00:00:00Z or a UTC date such as 2026-03-01", s)
}

// nodeTape reads the tape of o.replay from o.from on out of the history
// store and makes its run (nil without --from and --speed: --replay then
// drives marks with closes, on the wall clock, as before).
func nodeTape(p project.Project, cfg project.Config, o nodeOptions, log *slog.Logger) (*deploy.TapeRun, error) {
	if o.from == "" && o.speed == "" {
		return nil, nil
	}
	if o.replay == "" {
		return nil, usagef("--from and --speed play a recorded tape: give its series with --replay SERIES (e.g. --replay BTC-USD@1m --from 2026-03-01 --speed 60)")
	}
	if o.from == "" {
		return nil, usagef("--speed plays the tape from a start: give --from T (e.g. --from 2026-03-01)")
	}
	from, err := parseTapeFrom(o.from)
	if err != nil {
		return nil, err
	}
	speed := 60.0
	if o.speed != "" {
		if speed, err = parseTapeSpeed(o.speed); err != nil {
			return nil, err
		}
	}
	series, err := replaySeries(o.replay)
	if err != nil {
		return nil, err
	}
	legs := make([]deploy.TapeSeries, len(series))
	for k, sr := range series {
		symbol, _, _ := history.CheckSeries(sr)
		listed := false
		for _, v := range cfg.Venues {
			listed = listed || (!v.Real() && v.Marks == "" && slices.Contains(v.Symbols, symbol))
		}
		if !listed {
			return nil, usagef("--replay %s: no simulated paper venue in wicket.toml lists %s (a venue with a marks key takes its provider's prices, not a tape)", sr, symbol)
		}
		for _, l := range legs[:k] {
			if l.Symbol == symbol {
				return nil, usagef("--replay %s and %s: both are %s; give one series per symbol", l.Series, sr, symbol)
			}
		}
		legs[k] = deploy.TapeSeries{Series: sr, Symbol: symbol}
	}
	store, err := history.OpenReadOnly(p.HistoryPath())
	if err != nil {
		return nil, fmt.Errorf("--replay %s: %w", o.replay, err)
	}
	defer store.Close()
	for k := range legs {
		if legs[k].Bars, err = store.Load(legs[k].Series, from, time.Time{}); err != nil {
			return nil, fmt.Errorf("--replay %s --from %s: %w", legs[k].Series, o.from, err)
		}
	}
	run := &deploy.TapeRun{Series: legs[0].Series, Symbol: legs[0].Symbol, Bars: legs[0].Bars, More: legs[1:], Tape: paper.NewTape(), Speed: speed}
	if err := run.Start(); err != nil {
		return nil, usageError{fmt.Errorf("--replay %s --from %s: %w", o.replay, o.from, err)}
	}
	run.Clock = tapeclock.New(run.Begins())
	log.Info("playing a recorded tape on its clock", "series", o.replay, "from", run.Clock.Now().Format(time.RFC3339), "bars", run.Len(),
		"speed", speedName(speed), "starts", "with the first deployment on it")
	return run, nil
}

// playTape plays run on the node once it serves, and says when it ended.
func playTape(ctx context.Context, run *deploy.TapeRun, tick func(context.Context) error, log *slog.Logger) {
	run.Step = tick
	if err := run.Run(ctx); err != nil {
		if ctx.Err() == nil {
			log.Error("the tape stopped", "series", run.Names(), "calendar_bars", run.Published(), "err", err)
		}
		return
	}
	log.Info("the tape ended; the node keeps serving at its last bar's close", "series", run.Names(), "calendar_bars", run.Published(),
		"clock", run.Clock.Now().Format(time.RFC3339))
}

// replaySeries reads --replay's comma list (the flag repeated, or one
// list): each a SYMBOL@GRANULARITY, none twice.
func replaySeries(list string) ([]string, error) {
	var out []string
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if _, _, err := history.CheckSeries(s); err != nil {
			return nil, usageError{fmt.Errorf("--replay: %w", err)}
		}
		if slices.Contains(out, s) {
			return nil, usagef("--replay %s is given twice: give each series once", s)
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, usagef("--replay %q names no series: give SYMBOL@GRANULARITY (e.g. BTC-USD@1m), several as a comma list", list)
	}
	return out, nil
}

// speedName is a speed as --speed spells it.
func speedName(v float64) string {
	if v == 0 {
		return "max"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}
