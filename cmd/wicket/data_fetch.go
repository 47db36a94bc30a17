package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"wicket/strategy/history"
	"wicket/strategy/provider"
	"wicket/strategy/provider/binance"
)

func dataFetchCommand() *cli.Command {
	return &cli.Command{
		Name:      "fetch",
		Usage:     "download closed bars from a market data provider (binance, alpaca) into the history store, incrementally",
		ArgsUsage: "SYMBOL@GRANULARITY... [--provider binance|alpaca] [--from T] [--to T] [--full] | --funding SYMBOL...",
		Description: "A fetch resumes after the last stored bar of each series and commits every page as it arrives, so a " +
			"stopped fetch (Ctrl-C) keeps what it got and the next one resumes. Only closed bars are stored. --full " +
			"re-downloads the range and replaces it in one transaction. Without --from a first fetch goes back " +
			"7 days (1m), 60 days (5m), 180 days (15m), 2 years (1h), 5 years (4h) or 10 years (1d).\n\n" +
			"The provider defaults to the one the series came from, else binance for a pair (BTC-USD is BTCUSDT) and " +
			"alpaca for a stock ticker (SPY). Alpaca stock bars need WICKET_ALPACA_KEY_ID and WICKET_ALPACA_SECRET_KEY " +
			"(environment or settings/secrets.env); crypto needs no key. Endpoints: [providers.NAME] base_url in wicket.toml.\n\n" +
			"--funding fetches the funding-rate history of each pair's Binance USDⓈ-M perpetual instead (BTC-USD or " +
			"BTC-USDT is BTCUSDT), stored beside the bars for backtests' funding cost; it resumes after the last stored " +
			"settlement and goes back 2 years on a first fetch. Endpoint: [providers.binance] futures_url.\n\n" +
			"Times: RFC3339 (2024-01-02T15:00:00Z), a date (2024-01-02, UTC) or unix seconds; --to is inclusive.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "provider", Usage: "binance or alpaca (default: the series' own, else binance for a pair and alpaca for a ticker)"},
			&cli.StringFlag{Name: "from", Usage: "first bar's open time"},
			&cli.StringFlag{Name: "to", Usage: "last bar, a `DATE` (through that day) or its open time (default: the last closed bar)"},
			&cli.BoolFlag{Name: "full", Usage: "re-download the range and replace it instead of resuming"},
			&cli.BoolFlag{Name: "funding", Usage: "fetch each SYMBOL's perpetual funding-rate history (binance USDⓈ-M) instead of bars"},
			&cli.BoolFlag{Name: "json", Usage: "print what each series' fetch added as one JSON array (also when one fails)"},
		},
		Action: func(c *cli.Context) error {
			args, err := trailingFlags(c)
			if err != nil {
				return err
			}
			o := dataFetchOptions{
				project: c.String("project"), args: args, provider: c.String("provider"),
				from: c.String("from"), to: c.String("to"), full: c.Bool("full"), funding: c.Bool("funding"),
				json: c.Bool("json"), now: time.Now,
			}
			return runDataFetch(c.Context, o, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// dataFetchOptions is what wicket data fetch works with, filled from its
// arguments and flags.
type dataFetchOptions struct {
	project  string   // the --project flag
	args     []string // the series, or with funding the pairs
	provider string   // --provider, empty for each series' default
	from     string
	to       string
	full     bool
	funding  bool             // fetch the pairs' funding rates instead of bars
	json     bool             // print []fetchedJSON instead of a line per series
	now      func() time.Time // the clock a funding fetch's range ends at
}

// runDataFetch fetches bars, or with o.funding funding rates, into the
// project's history store.
func runDataFetch(ctx context.Context, o dataFetchOptions, stdout, stderr io.Writer) error {
	if o.funding {
		return runFetchFunding(ctx, o, stdout, stderr)
	}
	if _, err := checkSeriesArgs(o.args, "fetch", "BTC-USD@1h"); err != nil {
		return err
	}
	from, to, err := fetchRange(o.from, o.to)
	if err != nil {
		return err
	}
	ps, store, err := providerStore(o.project, stderr)
	if err != nil {
		return err
	}
	defer store.Close()
	failed := 0
	results := make([]fetchedJSON, 0, len(o.args))
	for _, series := range o.args {
		res, err := fetchOne(ctx, o, store, ps, series, from, to, stderr)
		if err != nil && res.Series == "" {
			res.Series = series
		}
		results = append(results, res.withError(err))
		if l := res.line(err); !o.json && l != "" {
			fmt.Fprintln(stdout, l)
		}
		if err != nil {
			if ctx.Err() != nil {
				return errors.Join(writeFetched(o, stdout, results),
					fmt.Errorf("data fetch %s: stopped; the pages committed so far are kept, run the fetch again to resume", series))
			}
			failed++
			fmt.Fprintf(stderr, "wicket: data fetch %s: %v\n", series, err)
		}
	}
	if err := writeFetched(o, stdout, results); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("data fetch: %d of %d series failed (see above)", failed, len(o.args))
	}
	return nil
}

// fetchOne fetches one series; its result says what was committed, also
// when err is not nil.
func fetchOne(ctx context.Context, o dataFetchOptions, store *history.Store, ps providerSet, series string, from, to time.Time, stderr io.Writer) (fetchedJSON, error) {
	sym, _, _ := history.CheckSeries(series)
	infoPtr, err := seriesInfo(store, series)
	if err != nil {
		return fetchedJSON{}, err
	}
	name, err := ps.pick(o.provider, sym, infoPtr)
	if err != nil {
		return fetchedJSON{}, err
	}
	if infoPtr == nil { // a new series is named the one way wicket writes it
		if series, err = ps.canonicalSeries(store, name, series); err != nil {
			return fetchedJSON{}, err
		}
		if infoPtr, err = seriesInfo(store, series); err != nil {
			return fetchedJSON{}, err
		}
		if infoPtr != nil && o.provider == "" {
			name = infoPtr.Source
		}
	}
	bar := newFetchBar(stderr, isTerminal(stderr))
	res, err := provider.Fetch(ctx, store, ps.source(name), series, provider.FetchOptions{
		From: from, To: to, Full: o.full, Progress: bar.update,
	})
	bar.done()
	if res.Series == "" {
		res.Series = series
	}
	return barsFetched(res), err
}

// seriesInfo is the stored series' description, nil when there is none.
func seriesInfo(store *history.Store, series string) (*history.SeriesInfo, error) {
	info, err := store.Info(series)
	switch {
	case err == nil:
		return &info, nil
	case history.IsNotFound(err):
		return nil, nil
	}
	return nil, err
}

// fundingLookback is how far back a first funding fetch goes.
const fundingLookback = 2 * 365 * 24 * time.Hour

// runFetchFunding is `wicket data fetch --funding SYMBOL...`: each
// pair's perpetual funding history from binance into the history store,
// a page committed at a time, resuming after the last stored settlement.
func runFetchFunding(ctx context.Context, o dataFetchOptions, stdout, stderr io.Writer) error {
	args := o.args
	if len(args) == 0 {
		return usagef("data fetch --funding needs at least one pair, e.g. wicket data fetch --funding BTC-USD")
	}
	if p := o.provider; p != "" && p != binance.Name {
		return usagef("--funding comes from binance's USDⓈ-M perpetuals; --provider %q has no funding rates", p)
	}
	from, to, err := fetchRange(o.from, o.to)
	if err != nil {
		return err
	}
	p, cfg, err := openProjectAt(o.project)
	if err != nil {
		return err
	}
	ps, err := newProviderSet(p, cfg, stderr)
	if err != nil {
		return err
	}
	client := ps.binance()
	type job struct{ key, psym string }
	jobs := make([]job, 0, len(args))
	for _, a := range args {
		sym, _, _ := strings.Cut(a, "@") // a series names its pair
		if canon, err := client.Canonical(sym); err == nil {
			sym = canon // BTCUSDT's funding is BTC-USD's
		}
		key, err := history.FundingSymbol(sym)
		if err != nil {
			return usageError{err}
		}
		psym, err := client.Symbol(key)
		if err != nil {
			return usageError{err}
		}
		jobs = append(jobs, job{key, psym})
	}
	store, err := history.Open(p.HistoryPath())
	if err != nil {
		return err
	}
	defer store.Close()
	failed := 0
	results := make([]fetchedJSON, 0, len(jobs))
	for _, j := range jobs {
		res, err := fetchFunding(ctx, o, store, client, j.key, j.psym, from, to)
		results = append(results, res.withError(err))
		if l := res.line(err); !o.json && l != "" {
			fmt.Fprintln(stdout, l)
		}
		if err != nil {
			if ctx.Err() != nil {
				return errors.Join(writeFetched(o, stdout, results),
					fmt.Errorf("data fetch --funding %s: stopped; the pages committed so far are kept, run the fetch again to resume", j.key))
			}
			failed++
			fmt.Fprintf(stderr, "wicket: data fetch --funding %s: %v\n", j.key, err)
		}
	}
	if err := writeFetched(o, stdout, results); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("data fetch --funding: %d of %d pairs failed (see above)", failed, len(jobs))
	}
	return nil
}

// fetchFunding fetches one pair's funding settlements; its result says
// what was committed, also when err is not nil.
func fetchFunding(ctx context.Context, o dataFetchOptions, store *history.Store, client *binance.Client, key, psym string, from, to time.Time) (fetchedJSON, error) {
	out := fetchedJSON{Series: key, Kind: fetchedFunding, Provider: binance.Name, ProviderSymbol: psym}
	now := o.now().UTC()
	if to.IsZero() || to.After(now) {
		to = now
	}
	if from.IsZero() {
		info, err := store.FundingInfo(key)
		if err != nil {
			return out, err
		}
		from = to.Add(-fundingLookback)
		if info.Count > 0 && !o.full {
			from = info.Last.Add(time.Millisecond)
		}
	}
	var added, pages int
	var first, last time.Time
	err := client.FundingRates(ctx, psym, from, to, func(rs []history.FundingRate) error {
		if err := store.WriteFunding(ctx, key, rs); err != nil {
			return err
		}
		if added == 0 {
			first = rs[0].Time
		}
		added += len(rs)
		pages++
		last = rs[len(rs)-1].Time
		return nil
	})
	out.Added, out.Pages = added, pages
	if added > 0 {
		out.First, out.Last = rfc3339(first), rfc3339(last)
	}
	return out, err
}

// fetchRange parses --from and --to, refusing a --to before --from.
func fetchRange(fromFlag, toFlag string) (from, to time.Time, err error) {
	if from, err = timeFlag("from", fromFlag); err != nil {
		return from, to, err
	}
	if to, err = toDayEnd("to", toFlag); err != nil {
		return from, to, err
	}
	if !from.IsZero() && !to.IsZero() && to.Before(from) {
		return from, to, usagef("--to %s is before --from %s", to.Format(time.RFC3339), from.Format(time.RFC3339))
	}
	return from, to, nil
}
