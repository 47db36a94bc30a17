package provider

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"wicket/strategy"
	"wicket/strategy/history"
)

// Stream is a provider's live tape: closed bars as they close.
type Stream interface {
	// Stream connects and calls bar with each closed bar of psym (one bar
	// per call, Len 1) until ctx ends (it returns ctx's error) or the
	// connection fails (it returns why). connected is called once the
	// subscription is up.
	Stream(ctx context.Context, psym string, g strategy.Granularity, connected func(), bar func(strategy.Bars) error) error
}

// RecordOptions control Record.
type RecordOptions struct {
	// Backoff is the first reconnect wait (1 s), doubled up to MaxBackoff
	// (60 s) while connections keep failing.
	Backoff, MaxBackoff time.Duration
	Sleep               func(ctx context.Context, d time.Duration) error
	Now                 func() time.Time
	// Log hears one line per stored bar, back-fill and reconnect.
	Log func(line string)
}

// Record keeps each series growing from stream until ctx ends: every closed
// bar is appended as it arrives; after a (re)connect and whenever a live bar
// is not the next one, the hole is back-filled over REST through src first,
// so the stored series has no hole and no bar twice. It returns nil when
// ctx ends, or the first error that is not a connection's (a store error,
// an unmappable symbol).
func Record(ctx context.Context, store *history.Store, src Source, stream Stream, series []string, opt RecordOptions) error {
	if opt.Sleep == nil {
		opt.Sleep = SleepContext
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Log == nil {
		opt.Log = func(string) {}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for _, s := range series {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := recordOne(ctx, store, src, stream, s, opt); err != nil && ctx.Err() == nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
				cancel()
			}
		}()
	}
	wg.Wait()
	return first
}

func recordOne(ctx context.Context, store *history.Store, src Source, stream Stream, series string, opt RecordOptions) error {
	sym, g, err := history.CheckSeries(series)
	if err != nil {
		return err
	}
	psym, err := src.Symbol(sym)
	if err != nil {
		return err
	}
	step := g.Duration()
	backoff := orDefault(opt.Backoff, time.Second)
	var last int64 = -1 << 62 // open time of the newest stored bar
	if info, err := store.Info(series); err == nil {
		if info.Source != src.Name() {
			return &history.Error{Kind: history.KindInvalid, Series: series,
				Msg: fmt.Sprintf("holds %s bars, not %s ones; a series never mixes sources: record into another series name", info.Source, src.Name())}
		}
		last = info.Last.Unix()
	}
	// backfill fetches the closed bars after last up to (not including)
	// before, with now the latest time known to have passed.
	backfill := func(before time.Time, now time.Time) error {
		if last < -1<<61 {
			return nil // a new series starts with the live bars
		}
		res, err := Fetch(ctx, store, src, series, FetchOptions{To: before.Add(-step), Now: func() time.Time { return now }})
		if res.Added > 0 {
			last = res.Last.Unix()
			opt.Log(fmt.Sprintf("%s back-filled %d bars over REST (%s to %s)", series, res.Added, res.First.Format(time.RFC3339), res.Last.Format(time.RFC3339)))
		}
		return err
	}
	for {
		connected := func() {
			backoff = orDefault(opt.Backoff, time.Second)
			now := opt.Now()
			if err := backfill(Floor(now, g), now); err != nil && ctx.Err() == nil {
				opt.Log(fmt.Sprintf("%s back-fill failed: %v", series, err))
			}
		}
		err := stream.Stream(ctx, psym, g, connected, func(b strategy.Bars) error {
			t := b.Time[0]
			if t <= last {
				return nil // already stored (a repeat after a reconnect, or back-filled)
			}
			closed := time.Unix(t, 0).Add(step)
			if last > -1<<61 && t > last+int64(step/time.Second) {
				if err := backfill(time.Unix(t, 0), later(opt.Now(), closed)); err != nil {
					return err
				}
				if t <= last {
					return nil
				}
			}
			if info, err := store.Info(series); err == nil && info.Last.Unix() >= t {
				last = info.Last.Unix() // another recorder of the store (a node's, or data record) stored it
				return nil
			}
			if err := store.Append(ctx, series, b, history.AppendOptions{Source: src.Name(), ProviderSymbol: psym, FetchedAt: opt.Now()}); err != nil {
				return err
			}
			last = t
			opt.Log(fmt.Sprintf("%s %s o=%v h=%v l=%v c=%v v=%v", series, time.Unix(t, 0).UTC().Format(time.RFC3339), b.Open[0], b.High[0], b.Low[0], b.Close[0], b.Volume[0]))
			return nil
		})
		if ctx.Err() != nil {
			return nil
		}
		var he *history.Error
		var pe *Error
		if errors.As(err, &he) || errors.As(err, &pe) && pe.Permanent {
			return err // the store or the provider refused: reconnecting would not help
		}
		opt.Log(fmt.Sprintf("%s stream lost (%v); reconnecting in %s", series, err, backoff))
		if err := opt.Sleep(ctx, backoff); err != nil {
			return nil
		}
		backoff = min(2*backoff, orDefault(opt.MaxBackoff, time.Minute))
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
