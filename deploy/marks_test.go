package deploy

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/testkit"
	"wicket/node"
)

// TestDeployMarkBarsAggregatePaperMarks: the paper marks the node
// shows become 1m bars (open, high, low, close of the marks read in the
// minute); the minute the source started in is partial and makes no bar.
func TestDeployMarkBarsAggregatePaperMarks(t *testing.T) {
	clk := testkit.NewClock(time.Date(2026, 3, 2, 10, 0, 30, 0, time.UTC))
	mkt := &price{}
	ns := paperNode(t, venueConfig(), mkt, clk.Now)
	c := ns.Client(node.WithClock(clk.Now))
	// Each read of the node moves the market along a script, so the
	// bars' content is known: the source reads, then the clock moves.
	script := []struct {
		at time.Time
		px string
	}{
		{clk.Now(), "99"}, // 10:00 (partial)
		{time.Date(2026, 3, 2, 10, 1, 5, 0, time.UTC), "100"},   // 10:01 opens
		{time.Date(2026, 3, 2, 10, 1, 20, 0, time.UTC), "103"},  // high
		{time.Date(2026, 3, 2, 10, 1, 40, 0, time.UTC), "98.5"}, // low
		{time.Date(2026, 3, 2, 10, 1, 59, 0, time.UTC), "101"},  // close
		{time.Date(2026, 3, 2, 10, 2, 1, 0, time.UTC), "102"},   // 10:02: 10:01 is done
	}
	step := 0
	conn := scriptedConn{Client: c, next: func() {
		if step < len(script) {
			clk.Set(script[step].at)
			mkt.set(decimal.RequireFromString(script[step].px))
			ns.Tick(t, 1)
			step++
		}
	}}
	src := &MarkBars{Node: conn, Venue: "paper", Every: time.Millisecond, Now: clk.Now}
	b, err := src.Next(ctxT(t), symbol+"@1m", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	want := Bar{Time: time.Date(2026, 3, 2, 10, 1, 0, 0, time.UTC), Open: 100, High: 103, Low: 98.5, Close: 101}
	if b != want {
		t.Fatalf("bar %+v, want %+v", b, want)
	}
}

// scriptedConn calls next before each snapshot the source reads.
type scriptedConn struct {
	*node.Client
	next func()
}

func (c scriptedConn) Snapshot(ctx context.Context, venue string, events int) (*node.Snapshot, error) {
	c.next()
	return c.Client.Snapshot(ctx, venue, events)
}
