package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"wicket/strategy/history"
	"wicket/strategy/provider"
)

func dataFetchCommand() *cli.Command {
	return &cli.Command{
		Name:      "fetch",
		Usage:     "download closed bars from a market data provider (binance, alpaca) into the history store, incrementally",
		ArgsUsage: "SYMBOL@GRANULARITY... [--provider binance|alpaca] [--from T] [--to T] [--full]",
		Description: "A fetch resumes after the last stored bar of each series and commits every page as it arrives, so a " +
			"stopped fetch (Ctrl-C) keeps what it got and the next one resumes. Only closed bars are stored. --full " +
			"re-downloads the range and replaces it in one transaction. Without --from a first fetch goes back " +
			"7 days (1m), 60 days (5m), 180 days (15m), 2 years (1h), 5 years (4h) or 10 years (1d).\n\n" +
			"The provider defaults to the one the series came from, else binance for a pair (BTC-USD is BTCUSDT) and " +
			"alpaca for a stock ticker (SPY). Alpaca stock bars need WICKET_ALPACA_KEY_ID and WICKET_ALPACA_SECRET_KEY " +
			"(environment or settings/secrets.env); crypto needs no key. Endpoints: [providers.NAME] base_url in wicket.toml.\n\n" +
			"Times: RFC3339 (2024-01-02T15:00:00Z), a date (2024-01-02, UTC) or unix seconds; --to is inclusive.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "provider", Usage: "binance or alpaca (default: the series' own, else binance for a pair and alpaca for a ticker)"},
			&cli.StringFlag{Name: "from", Usage: "first bar's open time"},
			&cli.StringFlag{Name: "to", Usage: "last bar's open time (default: the last closed bar)"},
			&cli.BoolFlag{Name: "full", Usage: "re-download the range and replace it instead of resuming"},
		},
		Action: func(c *cli.Context) error {
			args, err := seriesArgs(c, "fetch", "BTC-USD@1h")
			if err != nil {
				return err
			}
			from, err := timeFlag("from", c.String("from"))
			if err != nil {
				return err
			}
			to, err := timeFlag("to", c.String("to"))
			if err != nil {
				return err
			}
			if !from.IsZero() && !to.IsZero() && to.Before(from) {
				return usagef("--to %s is before --from %s", to.Format(time.RFC3339), from.Format(time.RFC3339))
			}
			p, cfg, err := openProject(c)
			if err != nil {
				return err
			}
			ps, store, err := providerStore(p, cfg, c.App.ErrWriter)
			if err != nil {
				return err
			}
			defer store.Close()
			failed := 0
			for _, series := range args {
				if err := fetchOne(c, store, ps, series, from, to); err != nil {
					if c.Context.Err() != nil {
						return fmt.Errorf("data fetch %s: stopped; the pages committed so far are kept, run the fetch again to resume", series)
					}
					failed++
					fmt.Fprintf(c.App.ErrWriter, "wicket: data fetch %s: %v\n", series, err)
				}
			}
			if failed > 0 {
				return fmt.Errorf("data fetch: %d of %d series failed (see above)", failed, len(args))
			}
			return nil
		},
	}
}

func fetchOne(c *cli.Context, store *history.Store, ps providerSet, series string, from, to time.Time) error {
	sym, _, _ := history.CheckSeries(series)
	var infoPtr *history.SeriesInfo
	info, err := store.Info(series)
	var he *history.Error
	switch {
	case err == nil:
		infoPtr = &info
	case errors.As(err, &he) && he.Kind == history.KindNotFound:
	default:
		return err
	}
	name, err := ps.pick(c.String("provider"), sym, infoPtr)
	if err != nil {
		return err
	}
	bar := newFetchBar(c.App.ErrWriter, isTerminal(c.App.ErrWriter))
	res, err := provider.Fetch(c.Context, store, ps.source(name), series, provider.FetchOptions{
		From: from, To: to, Full: c.Bool("full"), Progress: bar.update,
	})
	bar.done()
	if err != nil {
		if res.Added > 0 {
			fmt.Fprintf(c.App.Writer, "%s: %d bars committed before the error (through %s)\n", series, res.Added, res.Last.Format(time.RFC3339))
		}
		return err
	}
	fmt.Fprintln(c.App.Writer, fetchSummary(res))
	return nil
}

// fetchSummary is a fetch's one-line result.
func fetchSummary(r provider.FetchResult) string {
	src := r.Provider + " " + r.ProviderSymbol
	if r.Added == 0 {
		return fmt.Sprintf("%s: up to date from %s; nothing new to add", r.Series, src)
	}
	verb := "added"
	if r.Replaced {
		verb = "replaced with"
	}
	return fmt.Sprintf("%s: %s %s from %s (%s to %s) in %s; %s", r.Series, verb, history.Plural(r.Added, "bar"), src,
		r.First.Format(time.RFC3339), r.Last.Format(time.RFC3339), history.Plural(r.Pages, "page"), r.Gaps)
}
