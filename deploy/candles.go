package deploy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"wicket/internal/project"
	"wicket/strategy"
	"wicket/strategy/history"
	"wicket/strategy/provider"
	"wicket/strategy/provider/alpaca"
	"wicket/strategy/provider/binance"
)

// Tape is a market data provider's bars: its REST history and its live
// stream of closed bars (*binance.Client and *alpaca.Client are ones).
type Tape interface {
	provider.Source
	provider.Stream
}

// candleProviders names, per real venue kind, the provider whose candles
// the venue's deployments decide on: the one `wicket data fetch` and
// `wicket data record` take the series from, so live decisions use the
// bars research used. A paper venue is not here: its deployments take
// its aggregated marks (or a recorded tape).
var candleProviders = map[string]string{
	project.KindBinance:        binance.Name,
	project.KindBinanceFutures: binance.Name,
	project.KindAlpaca:         alpaca.Name,
}

// Candles is the node's own recorder of its providers' bars: for every
// series a deployment on a real venue runs, it records the provider's
// closed bars into the history store with the recorder `wicket data
// record` uses (stream, REST back-fill after a gap), and hands them to the
// deployment as they are stored; at deploy time it fetches a missing
// warm-up from the provider's REST history.
//
// It never hands a deployment a bar that is no longer the latest closed
// one (a back-filled bar is history, never traded late), and it records a
// series once however many deployments run on it.
type Candles struct {
	// Store is the history store, open for writing.
	Store *history.Store
	// Tapes are the configured providers, by name (binance, alpaca).
	Tapes map[string]Tape
	Now   func() time.Time // time.Now when nil
	// Sleep waits between reconnects and between restarts of a recorder
	// that stopped on an error (provider.SleepContext when nil).
	Sleep func(ctx context.Context, d time.Duration) error
	// Every is how often a deployment looks at the store for a bar it was
	// not told of (another process, such as wicket data record, may store
	// it): DefaultCandlePoll when 0.
	Every  time.Duration
	Logger *slog.Logger

	mu      sync.Mutex
	recs    map[string]*recording // by series
	stopped bool
	wg      sync.WaitGroup
}

// DefaultCandlePoll is Candles.Every's default.
const DefaultCandlePoll = time.Second

// recorderRestart is the first wait before a recorder that stopped on an
// error starts again (doubled up to recorderRestartMax).
const (
	recorderRestart    = 5 * time.Second
	recorderRestartMax = 5 * time.Minute
)

// recording is one series being recorded.
type recording struct {
	holders int
	cancel  context.CancelFunc
	wake    chan struct{} // closed (and replaced) at each line the recorder logs
}

// Tape is the provider that records venue vc's candles, and its name; ok
// is false for a paper venue or a provider that is not configured.
func (c *Candles) Tape(vc project.Venue) (Tape, string, bool) {
	if c == nil {
		return nil, "", false
	}
	name, ok := candleProviders[vc.Kind]
	if !ok {
		return nil, "", false
	}
	t, ok := c.Tapes[name]
	return t, name, ok && t != nil
}

// Bars is the bar source of a deployment of series on venue vc: the
// provider's candles, recorded by the node while the deployment's loop
// runs. Nil when the venue's bars are not recorded (a paper venue).
func (c *Candles) Bars(vc project.Venue, series string) BarSource {
	tape, _, ok := c.Tape(vc)
	if !ok {
		return nil
	}
	return &candleBars{c: c, tape: tape}
}

func (c *Candles) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Candles) sleep(ctx context.Context, d time.Duration) error {
	if c.Sleep != nil {
		return c.Sleep(ctx, d)
	}
	return provider.SleepContext(ctx, d)
}

