package provider

import (
	"context"
	"sync"
	"time"

	"github.com/shopspring/decimal"
)

// Mark is a provider's last trade price of one symbol.
type Mark struct {
	Symbol string          // wicket's symbol (BTC-USD)
	Price  decimal.Decimal // as the provider quoted it
	At     time.Time       // when the provider says the trade happened (zero if it does not say)
	Source string          // the provider's name
}

// MarkSource gives a paper venue real marks: a provider's last trade price
// of a wicket symbol.
type MarkSource interface {
	Name() string
	LastPrice(ctx context.Context, sym string) (Mark, error)
}

// PollMarks asks src for the last price of every symbol each interval
// (the first round at once) and hands each to onMark, until ctx ends. A
// failed lookup goes to onErr and the poll goes on; one slow symbol delays
// the round, never skips it.
func PollMarks(ctx context.Context, src MarkSource, syms []string, every time.Duration,
	sleep func(context.Context, time.Duration) error, onMark func(Mark), onErr func(sym string, err error)) error {
	if sleep == nil {
		sleep = SleepContext
	}
	for {
		for _, s := range syms {
			m, err := src.LastPrice(ctx, s)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err != nil {
				if onErr != nil {
					onErr(s, err)
				}
				continue
			}
			onMark(m)
		}
		if err := sleep(ctx, every); err != nil {
			return err
		}
	}
}

// LiveMarks holds the latest Mark per symbol that Run polls from a
// MarkSource, for a paper venue's engine to read at each tick (the engine
// keeps its previous mark while a symbol has none yet). It is safe for
// concurrent use.
type LiveMarks struct {
	mu sync.Mutex
	m  map[string]Mark
}

// Run polls src for syms every interval into l until ctx ends.
func (l *LiveMarks) Run(ctx context.Context, src MarkSource, syms []string, every time.Duration, onErr func(sym string, err error)) error {
	return PollMarks(ctx, src, syms, every, nil, func(m Mark) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.m == nil {
			l.m = map[string]Mark{}
		}
		l.m[m.Symbol] = m
	}, onErr)
}

// Get returns the latest mark of sym, if one has arrived.
func (l *LiveMarks) Get(sym string) (Mark, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m, ok := l.m[sym]
	return m, ok
}
