package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/node/server"
	"wicket/strategy/provider"
	"wicket/strategy/provider/alpaca"
	"wicket/strategy/provider/binance"
)

// markPoll is how often a fed paper venue's prices are asked for. Each
// provider's transport also spaces its requests (Alpaca's to its free
// plan's rate), so many symbols make a round longer, never a burst.
const markPoll = 2 * time.Second

// markLostAfter is how many polls of a symbol in a row must fail before
// its last price stops counting as current (the node then refuses orders
// on it until the provider answers again): one failed poll is a blip.
const markLostAfter = 3

// markProvider is what a paper venue's marks need of a provider client.
type markProvider interface {
	provider.MarkSource
	Symbol(sym string) (string, error)
}

// nodeMarks starts, for every paper venue with a marks key, a poll of that
// provider's last trade price of the venue's symbols (one poll per
// provider over all its venues' symbols), running until ctx ends, and
// returns the node's feeds by venue name (nil when no venue has marks).
// Each feed says when now said its price arrived (server.TimedMarkFeed),
// which the venue's max_mark_age bounds. A symbol the provider cannot map,
// a stock on Alpaca without its key, or a max_mark_age not above the poll
// interval, is refused here, before the node starts.
func nodeMarks(ctx context.Context, p project.Project, cfg project.Config, tick time.Duration, now func() time.Time, log *slog.Logger, logTo io.Writer) (map[string]server.MarkFeed, error) {
	symbols := map[string][]string{} // provider → the symbols its venues list
	var fed []project.Venue
	for _, v := range cfg.Venues {
		if v.Marks == "" {
			continue
		}
		fed = append(fed, v)
		for _, s := range v.Symbols {
			if !slices.Contains(symbols[v.Marks], s) {
				symbols[v.Marks] = append(symbols[v.Marks], s)
			}
		}
	}
	if len(fed) == 0 {
		return nil, nil
	}
	if tick <= 0 {
		return nil, usagef("--tick %s keeps marks still, but venue %s takes its marks from %s; give an interval such as 1s", tick, fed[0].Name, fed[0].Marks)
	}
	for _, v := range fed {
		if v.MaxMarkAge <= markPoll {
			return nil, fmt.Errorf("venue %q: max_mark_age %s is not above the %s between polls of %s, so every mark would go stale before the next one; give at least %s (the default is %s)",
				v.Name, v.MaxMarkAge, markPoll, v.Marks, 2*markPoll, project.DefaultMaxMarkAge)
		}
	}
	ps, err := newProviderSet(p, cfg, logTo)
	if err != nil {
		return nil, err
	}
	logged := map[string]*loggedMarks{}
	for _, name := range project.ProviderNames {
		syms := symbols[name]
		if len(syms) == 0 {
			continue
		}
		var src markProvider
		if name == binance.Name {
			src = ps.binance()
		} else {
			src = ps.alpaca()
		}
		if err := checkMarkSymbols(ps, fed, src); err != nil {
			return nil, err
		}
		ls := newLoggedMarks(src, now, log)
		logged[name] = ls
		// ls.LastPrice keeps each price as it arrives: nothing more to do with it
		go provider.PollMarks(ctx, ls, syms, markPoll, nil, func(provider.Mark) {}, ls.failed) //nolint:errcheck // ends with ctx
		log.Info("paper marks from a provider", "provider", name, "symbols", fmt.Sprint(syms), "every", markPoll.String())
	}
	feeds := map[string]server.MarkFeed{}
	for _, v := range fed {
		feeds[v.Name] = logged[v.Marks]
	}
	return feeds, nil
}

// checkMarkSymbols refuses a fed venue's symbol that src cannot map, and an
// Alpaca stock when the Alpaca key is not set.
func checkMarkSymbols(ps providerSet, fed []project.Venue, src markProvider) error {
	for _, v := range fed {
		if v.Marks != src.Name() {
			continue
		}
		for _, s := range v.Symbols {
			if _, err := src.Symbol(s); err != nil {
				return fmt.Errorf("venue %q: marks = %q: %w", v.Name, v.Marks, err)
			}
			if _, _, pair := provider.Pair(s); v.Marks == alpaca.Name && !pair {
				_, _, hasID := ps.secrets.Lookup(project.KeyAlpacaID)
				_, _, hasSecret := ps.secrets.Lookup(project.KeyAlpacaSecret)
				if !hasID || !hasSecret {
					return fmt.Errorf("venue %q: marks = %q: the stock %s needs an Alpaca key: set %s and %s in the environment or in secrets.env (`wicket secrets list` shows which are set)",
						v.Name, v.Marks, s, project.KeyAlpacaID, project.KeyAlpacaSecret)
				}
			}
		}
	}
	return nil
}

// loggedMarks is a fed venue's feed: it keeps each symbol's latest price
// from a mark source with the time it arrived (by its clock now), and logs
// the source's changes of health, once each: the first price of a symbol,
// a failure (again only when its message changes), and the recovery after
// one. A failing symbol polled every 2 s logs one line, not thirty a
// minute. It also counts each symbol's failed polls in a row, so the feed
// stops offering a price that is no longer current.
type loggedMarks struct {
	provider.MarkSource
	now   func() time.Time
	log   *slog.Logger
	mu    sync.Mutex
	got   map[string]receivedMark
	last  map[string]string // symbol → "" (healthy) or the last error logged
	fails map[string]int    // symbol → polls failed in a row
}

// receivedMark is a price and when it arrived.
type receivedMark struct {
	price decimal.Decimal
	at    time.Time
}

var _ server.TimedMarkFeed = (*loggedMarks)(nil)

func newLoggedMarks(src provider.MarkSource, now func() time.Time, log *slog.Logger) *loggedMarks {
	return &loggedMarks{MarkSource: src, now: now, log: log, got: map[string]receivedMark{}, last: map[string]string{}, fails: map[string]int{}}
}

// current reports whether sym's last price is still current: fewer than
// markLostAfter polls of it in a row have failed.
func (l *loggedMarks) current(sym string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fails[sym] < markLostAfter
}

// MarkAt is sym's latest price and when it arrived, while it is current.
func (l *loggedMarks) MarkAt(sym string) (decimal.Decimal, time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m, ok := l.got[sym]
	return m.price, m.at, ok && l.fails[sym] < markLostAfter
}

// Mark is sym's latest price, while it is current.
func (l *loggedMarks) Mark(sym string) (decimal.Decimal, bool) {
	p, _, ok := l.MarkAt(sym)
	return p, ok
}

func (l *loggedMarks) LastPrice(ctx context.Context, sym string) (provider.Mark, error) {
	m, err := l.MarkSource.LastPrice(ctx, sym)
	if err != nil {
		return m, err
	}
	at := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got[sym] = receivedMark{m.Price, at}
	prev, seen := l.last[sym]
	l.last[sym], l.fails[sym] = "", 0
	switch {
	case !seen:
		l.log.Info("first mark", "provider", l.Name(), "symbol", sym, "price", m.Price.String())
	case prev != "":
		l.log.Info("mark feed recovered", "provider", l.Name(), "symbol", sym, "price", m.Price.String())
	}
	return m, nil
}

// failed is PollMarks' onErr.
func (l *loggedMarks) failed(sym string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fails[sym]++
	if prev, seen := l.last[sym]; seen && prev == err.Error() {
		return
	}
	l.last[sym] = err.Error()
	l.log.Warn("mark feed failed; the venue keeps its last mark and refuses orders on a symbol that has none", "provider", l.Name(), "symbol", sym, "err", err.Error())
}
