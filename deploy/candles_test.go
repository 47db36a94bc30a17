package deploy

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node/nodetest"
	"wicket/node/venuerig"
	"wicket/strategy"
	"wicket/strategy/history"
	"wicket/strategy/provider"
	"wicket/strategy/provider/alpaca"
	"wicket/strategy/provider/binance"
	"wicket/strategy/provider/providertest"
)

// candleT0 is the first bar of the candle tests; "now" starts at
// candleT0+10m5s, inside the bar that opened at 00:10.
var candleT0 = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

func minute(i int) time.Time { return candleT0.Add(time.Duration(i) * time.Minute) }

// candleRig is a node with one real venue behind its API's fake, the
// provider's fake (REST history and bar stream) with the generator gen,
// a history store, and a runner whose Candles record from that provider.
type candleRig struct {
	t       *testing.T
	clk     *testkit.Clock
	gen     providertest.Gen
	hist    *history.Store
	candles *Candles
	store   *Store
	r       *Runner
	venue   string
	series  string
	// release lets the provider's second stream connection send its bars
	// (the first is dropped after its own): the test moves the clock first.
	release     chan struct{}
	releaseOnce sync.Once
}

// newCandleRig starts the rig for provider name (binance or alpaca); conns
// scripts the provider's stream, the open times of the closed bars each
// connection sends (all but the last connection are then dropped).
func newCandleRig(t *testing.T, name string, gen providertest.Gen, conns [][]time.Time) *candleRig {
	g := &candleRig{t: t, clk: testkit.NewClock(minute(10).Add(5 * time.Second)), gen: gen, release: make(chan struct{})}
	gate := func(n int) {
		if n > 0 {
			<-g.release
		}
	}
	// The provider's own clock is an hour on: every bar our clock has
	// closed is closed there too; which bars are closed is ours to say.
	pclock := providertest.NewClock(minute(60))
	tr := &provider.Transport{Sleep: pclock.Sleep, Now: pclock.Now}
	var (
		tape Tape
		rv   venuerig.Venue
	)
	switch name {
	case binance.Name:
		f := providertest.NewBinance(pclock, map[string]providertest.Gen{"BTCUSDT": gen})
		t.Cleanup(f.Close)
		for _, c := range conns {
			var evs []providertest.StreamEvent
			for _, at := range c {
				evs = append(evs, providertest.StreamEvent{T: at}, providertest.StreamEvent{T: at, Final: true})
			}
			f.Connections = append(f.Connections, evs)
		}
		f.Gate = gate
		tape = binance.New(binance.Config{BaseURL: f.URL, StreamURL: "ws" + strings.TrimPrefix(f.URL, "http"), Transport: tr})
		vf := venuerig.Binance(t, map[string]string{"USDT": "20000"}, "BTCUSDT")
		rv = venuerig.OnBinance(vf, project.Venue{Name: "bn", Environment: "testnet", MayArm: true, Symbols: []string{"BTCUSDT"}})
		g.venue = "bn"
	case alpaca.Name:
		f := providertest.NewAlpaca(pclock, nil, map[string]providertest.Gen{"BTC/USD": gen})
		t.Cleanup(f.Close)
		f.KeyID, f.Secret = testkit.Secret(t, 16), testkit.Secret(t, 16)
		f.StreamConnections, f.StreamGate = conns, gate
		tape = alpaca.New(alpaca.Config{BaseURL: f.URL, StreamURL: "ws" + strings.TrimPrefix(f.URL, "http"), KeyID: f.KeyID, Secret: f.Secret, Transport: tr})
		vf := venuerig.Alpaca(t, "20000", "BTC/USD")
		rv = venuerig.OnAlpaca(vf, project.Venue{Name: "al", Environment: "paper", MayArm: true, Symbols: []string{"BTC-USD"}})
		g.venue = "al"
	}
	g.series = symbol + "@1m"
	ns := venuerig.Start(t, []venuerig.Venue{rv}, nodetest.WithVenueTimeout(5*time.Second))
	var err error
	if g.hist, err = history.Open(filepath.Join(t.TempDir(), "history.db")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.hist.Close() })
	g.candles = &Candles{Store: g.hist, Tapes: map[string]Tape{name: tape}, Now: g.clk.Now, Every: time.Hour, // wakes come from the recorder
		Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }} // reconnect at once
	t.Cleanup(g.open) // before the fakes close: a held connection ends
	g.store = openStore(t, t.TempDir())
	g.r, err = New(ctxT(t), Config{Project: ns.Config, Store: g.store, Node: ns.Client(), Strategies: newPool(t), Now: g.clk.Now, NewID: seq(),
		History: storeHistory(g.hist), Candles: g.candles, OperatorKey: ns.OperatorKey.Public().(ed25519.PublicKey)})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// open lets the stream's later connections send their bars.
