package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"wicket/internal/project"
	"wicket/strategy/history"
	"wicket/strategy/provider"
	"wicket/strategy/provider/alpaca"
	"wicket/strategy/provider/binance"
)

// providerSet builds the market data sources a command needs from
// wicket.toml's [providers.NAME] and the project's keys.
type providerSet struct {
	cfg     project.Config
	secrets *project.Secrets
	stderr  io.Writer
}

// pick chooses the provider for a series: --provider when given, else the
// provider the series was fetched from, else binance for a crypto pair or a
// symbol only binance spells (BTCUSDT) and alpaca for a stock ticker.
func (ps providerSet) pick(flag string, sym string, info *history.SeriesInfo) (string, error) {
	if flag != "" {
		if !slices.Contains(project.ProviderNames, flag) {
			return "", usagef("--provider %q is not one of %s", flag, strings.Join(project.ProviderNames, ", "))
		}
		return flag, nil
	}
	if info != nil && slices.Contains(project.ProviderNames, info.Source) {
		return info.Source, nil
	}
	if _, _, ok := provider.Pair(sym); ok {
		return binance.Name, nil
	}
	if _, err := ps.binance().Canonical(sym); err == nil {
		if _, err := ps.alpaca().Canonical(sym); err != nil {
			return binance.Name, nil
		}
	}
	return alpaca.Name, nil
}

// transport is the HTTP manners every provider client gets; waits are
// reported on stderr, one line each.
func (ps providerSet) transport(name string, minInterval time.Duration) *provider.Transport {
	return &provider.Transport{MinInterval: minInterval, OnWait: func(why string, d time.Duration) {
		fmt.Fprintf(ps.stderr, "%s: %s %s\n", name, why, d.Round(time.Millisecond))
	}}
}

func (ps providerSet) binance() *binance.Client {
	pc := ps.cfg.Provider(binance.Name)
	syms, _ := ps.cfg.ProviderInstruments(binance.Name) // validated with wicket.toml
	return binance.New(binance.Config{BaseURL: pc.BaseURL, StreamURL: pc.StreamURL, FuturesURL: pc.FuturesURL, Transport: ps.transport(binance.Name, 50*time.Millisecond),
		Symbols: syms})
}

func (ps providerSet) alpaca() *alpaca.Client {
	pc := ps.cfg.Provider(alpaca.Name)
	id, _, _ := ps.secrets.Lookup(project.KeyAlpacaID)
	secret, _, _ := ps.secrets.Lookup(project.KeyAlpacaSecret)
	syms, _ := ps.cfg.ProviderInstruments(alpaca.Name) // validated with wicket.toml
	return alpaca.New(alpaca.Config{BaseURL: pc.BaseURL, StreamURL: pc.StreamURL, KeyID: id, Secret: secret,
		Adjustment: pc.Adjustment, Transport: ps.transport(alpaca.Name, 300*time.Millisecond), Symbols: syms})
}

func (ps providerSet) source(name string) provider.Source {
	if name == binance.Name {
		return ps.binance()
	}
	return ps.alpaca()
}

// tape is a provider with a live stream, for data record.
type tape interface {
	provider.Source
	provider.Stream
	speller
}

// speller writes a symbol given in either spelling (BTCUSDT or BTC-USD)
// the one way wicket does (BTC-USD).
type speller interface {
	Canonical(sym string) (string, error)
}

// canonicalSeries is series in wicket's spelling for provider name
// (BTCUSDT@1m from binance is BTC-USD@1m), saying so on stderr when that
// changes it. A series the store already holds as given keeps its name.
func (ps providerSet) canonicalSeries(store *history.Store, name, series string) (string, error) {
	sym, g, err := history.CheckSeries(series)
	if err != nil {
		return "", usageError{err}
	}
	if _, err := store.Info(series); err == nil {
		return series, nil
	}
	canon, err := ps.tape(name).Canonical(sym)
	if err != nil {
		return "", usageError{err}
	}
	if canon == sym {
		return series, nil
	}
	out := canon + "@" + string(g)
	fmt.Fprintf(ps.stderr, "%s is %s in wicket's spelling (%s %s); the series is %s\n", series, out, name, sym, out)
	return out, nil
}

func (ps providerSet) tape(name string) tape {
	if name == binance.Name {
		return ps.binance()
	}
	return ps.alpaca()
}

func newProviderSet(p project.Project, cfg project.Config, stderr io.Writer) (providerSet, error) {
	s, err := p.Secrets(os.LookupEnv)
	if err != nil {
		return providerSet{}, err
	}
	return providerSet{cfg: cfg, secrets: s, stderr: stderr}, nil
}

// timeFlag parses a --from or --to value (empty: zero time).
func timeFlag(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := history.ParseTime(v, time.UTC)
	if err != nil {
		return time.Time{}, usagef("--%s: %v", name, err)
	}
	return t, nil
}

// seriesArgs are the SYMBOL@GRANULARITY arguments of data fetch or data
// record (verb), at least one, each checked before anything is opened.
func seriesArgs(c *cli.Context, verb, example string) ([]string, error) {
	args, err := trailingFlags(c)
	if err != nil {
		return nil, err
	}
	return checkSeriesArgs(args, verb, example)
}

// checkSeriesArgs refuses no series or a malformed one.
func checkSeriesArgs(args []string, verb, example string) ([]string, error) {
	if len(args) == 0 {
		return nil, usagef("data %s needs at least one series, e.g. wicket data %s %s", verb, verb, example)
	}
	for _, s := range args {
		if _, _, err := history.CheckSeries(s); err != nil {
			return nil, usageError{err}
		}
	}
	return args, nil
}

// providerStore opens the project the --project flag names (openProjectAt),
// its providers and its history store: what a command that fetches or
// records bars needs. The caller closes the store.
func providerStore(projectFlag string, stderr io.Writer) (providerSet, *history.Store, error) {
	p, cfg, err := openProjectAt(projectFlag)
	if err != nil {
		return providerSet{}, nil, err
	}
	ps, err := newProviderSet(p, cfg, stderr)
	if err != nil {
		return providerSet{}, nil, err
	}
	store, err := history.Open(p.HistoryPath())
	if err != nil {
		return providerSet{}, nil, err
	}
	return ps, store, nil
}