func (c *Candles) log() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// hold records series from tape until ctx ends (and every other holder's
// has): the first holder starts the recorder, the last one stops it.
func (c *Candles) hold(ctx context.Context, tape Tape, series string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.recs == nil {
		c.recs = map[string]*recording{}
	}
	if c.stopped {
		return
	}
	r := c.recs[series]
	if r == nil {
		rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		r = &recording{cancel: cancel, wake: make(chan struct{})}
		c.recs[series] = r
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.record(rctx, tape, series)
		}()
	}
	r.holders++
	context.AfterFunc(ctx, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if r.holders--; r.holders == 0 {
			r.cancel()
			if c.recs[series] == r {
				delete(c.recs, series)
			}
		}
	})
}

// record runs the recorder of series until ctx ends, starting it again
// (after a wait) when it stops on an error: another writer of the store
// may have appended the bar it was about to, and it resumes after the last
// stored bar.
func (c *Candles) record(ctx context.Context, tape Tape, series string) {
	log := c.log().With("series", series, "provider", tape.Name())
	log.Info("recording the provider's bars for the deployments on this series")
	wait := recorderRestart
	for ctx.Err() == nil {
		err := provider.Record(ctx, c.Store, tape, tape, []string{series}, provider.RecordOptions{
			Now: c.Now, Sleep: c.Sleep,
			Log: func(line string) {
				log.Info("candles", "event", line)
				c.wake(series)
			},
		})
		if err == nil || ctx.Err() != nil {
			break
		}
		var pe *provider.Error
		if errors.As(err, &pe) && pe.Permanent { // bad keys, a granularity it does not stream: starting again cannot mend it
			log.Error("recording stopped: the provider refused; the deployments on this series get no bars until the node is restarted with it mended", "err", err)
			break
		}
		log.Error("recording stopped; starting again", "err", err, "in", wait)
		if c.sleep(ctx, wait) != nil {
			break
		}
		wait = min(2*wait, recorderRestartMax)
	}
	log.Info("recording ended")
}

// wake tells the deployments of series that the recorder did something.
func (c *Candles) wake(series string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := c.recs[series]; r != nil {
		close(r.wake)
		r.wake = make(chan struct{})
	}
}

// woken is the channel closed at the next recorder event of series.
func (c *Candles) woken(series string) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := c.recs[series]; r != nil {
		return r.wake
	}
	return nil
}

// Stop stops every recorder, and any a deployment would start later,
// and waits for them; the caller closes the store after it.
func (c *Candles) Stop() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.stopped = true
	for _, r := range c.recs {
		r.cancel()
	}
	c.mu.Unlock()
	c.wg.Wait()
}

// latest is the newest stored bar of series after after, when it is still
// the latest closed bar at now (its successor has not closed yet).
func (c *Candles) latest(series string, after time.Time) (Bar, bool, error) {
	info, err := c.Store.Info(series)
	if err != nil {
		if history.IsNotFound(err) {
			return Bar{}, false, nil
		}
		return Bar{}, false, err
	}
	if info.Bars == 0 || !info.Last.After(after) || !c.now().Before(info.Last.Add(2*info.Granularity.Duration())) {
		return Bar{}, false, nil
	}
	b, err := c.Store.Load(series, info.Last, info.Last)
	if err != nil {
		return Bar{}, false, err
	}
	bs := Bars(b)
	return bs[len(bs)-1], true, nil
}

// candleBars is a deployment's BarSource over the candles the node
// records: the series is recorded from its first Next until the loop's
// context ends.
type candleBars struct {
	c    *Candles
	tape Tape
	held bool
}

// Next implements BarSource: the latest closed bar after after, once the
// recorder has stored it. Bars stored while the loop was busy, or
// back-filled after a gap, are passed over for the newest one (the
// deployment counts them as missed).
func (s *candleBars) Next(ctx context.Context, series string, after time.Time) (Bar, error) {
	if !s.held {
		s.c.hold(ctx, s.tape, series)
		s.held = true
	}
	every := s.c.Every
	if every <= 0 {
		every = DefaultCandlePoll
	}
	var t *time.Ticker
	for {
		woken := s.c.woken(series) // before the read: a bar stored after it wakes the wait
		b, ok, err := s.c.latest(series, after)
		if err != nil {
			return Bar{}, err
		}
		if ok {
			return b, nil
		}
		if t == nil {
			t = time.NewTicker(every)
			defer t.Stop()
		}
		select {
		case <-ctx.Done():
			return Bar{}, ctx.Err()
		case <-woken:
		case <-t.C:
		}
	}
}

