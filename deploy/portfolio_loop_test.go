package deploy

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/testkit"
	"wicket/strategy"
)

// present weighs each of two assets 0.45 at a bar it has (close over
// close) and decides nothing for one without: its decision at a bar
// depends on which assets have a bar there.
const present = `"""0.45 of each asset that has a bar."""
universe = ["BTC-USD@1m", "SOL-USD@1m"]
rebalance = "drift:0.05"

def signals(u):
    return {a: 0.45 * u[a].close / u[a].close for a in u.assets}
`

// quietLeg is the bar source of an asset that stops trading when the
// deployment goes live (a venue that skips empty minutes sends nothing
// for it): it has no bar to hand until the calendar bar of late was
// decided without it, then hands that bar (it arrives late), then none.
type quietLeg struct {
	late    Bar
	decided chan struct{} // closed when the calendar bar of late was decided
	handed  bool
}

func (q *quietLeg) Next(ctx context.Context, _ string, after time.Time) (Bar, error) {
	if !q.handed && after.Before(q.late.Time) {
		select {
		case <-ctx.Done():
			return Bar{}, ctx.Err()
		case <-q.decided:
			q.handed = true
			return q.late, nil
		}
	}
	<-ctx.Done()
	return Bar{}, ctx.Err()
}

// legSources routes each series to its own bar source.
type legSources map[string]BarSource

func (s legSources) Next(ctx context.Context, series string, after time.Time) (Bar, error) {
	return s[series].Next(ctx, series, after)
}

// TestDeployPortfolioQuietAssetDoesNotStall: a portfolio whose one asset
// stops trading live (its venue sends no bar for an empty minute) is not
// held up by it: each calendar bar is decided once the quiet bound passed
// after its close (the clock steps; the wait advances it), the quiet
// asset without a bar there takes no weight (the calendar rule), and its
// bar that arrives after its calendar bar was decided is recorded, never
// traded, and counted missed with the reason; the report replays the
// decision at its calendar bar without it, as live made it. Before, the
// loop waited for every leg's next bar and decided nothing.
func TestDeployPortfolioQuietAssetDoesNotStall(t *testing.T) {
	const warm, n = 40, 30
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	btc, sol := "BTC-USD@1m", "SOL-USD@1m"
	all := map[string]strategy.Bars{
		btc: walk(btc, warm+n, 7, 100, start, nil),
		sol: walk(sol, warm+n, 13, 20, start, nil),
	}
	live := time.Unix(all[btc].Time[warm], 0).UTC()
	lateAt := live.Add(10 * time.Minute)
	clk := testkit.NewSteppingClock(live, time.Millisecond)
	btcBars := all[btc]
	active := &multiTape{bars: map[string][]Bar{btc: Bars(btcBars.Slice(warm, warm+n))}, gran: time.Minute}
	solBars := all[sol]
	k := index(solBars, lateAt.Unix())
	quiet := &quietLeg{late: Bars(solBars.Slice(k, k+1))[0], decided: make(chan struct{})}
	var (
		mu      sync.Mutex
		steps   []time.Time // the calendar bars decided
		stepped []time.Time // the clock when each was
		once    sync.Once
	)
	const bound = 20 * time.Second
	g := newPortfolioRigWith(t, clk, all, legSources{btc: active, sol: quiet}, func(c *Config) {
		c.QuietBound, c.MarkWait = bound, -1
		c.After = func(d time.Duration) <-chan time.Time { // the wait passes on the clock, at once
			clk.Advance(d)
			ch := make(chan time.Time, 1)
			ch <- clk.Now()
			return ch
		}
		c.OnStep = func(_ string, bar time.Time) {
			mu.Lock()
			steps, stepped = append(steps, bar), append(stepped, clk.Now())
			mu.Unlock()
			if bar.Equal(lateAt) {
				once.Do(func() { close(quiet.decided) })
			}
		}
	})
	active.clock, active.marks = clk, g.marks
	d, err := g.r.Create(ctxT(t), Spec{Strategy: "present.star", Source: present, Venue: "paper", Mode: ModeAuto, Capital: decimal.NewFromInt(10000), Warmup: warm})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctxT(t))
	g.r.Start(ctx)
	testkit.WaitFor(t, "every calendar bar decided and the late bar recorded", 60*time.Second, func() (bool, string) {
		dep, err := g.r.Get(d.ID)
		if err != nil {
			return false, err.Error()
		}
		mu.Lock()
		defer mu.Unlock()
		return len(steps) == n && dep.Legs[1].Late == 1, fmt.Sprintf("decided %d of %d calendar bars, %d late bar(s)", len(steps), n, dep.Legs[1].Late)
	})
	cancel()
	g.r.Wait()

	for i, at := range steps {
		want := live.Add(time.Duration(i) * time.Minute)
		if !at.Equal(want) {
			t.Fatalf("calendar bar %d decided at %s, want %s", i, at, want)
		}
		if close := at.Add(time.Minute); stepped[i].Before(close.Add(bound)) {
			t.Fatalf("calendar bar %s decided at %s, before the quiet bound passed after its close", at, stepped[i])
		}
	}
	decs, err := g.store.Decisions(d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(decs) != n {
		t.Fatalf("%d decisions for %d calendar bars", len(decs), n)
	}
	for _, dc := range decs {
		if dc.Status != DecisionDecided {
			t.Fatalf("bar %s: %s (%s), want decided", dc.Bar, dc.Status, dc.Note)
		}
	}
	intents, err := g.store.Intents(d.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range intents {
		if in.N == 1 {
			t.Fatalf("the quiet asset took an order at %s without a bar there: %+v", in.Bar, in)
		}
	}
	dep, _ := g.r.Get(d.ID)
	leg := dep.Legs[1]
	if leg.Late != 1 || dep.Missed < 1 || !strings.Contains(leg.LateNote, lateAt.Format(time.RFC3339)) || !strings.Contains(leg.LateNote, "not traded") {
		t.Fatalf("quiet leg: %d late (%q), deployment missed %d: want the late bar counted with its reason", leg.Late, leg.LateNote, dep.Missed)
	}
	if !strings.Contains(strings.Join(dep.LegLines(), "\n"), "late, not traded") {
		t.Fatalf("leg lines do not say the late bar: %v", dep.LegLines())
	}
	rec, err := g.store.Bars(legKey(d.ID, sol), sol, warm+n)
	if err != nil {
		t.Fatal(err)
	}
	if index(rec, lateAt.Unix()) < 0 {
		t.Fatalf("the late bar of %s at %s was not recorded", sol, lateAt)
	}
	// The report replays each decision as live made it: the one at the
	// late bar's calendar bar without that bar.
	rep, err := g.r.Report(ctxT(t), d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Replayed != n || rep.Equal != n || len(rep.Diverged) != 0 {
		t.Fatalf("report: %d replayed, %d equal, diverged %+v", rep.Replayed, rep.Equal, rep.Diverged)
	}
	t.Logf("%d calendar bars decided without the quiet asset, %d orders; %s", len(steps), len(intents), leg.LateNote)
}