func (g *candleRig) open() { g.releaseOnce.Do(func() { close(g.release) }) }

// storeHistory reads a warm-up from the history store, as wicket node
// serve's does.
func storeHistory(s *history.Store) History {
	return func(ctx context.Context, series string, before time.Time, n int) (strategy.Bars, error) {
		_, g, _ := strategy.ParseSeries(series)
		b, err := s.Load(series, before.Add(-time.Duration(n+1)*g.Duration()), before.Add(-g.Duration()))
		if history.IsNotFound(err) {
			return strategy.Bars{Series: series}, nil
		}
		if err != nil {
			return strategy.Bars{Series: series}, nil // no bars in the range
		}
		if b.Len() > n {
			b = b.Slice(b.Len()-n, b.Len())
		}
		return b, nil
	}
}

func (g *candleRig) spec() Spec {
	return Spec{Strategy: "flip.star", Source: flip, Series: g.series, Venue: g.venue, Mode: ModePropose, Capital: decimal.NewFromInt(1000), Warmup: 10}
}

// decisions is the deployment's journaled decisions by bar.
func (g *candleRig) decisions(id string) map[time.Time]Decision {
	ds, err := g.store.Decisions(id)
	if err != nil {
		g.t.Fatal(err)
	}
	out := map[time.Time]Decision{}
	for _, d := range ds {
		out[d.Bar.UTC()] = d
	}
	return out
}

// stored checks the history store holds exactly the generator's bars
// opening at minutes lo..hi, each once.
func (g *candleRig) stored(lo, hi int) {
	g.t.Helper()
	b, err := g.hist.Load(g.series, time.Time{}, time.Time{})
	if err != nil {
		g.t.Fatal(err)
	}
	if b.Len() != hi-lo+1 {
		g.t.Fatalf("the store holds %d bars (%v), want minutes %d..%d", b.Len(), b.Time, lo, hi)
	}
	for i := range b.Len() {
		want := g.gen.At(minute(lo + i))
		if b.Time[i] != minute(lo+i).Unix() || b.Open[i] != want.O || b.Close[i] != want.C {
			g.t.Fatalf("bar %d: %d o=%v c=%v, want %d o=%v c=%v", i, b.Time[i], b.Open[i], b.Close[i], minute(lo+i).Unix(), want.O, want.C)
		}
	}
}

// TestCandlesRecordDeployedSeries: on a Binance and an Alpaca venue (the
// fakes of their APIs and of their providers' market data), a deployment
// of a series the store does not hold fetches its warm-up from the
// provider's REST history at deploy; once it runs, the node records the
// provider's closed bars from its stream (no wicket data record) and the
// deployment decides on the recorded bar. The stream then drops; the node
// reconnects four minutes later and back-fills the bars it missed over
// REST, so the store has every bar once, and the deployment decides on the
// latest closed bar, never on the back-filled ones it missed (late).
func TestCandlesRecordDeployedSeries(t *testing.T) {
	for _, name := range []string{binance.Name, alpaca.Name} {
		t.Run(name, func(t *testing.T) {
			gen := providertest.Gen{Start: candleT0.Add(-24 * time.Hour), End: candleT0.Add(24 * time.Hour), Step: time.Minute}
			g := newCandleRig(t, name, gen, [][]time.Time{{minute(9), minute(10)}, {minute(13)}})
			d, err := g.r.Create(ctxT(t), g.spec())
			if err != nil {
				t.Fatal(err)
			}
			g.stored(0, 9) // the warm-up, fetched at deploy: 10 bars up to the last closed one
			ctx, cancel := context.WithCancel(ctxT(t))
			defer func() { cancel(); g.r.Wait(); g.candles.Stop() }()
			g.r.Start(ctx)
			testkit.WaitFor(t, "the decision on the recorded bar of 00:10", 30*time.Second, func() (bool, string) {
				dc, ok := g.decisions(d.ID)[minute(10)]
				return ok && dc.Status == DecisionDecided, fmt.Sprint(g.decisions(d.ID))
			})
			g.stored(0, 10)
			g.clk.Advance(4 * time.Minute) // 00:14:05: the stream comes back four minutes on
			g.open()
			testkit.WaitFor(t, "the decision on the latest closed bar after the gap", 30*time.Second, func() (bool, string) {
				dc, ok := g.decisions(d.ID)[minute(13)]
				return ok && dc.Status == DecisionDecided, fmt.Sprint(g.decisions(d.ID))
			})
			g.stored(0, 13) // 11 and 12 back-filled over REST (13 too: it had closed)
			ds := g.decisions(d.ID)
			for _, m := range []int{11, 12} {
				if ds[minute(m)].Status != DecisionMissed {
					t.Errorf("the back-filled bar of minute %d: %+v, want missed (never traded late)", m, ds[minute(m)])
				}
			}
			info, err := g.hist.Info(g.series)
			if err != nil || info.Source != name {
				t.Errorf("the series' source: %+v %v, want %s", info, err, name)
			}
		})
	}
}

