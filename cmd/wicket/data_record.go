package main

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/urfave/cli/v2"

	"wicket/strategy/history"
	"wicket/strategy/provider"
)

func dataRecordCommand() *cli.Command {
	return &cli.Command{
		Name:      "record",
		Usage:     "record a live tape: append each bar of the series as it closes, from the provider's stream, until stopped (Ctrl-C)",
		ArgsUsage: "SYMBOL@GRANULARITY... [--provider binance|alpaca]",
		Description: "Subscribes to the provider's live stream for each series (Binance's public kline stream, any " +
			"granularity; Alpaca's bar stream, 1m only and with the Alpaca key, crypto too) and appends every closed bar, " +
			"logging one line per bar to stderr. After a disconnect it reconnects with backoff and back-fills the missed " +
			"bars over REST, so the stored series has no hole and no bar twice; an existing series is first brought up " +
			"to date the same way. Ctrl-C or SIGTERM stops it cleanly, keeping every stored bar. The endpoints are " +
			"[providers.NAME] stream_url and base_url in wicket.toml. The provider defaults as for data fetch.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "provider", Usage: "binance or alpaca (default: the series' own, else binance for a pair, alpaca for a ticker)"},
		},
		Action: func(c *cli.Context) error {
			args, err := seriesArgs(c, "record", "BTC-USD@1m")
			if err != nil {
				return err
			}
			o := dataRecordOptions{project: c.String("project"), series: args, provider: c.String("provider")}
			return runDataRecord(c.Context, o, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// dataRecordOptions is what wicket data record works with, filled from its flags.
type dataRecordOptions struct {
	project  string   // the --project flag
	series   []string // SYMBOL@GRANULARITY each
	provider string   // binance or alpaca; empty: picked from the first series
}

// runDataRecord records each series' closed bars from the provider's stream until ctx ends.
func runDataRecord(ctx context.Context, o dataRecordOptions, stdout, stderr io.Writer) error {
	ps, store, err := providerStore(o.project, stderr)
	if err != nil {
		return err
	}
	defer store.Close()
	// One provider per run: the first series decides when --provider
	// is not given.
	sym0, _, _ := history.CheckSeries(o.series[0])
	var info0 *history.SeriesInfo
	if info, err := store.Info(o.series[0]); err == nil {
		info0 = &info
	}
	name, err := ps.pick(o.provider, sym0, info0)
	if err != nil {
		return err
	}
	src := ps.tape(name)
	for i, s := range o.series {
		if o.series[i], err = ps.canonicalSeries(store, name, s); err != nil {
			return err
		}
		sym, _, _ := history.CheckSeries(o.series[i])
		if _, err := src.Symbol(sym); err != nil {
			return usageError{err}
		}
	}
	fmt.Fprintf(stderr, "recording %d series from %s; Ctrl-C stops\n", len(o.series), name)
	var mu sync.Mutex // one goroutine per series logs
	err = provider.Record(ctx, store, src, src, o.series, provider.RecordOptions{
		Log: func(line string) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintln(stderr, line)
		},
	})
	if err != nil {
		return fmt.Errorf("data record: %w", err)
	}
	fmt.Fprintln(stderr, "recording stopped; every bar received is stored")
	return nil
}
