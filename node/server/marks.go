package server

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/node/command"
)

// MarkFeed gives a paper venue with `marks = "binance"` (or "alpaca") its
// marks from outside the node: the latest last-trade price of each symbol,
// as a market data provider quoted it. The node only reads it, once per
// mark step, on the fold goroutine; whoever fills it (wicket node serve
// polls the provider) runs beside the node. Mark must be safe for
// concurrent use, must never block, and reports false while no price of
// the symbol has arrived.
//
// Orders on a fed venue still fill on paper: nothing leaves the machine.
type MarkFeed interface {
	Mark(symbol string) (decimal.Decimal, bool)
}

// TimedMarkFeed is a MarkFeed that also says when it received each price
// (wicket node serve's poll is one). A fed venue's max_mark_age counts from
// that time; a plain MarkFeed's price counts as received at the mark step
// that reads it.
type TimedMarkFeed interface {
	MarkFeed
	MarkAt(symbol string) (price decimal.Decimal, at time.Time, ok bool)
}

// MarkFunc adapts a function to MarkFeed.
type MarkFunc func(symbol string) (decimal.Decimal, bool)

// Mark calls f.
func (f MarkFunc) Mark(symbol string) (decimal.Decimal, bool) { return f(symbol) }

// checkMarks refuses a feed for a venue that does not take one, and a venue
// whose marks key names a provider but was given no feed.
func checkMarks(cfg Config) error {
	for _, vc := range cfg.Project.Venues {
		f := cfg.Marks[vc.Name]
		switch {
		case vc.Marks != "" && f == nil:
			return fmt.Errorf("node: venue %q takes its marks from %s (marks in wicket.toml) but was given no mark feed", vc.Name, vc.Marks)
		case vc.Marks == "" && f != nil:
			return fmt.Errorf("node: venue %q was given a mark feed but its wicket.toml table has no marks key", vc.Name)
		}
	}
	for name := range cfg.Marks {
		if _, ok := cfg.Project.Venue(name); !ok {
			return fmt.Errorf("node: a mark feed was given for venue %q, which wicket.toml does not list", name)
		}
	}
	return nil
}

// fedMark is what the engine knows of one fed symbol in this run.
type fedMark struct {
	ok   bool            // the venue's mark is the feed's current price
	lost bool            // it was, until the feed stopped giving one
	raw  decimal.Decimal // the feed's last price, as quoted (zero: none yet)
}

// nextMark is symbol's mark at the current step (taken at now) on paper
// venue vc, and when it was received, given its mark before (ok false:
// none). A fed venue takes the feed's price, rounded to the venue's price
// decimals as the random walk's marks are; while the feed has no usable
// price it keeps the mark it has and reports false, so nothing moves and
// nothing is journaled for the symbol.
func (e *engine) nextMark(vc project.Venue, symbol string, prev decimal.Decimal, hasPrev bool, now time.Time) (decimal.Decimal, time.Time, bool) {
	f := e.marks[vc.Name]
	if f == nil {
		if !hasPrev {
			prev = e.feed.First(vc, symbol)
		}
		return e.feed.Next(symbol, e.tick, prev, vc.PriceDecimals), now, true
	}
	st := e.fed[vc.Name]
	if st == nil {
		st = map[string]fedMark{}
		e.fed[vc.Name] = st
	}
	at := now
	var p decimal.Decimal
	var ok bool
	if tf, timed := f.(TimedMarkFeed); timed {
		p, at, ok = tf.MarkAt(symbol)
	} else {
		p, ok = f.Mark(symbol)
	}
	if !ok || !p.IsPositive() {
		if cur := st[symbol]; cur.ok || cur.lost {
			st[symbol] = fedMark{lost: true, raw: cur.raw}
		}
		return decimal.Decimal{}, time.Time{}, false
	}
	m := p.Round(vc.PriceDecimals)
	st[symbol] = fedMark{ok: m.IsPositive(), raw: p}
	return m, at, m.IsPositive()
}

// markSource says where a paper venue's marks come from, for the snapshot:
// the simulation, or the provider and which symbols have no current price
// or one too old to fill against at now.
func (e *engine) markSource(vc project.Venue, now time.Time) string {
	if e.marks[vc.Name] == nil {
		return e.feed.Source(vc.Name)
	}
	src := vc.Marks + ": last trade price, polled (orders fill on paper)"
	var waiting, lost, stale []string
	for _, s := range vc.Symbols {
		switch st := e.fed[vc.Name][s]; {
		case st.lost:
			lost = append(lost, s)
		case !st.ok:
			waiting = append(waiting, s)
		case e.venues[vc.Name].FreshMark(s, now) != nil:
			stale = append(stale, s)
		}
	}
	if len(waiting) > 0 {
		src += "; no price yet for " + strings.Join(waiting, ", ")
	}
	if len(lost) > 0 {
		src += "; the provider stopped answering for " + strings.Join(lost, ", ") + " (marks held at the last price)"
	}
	if len(stale) > 0 {
		src += fmt.Sprintf("; the price of %s is older than max_mark_age %s", strings.Join(stale, ", "), vc.MaxMarkAge)
	}
	if len(waiting)+len(lost)+len(stale) > 0 {
		src += "; orders on those are refused until a price arrives"
	}
	return src
}

// checkFed refuses an order, a modify or a flatten on a fed venue's symbol
// that has no price from the feed yet in this run: its mark is only the
// placeholder it started with (or the last price of an earlier run), and an
// order must never fill or be collared against that. Cancels, the trading
// state and market_exit (the way out) are never refused.
func (e *engine) checkFed(c command.Command) *rejection {
	vc, ok := e.cfg.Venue(c.Venue)
	if !ok || e.marks[vc.Name] == nil {
		return nil
	}
	var symbols []string
	switch c.Verb {
	case command.SubmitOrder:
		symbols = []string{c.Symbol}
	case command.Modify:
		if o, ok := e.find(c.Venue, c.OrderID, c.ClientOrderID); ok {
			symbols = []string{o.Symbol}
		}
	case command.Flatten:
		symbols = e.venues[vc.Name].Held()
		if c.Symbol != "" {
			symbols = []string{c.Symbol}
		}
	}
	for _, s := range symbols {
		if !slices.Contains(vc.Symbols, s) {
			continue // an unlisted symbol is the guardrail's to refuse
		}
		if e.fed[vc.Name][s].ok {
			if err := e.venues[vc.Name].FreshMark(s, e.now()); err != nil {
				return &rejection{code: "stale_mark",
					reason: fmt.Sprintf("%v: %s has not given a newer price; the node keeps polling — retry shortly, and check the node's log", err, vc.Marks)}
			}
			continue
		}
		why := "no price of " + s + " has arrived from " + vc.Marks + " yet"
		switch st := e.fed[vc.Name][s]; {
		case st.lost:
			why = fmt.Sprintf("%s stopped answering for %s (its mark is held at the last price; the node's log says why)", vc.Marks, s)
		case st.raw.IsPositive():
			why = fmt.Sprintf("%s's price of %s, %s, rounds to 0 at the venue's price_decimals %d; raise price_decimals", vc.Marks, s, st.raw, vc.PriceDecimals)
		}
		return &rejection{code: "no_mark",
			reason: fmt.Sprintf("venue %s takes its marks from %s and %s; the node keeps polling — retry shortly, and check node_snapshot's mark_source", vc.Name, vc.Marks, why)}
	}
	return nil
}
