package main

import (
	"fmt"
	"sync"

	"github.com/urfave/cli/v2"

	"wicket/strategy/history"
	"wicket/strategy/provider"
	"wicket/strategy/provider/binance"
)

func dataRecordCommand() *cli.Command {
	return &cli.Command{
		Name:      "record",
		Usage:     "record a live tape: append each bar of the series as it closes, from the provider's stream, until stopped (Ctrl-C)",
		ArgsUsage: "SYMBOL@GRANULARITY... [--provider binance]",
		Description: "Subscribes to Binance's public kline stream for each series and appends every closed bar, logging one " +
			"line per bar to stderr. After a disconnect it reconnects with backoff (1 s doubling to 60 s) and back-fills " +
			"the missed bars over REST, so the stored series has no hole and no bar twice; an existing series is first " +
			"brought up to date the same way. Ctrl-C or SIGTERM stops it cleanly, keeping every stored bar. " +
			"The endpoint is [providers.binance] stream_url in wicket.toml. Alpaca's stream is not supported yet.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "provider", Value: binance.Name, Usage: "the live stream: binance"},
		},
		Action: func(c *cli.Context) error {
			args, err := trailingFlags(c)
			if err != nil {
				return err
			}
			if len(args) == 0 {
				return usagef("data record needs at least one series, e.g. wicket data record BTC-USD@1m")
			}
			for _, s := range args {
				if _, _, err := history.CheckSeries(s); err != nil {
					return usageError{err}
				}
			}
			switch name := c.String("provider"); name {
			case binance.Name:
			case "alpaca":
				return usagef("--provider alpaca: recording from Alpaca's stream is not supported yet; record crypto pairs with --provider binance, or fetch Alpaca bars with `wicket data fetch --provider alpaca`")
			default:
				return usagef("--provider %q is not one of binance", name)
			}
			p, cfg, err := openProject(c)
			if err != nil {
				return err
			}
			ps, err := newProviderSet(p, cfg, c.App.ErrWriter)
			if err != nil {
				return err
			}
			store, err := history.Open(p.HistoryPath())
			if err != nil {
				return err
			}
			defer store.Close()
			src := ps.binance()
			for _, s := range args {
				sym, _, _ := history.CheckSeries(s)
				if _, err := src.Symbol(sym); err != nil {
					return usageError{err}
				}
			}
			fmt.Fprintf(c.App.ErrWriter, "recording %d series from binance; Ctrl-C stops\n", len(args))
			var mu sync.Mutex // one goroutine per series logs
			err = provider.Record(c.Context, store, src, src, args, provider.RecordOptions{
				Log: func(line string) {
					mu.Lock()
					defer mu.Unlock()
					fmt.Fprintln(c.App.ErrWriter, line)
				},
			})
			if err != nil {
				return fmt.Errorf("data record: %w", err)
			}
			fmt.Fprintln(c.App.ErrWriter, "recording stopped; every bar received is stored")
			return nil
		},
	}
}
