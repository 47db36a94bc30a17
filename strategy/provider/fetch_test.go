package provider_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wicket/strategy"
	"wicket/strategy/history"
	"wicket/strategy/provider"
	"wicket/strategy/provider/binance"
	"wicket/strategy/provider/providertest"
)

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

type rig struct {
	fake  *providertest.Binance
	clock *providertest.Clock
	src   *binance.Client
	store *history.Store
}

// newRig serves BTCUSDT 1m bars from t0 to well past the clock, which starts
// at now (so the bars after it are still forming or not yet there).
func newRig(t *testing.T, now time.Time, holes ...[2]time.Time) *rig {
	t.Helper()
	clock := providertest.NewClock(now)
	gen := providertest.Gen{Start: t0, End: t0.Add(365 * 24 * time.Hour), Step: time.Minute, Holes: holes}
	f := providertest.NewBinance(clock, map[string]providertest.Gen{"BTCUSDT": gen})
	t.Cleanup(f.Close)
	s, err := history.Open(filepath.Join(t.TempDir(), "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	src := binance.New(binance.Config{BaseURL: f.URL, PageLimit: 100, Transport: &provider.Transport{Sleep: clock.Sleep, Now: clock.Now}})
	return &rig{f, clock, src, s}
}

func (r *rig) fetch(t *testing.T, opt provider.FetchOptions) provider.FetchResult {
	t.Helper()
	opt.Now = r.clock.Now
	res, err := provider.Fetch(context.Background(), r.store, r.src, "BTC-USD@1m", opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// checkSeries loads the whole series and checks it is exactly the
// generator's bars over [from, to): no duplicate, no hole it did not have.
func (r *rig) checkSeries(t *testing.T, from, to time.Time) {
	t.Helper()
	b, err := r.store.Load("BTC-USD@1m", time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	gen := providertest.Gen{Start: t0, End: t0.Add(365 * 24 * time.Hour), Step: time.Minute}
	i := 0
	for ts := from; ts.Before(to); ts = ts.Add(time.Minute) {
		if !r.has(ts) {
			continue
		}
		if i >= b.Len() {
			t.Fatalf("series ends at %d bars; missing %s", b.Len(), ts)
		}
		want := gen.At(ts)
		if b.Time[i] != ts.Unix() || b.Close[i] != want.C || b.Open[i] != want.O {
			t.Fatalf("bar %d: time %s close %v, want %s close %v", i, time.Unix(b.Time[i], 0).UTC(), b.Close[i], ts, want.C)
		}
		i++
	}
	if i != b.Len() {
		t.Fatalf("series has %d bars, want %d", b.Len(), i)
	}
}

func (r *rig) has(ts time.Time) bool {
	return r.fake.Symbols["BTCUSDT"].Has(ts)
}

func TestFetchIncrementalResume(t *testing.T) {
	now := t0.Add(10*time.Hour + 30*time.Second) // the 10:00 bar is still forming
	r := newRig(t, now)
	res := r.fetch(t, provider.FetchOptions{From: t0})
	if res.Added != 600 || res.First != t0 || res.Last != t0.Add(599*time.Minute) || res.Pages != 6 || res.Provider != "binance" || res.ProviderSymbol != "BTCUSDT" {
		t.Fatalf("first fetch: %+v", res)
	}
	r.checkSeries(t, t0, t0.Add(600*time.Minute))

	// Re-running adds nothing and says so, without asking for old bars.
	before := len(r.f().Requests())
	res = r.fetch(t, provider.FetchOptions{})
	if res.Added != 0 || !res.UpToDate {
		t.Fatalf("re-run: %+v", res)
	}
	if n := len(r.f().Requests()); n != before {
		t.Errorf("an up-to-date fetch sent %d requests", n-before)
	}

	// Later, only the new closed bars are asked for and stored.
	r.clock.Sleep(context.Background(), 2*time.Hour)
	res = r.fetch(t, provider.FetchOptions{})
	if res.Added != 120 || res.First != t0.Add(600*time.Minute) {
		t.Fatalf("resume: %+v", res)
	}
	reqs := r.f().Requests()
	if q := reqs[before].Query; !strings.Contains(q, "startTime=1704103200000") {
		t.Errorf("resume asked %q, want startTime at 10:00", q)
	}
	r.checkSeries(t, t0, t0.Add(720*time.Minute))
	info, err := r.store.Info("BTC-USD@1m")
	if err != nil || info.Source != "binance" || info.ProviderSymbol != "BTCUSDT" || !info.FetchedAt.Equal(r.clock.Now().Truncate(time.Second)) {
		t.Fatalf("info %+v, %v", info, err)
	}
}

func (r *rig) f() *providertest.Binance { return r.fake }

func TestFetchStopThenResume(t *testing.T) {
	r := newRig(t, t0.Add(24*time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	pages := 0
	_, err := provider.Fetch(ctx, r.store, r.src, "BTC-USD@1m", provider.FetchOptions{From: t0, Now: r.clock.Now, Progress: func(p provider.Progress) {
		pages++
		if pages == 3 {
			cancel() // Ctrl-C after the third page was committed
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped fetch: %v", err)
	}
	info, err := r.store.Info("BTC-USD@1m")
	if err != nil || info.Bars != 300 {
		t.Fatalf("after the stop: %+v %v; want the 3 committed pages", info, err)
	}
	res := r.fetch(t, provider.FetchOptions{})
	if res.Added != 1440-300 || res.First != t0.Add(300*time.Minute) {
		t.Fatalf("resume: %+v", res)
	}
	r.checkSeries(t, t0, t0.Add(24*time.Hour))
}

func TestFetchFullReplaces(t *testing.T) {
	r := newRig(t, t0.Add(5*time.Hour))
	r.fetch(t, provider.FetchOptions{From: t0})
	res := r.fetch(t, provider.FetchOptions{Full: true, From: t0.Add(time.Hour), To: t0.Add(2*time.Hour - time.Minute)})
	if res.Added != 60 || !res.Replaced {
		t.Fatalf("--full over one hour: %+v", res)
	}
	r.checkSeries(t, t0, t0.Add(5*time.Hour))
	res = r.fetch(t, provider.FetchOptions{Full: true})
	if res.Added != 300 {
		t.Fatalf("--full of the whole series: %+v", res)
	}
	r.checkSeries(t, t0, t0.Add(5*time.Hour))
}

func TestFetchReportsGaps(t *testing.T) {
	holes := [][2]time.Time{
		{t0.Add(100 * time.Minute), t0.Add(103 * time.Minute)},
		{t0.Add(250 * time.Minute), t0.Add(260 * time.Minute)}, // spans a page boundary
	}
	r := newRig(t, t0.Add(6*time.Hour), holes...)
	res := r.fetch(t, provider.FetchOptions{From: t0})
	if res.Gaps.Count != 2 || res.Gaps.Largest != 10*time.Minute || !res.Gaps.At.Equal(t0.Add(250*time.Minute)) {
		t.Fatalf("gaps %+v", res.Gaps)
	}
	if res.Added != 360-13 {
		t.Fatalf("added %d", res.Added)
	}
	r.checkSeries(t, t0, t0.Add(6*time.Hour))
}

func TestFetchRefusesAnotherSource(t *testing.T) {
	r := newRig(t, t0.Add(time.Hour))
	bars := strategy.Bars{Time: []int64{t0.Unix()}, Open: []float64{1}, High: []float64{1}, Low: []float64{1}, Close: []float64{1}, Volume: []float64{0}}
	if err := r.store.Write(context.Background(), "BTC-USD@1m", bars, history.WriteOptions{Source: history.SourceDemo}); err != nil {
		t.Fatal(err)
	}
	_, err := provider.Fetch(context.Background(), r.store, r.src, "BTC-USD@1m", provider.FetchOptions{Now: r.clock.Now})
	if err == nil || !strings.Contains(err.Error(), "holds demo bars, not binance ones") || !strings.Contains(err.Error(), "wicket data delete BTC-USD@1m") {
		t.Fatalf("fetch into a demo series: %v", err)
	}
	_, err = provider.Fetch(context.Background(), r.store, r.src, "SPY@1m", provider.FetchOptions{Now: r.clock.Now})
	if err == nil || !strings.Contains(err.Error(), `binance has no symbol "SPY": binance takes crypto pairs`) {
		t.Fatalf("unmappable symbol: %v", err)
	}
}

func TestFloor(t *testing.T) {
	at := time.Date(2024, 3, 5, 13, 47, 12, 0, time.UTC)
	for g, want := range map[strategy.Granularity]time.Time{
		"1m": time.Date(2024, 3, 5, 13, 47, 0, 0, time.UTC), "15m": time.Date(2024, 3, 5, 13, 45, 0, 0, time.UTC),
		"4h": time.Date(2024, 3, 5, 12, 0, 0, 0, time.UTC), "1d": time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC),
	} {
		if got := provider.Floor(at, g); !got.Equal(want) {
			t.Errorf("Floor(%s) = %s, want %s", g, got, want)
		}
	}
}

// TestFetchFromSkipsAhead: an incremental --from after the last stored bar
// starts there, and the hole it leaves is reported.
func TestFetchFromSkipsAhead(t *testing.T) {
	r := newRig(t, t0.Add(14*time.Hour))
	r.fetch(t, provider.FetchOptions{From: t0, To: t0.Add(9*time.Hour + 59*time.Minute)})
	res := r.fetch(t, provider.FetchOptions{From: t0.Add(12 * time.Hour)})
	if res.Added != 120 || res.First != t0.Add(12*time.Hour) || res.Gaps.Count != 1 || res.Gaps.Largest != 2*time.Hour {
		t.Fatalf("skip ahead: %+v", res)
	}
	_, err := provider.Fetch(context.Background(), r.store, r.src, "BTC-USD@1m", provider.FetchOptions{From: t0.Add(-time.Hour), Now: r.clock.Now})
	if err == nil || !strings.Contains(err.Error(), "pass --full") {
		t.Fatalf("--from before the first bar: %v", err)
	}
}