// TestCandlesWarmupAtDeploy: a series holding only its latest bars gets
// the older ones of its warm-up from the provider at deploy, in place; a
// series the provider has no bars of before now is refused, naming the
// command that fetches it; so is one recorded from another provider.
func TestCandlesWarmupAtDeploy(t *testing.T) {
	gen := providertest.Gen{Start: candleT0.Add(-24 * time.Hour), End: candleT0.Add(24 * time.Hour), Step: time.Minute}
	g := newCandleRig(t, binance.Name, gen, nil)
	part := strategy.Bars{Series: g.series}
	for i := 6; i <= 9; i++ {
		b := gen.At(minute(i))
		appendBar(&part, b.T.Unix(), b.O, b.H, b.L, b.C, b.V)
	}
	if err := g.hist.Append(ctxT(t), g.series, part, history.AppendOptions{Source: binance.Name}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.r.Create(ctxT(t), g.spec()); err != nil {
		t.Fatal(err)
	}
	g.stored(0, 9)

	none := providertest.Gen{Start: candleT0.Add(-48 * time.Hour), End: candleT0.Add(-24 * time.Hour), Step: time.Minute} // delisted a day ago
	g = newCandleRig(t, binance.Name, none, nil)
	_, err := g.r.Create(ctxT(t), g.spec())
	wantErr(t, err, "binance has no bars of it", "wicket data fetch BTC-USD@1m --provider binance")
	if _, err := g.hist.Info(g.series); !history.IsNotFound(err) {
		t.Errorf("a refused deployment left the series: %v", err)
	}

	g = newCandleRig(t, binance.Name, gen, nil)
	if err := g.hist.Append(ctxT(t), g.series, part, history.AppendOptions{Source: "csv"}); err != nil {
		t.Fatal(err)
	}
	_, err = g.r.Create(ctxT(t), g.spec())
	wantErr(t, err, "holds csv bars", "wicket data delete BTC-USD@1m", "wicket data fetch BTC-USD@1m --provider binance")
}

// TestCandlesRefuseWhatTheProviderCannotStream: on an Alpaca venue, whose
// provider streams 1m bars only, a deployment of an hourly series is
// refused before anything is fetched, naming why; on a Binance venue an
// hourly series deploys (its warm-up fetched from the provider).
func TestCandlesRefuseWhatTheProviderCannotStream(t *testing.T) {
	gen := providertest.Gen{Start: candleT0.Add(-24 * time.Hour), End: candleT0.Add(24 * time.Hour), Step: time.Hour}
	g := newCandleRig(t, alpaca.Name, gen, nil)
	spec := g.spec()
	spec.Series = symbol + "@1h"
	_, err := g.r.Create(ctxT(t), spec)
	wantErr(t, err, "1m bars only", "deploy a series it streams")
	if _, err := g.hist.Info(spec.Series); !history.IsNotFound(err) {
		t.Errorf("a refused deployment fetched its series: %v", err)
	}
	g = newCandleRig(t, binance.Name, gen, nil)
	spec.Venue = g.venue
	if _, err := g.r.Create(ctxT(t), spec); err != nil {
		t.Fatal(err)
	}
	if n, err := g.hist.Count(spec.Series, time.Time{}, time.Time{}); err != nil || n != 10 {
		t.Fatalf("the hourly warm-up: %d bars (%v), want 10", n, err)
	}
}

// idleTape is a provider whose stream connects and sends nothing: the
// benchmark stores the bars itself, as the recorder would.
type idleTape struct{}

func (idleTape) Name() string                      { return binance.Name }
func (idleTape) Symbol(sym string) (string, error) { return "BTCUSDT", nil }
func (idleTape) Bars(context.Context, string, strategy.Granularity, time.Time, time.Time, func(strategy.Bars) error) error {
	return nil
}
func (idleTape) Stream(ctx context.Context, _ string, _ strategy.Granularity, connected func(), _ func(strategy.Bars) error) error {
	if connected != nil {
		connected()
	}
	<-ctx.Done()
	return ctx.Err()
}

// BenchmarkCandlesStoredToNext measures how long a deployment's bar
// source takes to hand over a bar once the recorder has stored it (the
// history store's append, then the recorder's wake): ns/op is the
// append and the hand-over of one bar. The fallback poll is an hour, so
// only the wake can deliver it.
func BenchmarkCandlesStoredToNext(b *testing.B) {
	hist, err := history.Open(filepath.Join(b.TempDir(), "history.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer hist.Close()
	series := symbol + "@1m"
	clk := testkit.NewClock(candleT0)
	c := &Candles{Store: hist, Tapes: map[string]Tape{binance.Name: idleTape{}}, Now: clk.Now, Every: time.Hour}
	src := c.Bars(project.Venue{Kind: project.KindBinance}, series)
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); c.Stop() }()
	store := func(i int) {
		t := candleT0.Add(time.Duration(i) * time.Minute)
		bar := strategy.Bars{Series: series}
		appendBar(&bar, t.Unix(), 100, 101, 99, 100.5, 1)
		clk.Set(t.Add(time.Minute + time.Second))
		if err := hist.Append(ctx, series, bar, history.AppendOptions{Source: binance.Name}); err != nil {
			b.Fatal(err)
		}
		c.wake(series)
	}
	store(0)
	after, err := src.Next(ctx, series, time.Time{})
	if err != nil {
		b.Fatal(err)
	}
	got := make(chan time.Time)
	go func() {
		for {
			bar, err := src.Next(ctx, series, after.Time)
			if err != nil {
				return
			}
			after = bar
			got <- bar.Time
		}
	}()
	b.ResetTimer()
	for i := 1; i <= b.N; i++ {
		store(i)
		if t := <-got; !t.Equal(candleT0.Add(time.Duration(i) * time.Minute)) {
			b.Fatalf("bar %d: got %s", i, t)
		}
	}
}

// TestCandlesAfterDowntime: a deployment whose loop starts five minutes
// after its last stored bar (the node was down) gets the bars it missed
// back-filled into the store from the provider's REST history as the
// recorder connects, and decides on the latest closed one only: the
// back-filled ones are missed, never traded late.
func TestCandlesAfterDowntime(t *testing.T) {
	gen := providertest.Gen{Start: candleT0.Add(-24 * time.Hour), End: candleT0.Add(24 * time.Hour), Step: time.Minute}
	g := newCandleRig(t, binance.Name, gen, nil) // the stream connects and sends nothing
	d, err := g.r.Create(ctxT(t), g.spec())
	if err != nil {
		t.Fatal(err)
	}
	g.clk.Set(minute(15).Add(5 * time.Second))
	ctx, cancel := context.WithCancel(ctxT(t))
	defer func() { cancel(); g.r.Wait(); g.candles.Stop() }()
	g.r.Start(ctx)
	testkit.WaitFor(t, "the decision on the latest closed bar", 30*time.Second, func() (bool, string) {
		dc, ok := g.decisions(d.ID)[minute(14)]
		return ok && dc.Status == DecisionDecided, fmt.Sprint(g.decisions(d.ID))
	})
	g.stored(0, 14)
	ds := g.decisions(d.ID)
	for m := 10; m <= 13; m++ {
		if ds[minute(m)].Status != DecisionMissed {
			t.Errorf("minute %d, back-filled after the downtime: %+v, want missed", m, ds[minute(m)])
		}
	}
}

// TestCandlesNeverHandAStaleBar: a bar in the store that is no longer
// the latest closed one when the deployment's loop starts (stored by
// another recorder before a downtime, the provider having nothing since)
// is not decided on; the next bar the stream closes is.
func TestCandlesNeverHandAStaleBar(t *testing.T) {
	gen := providertest.Gen{Start: candleT0.Add(-24 * time.Hour), End: candleT0.Add(24 * time.Hour), Step: time.Minute,
		Holes: [][2]time.Time{{minute(11), minute(20)}}}
	g := newCandleRig(t, binance.Name, gen, [][]time.Time{{minute(20)}})
	d, err := g.r.Create(ctxT(t), g.spec())
	if err != nil {
		t.Fatal(err)
	}
	b := gen.At(minute(10))
	stale := strategy.Bars{Series: g.series}
	appendBar(&stale, b.T.Unix(), b.O, b.H, b.L, b.C, b.V)
	if err := g.hist.Append(ctxT(t), g.series, stale, history.AppendOptions{Source: binance.Name}); err != nil {
		t.Fatal(err)
	}
	g.clk.Set(minute(21).Add(5 * time.Second))
	ctx, cancel := context.WithCancel(ctxT(t))
	defer func() { cancel(); g.r.Wait(); g.candles.Stop() }()
	g.r.Start(ctx)
	testkit.WaitFor(t, "the decision on the stream's bar", 30*time.Second, func() (bool, string) {
		dc, ok := g.decisions(d.ID)[minute(20)]
		return ok && dc.Status == DecisionDecided, fmt.Sprint(g.decisions(d.ID))
	})
	if dc := g.decisions(d.ID)[minute(10)]; dc.Status == DecisionDecided {
		t.Fatalf("the stale bar of minute 10 was decided on: %+v", dc)
	}
}