// Prepare readies series for a deployment on venue vc that warms up on
// its n bars before before: it refuses a series the provider cannot
// stream, and makes sure the history store holds the warm-up, fetching
// what is missing from the provider's REST history (the bars `wicket data
// fetch` would store). A venue whose candles the node does not record
// (paper) needs nothing. Every refusal names the command to run.
func (c *Candles) Prepare(ctx context.Context, vc project.Venue, series string, before time.Time, n int) error {
	tape, name, ok := c.Tape(vc)
	if !ok {
		return nil
	}
	sym, g, err := history.CheckSeries(series)
	if err != nil {
		return errorf(KindBadRequest, "%v", err)
	}
	psym, err := tape.Symbol(sym)
	if err != nil {
		return errorf(KindBadRequest, "series %s: venue %s's deployments decide on %s's bars, and %v", series, vc.Name, name, err)
	}
	// A stream asked with an ended context returns its refusals (a
	// granularity it does not stream, a missing key) before it connects.
	ended, cancel := context.WithCancel(ctx)
	cancel()
	var pe *provider.Error
	if err := tape.Stream(ended, psym, g, nil, func(strategy.Bars) error { return nil }); errors.As(err, &pe) && pe.Permanent {
		return errorf(KindBadRequest, "series %s: venue %s's deployments decide on the bars the node records from %s, which refuses to stream it (%v): deploy a series it streams", series, vc.Name, name, err)
	}
	step := g.Duration()
	from := before.Add(-time.Duration(n+1) * step) // the range the warm-up is read from
	fix := fmt.Sprintf("fetch it first (wicket data fetch %s --provider %s), then deploy", series, name)
	refuse := func(err error) error {
		return errorf(KindBadRequest, "series %s: venue %s's deployments decide on %s's bars, and its warm-up could not be fetched from %s (%v): %s",
			series, vc.Name, name, name, err, fix)
	}
	fetch := func(opt provider.FetchOptions) error {
		opt.Now = func() time.Time { return before }
		res, err := provider.Fetch(ctx, c.Store, tape, series, opt)
		if err != nil {
			return err
		}
		if res.Added > 0 {
			c.log().Info("deployment warm-up fetched", "series", series, "provider", name, "bars", res.Added,
				"from", res.First.Format(time.RFC3339), "to", res.Last.Format(time.RFC3339))
		}
		return nil
	}
	info, err := c.Store.Info(series)
	switch {
	case history.IsNotFound(err):
		err = fetch(provider.FetchOptions{From: from})
	case err != nil:
		return errorf(KindInternal, "series %s: the history store could not be read: %v", series, err)
	case info.Source != name:
		return errorf(KindBadRequest, "series %s holds %s bars, but venue %s's deployments decide on %s's, which the node records into it: delete it (wicket data delete %s) and fetch it from %s (wicket data fetch %s --provider %s), then deploy",
			series, info.Source, vc.Name, name, series, name, series, name)
	default:
		if info.First.After(from) { // older bars than stored: the range before the first one
			err = fetch(provider.FetchOptions{From: from, To: info.First.Add(-step), Full: true})
		}
		if err == nil {
			err = fetch(provider.FetchOptions{}) // up to the last closed bar
		}
	}
	var he *history.Error
	if err != nil && !errors.As(err, &he) {
		return refuse(err)
	}
	if err != nil {
		return errorf(KindInternal, "series %s: the fetched warm-up could not be stored: %v", series, err)
	}
	if _, err := c.Store.Count(series, from, before.Add(-step)); err != nil {
		return errorf(KindBadRequest, "series %s: %s has no bars of it before %s, so the deployment would have no warm-up: %s",
			series, name, before.UTC().Format(time.RFC3339), fix)
	}
	return nil
}
