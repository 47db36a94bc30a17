package deploy

import (
	"context"
	"testing"
	"time"

	"wicket/strategy"
)

// TestTapeBarsLatestThenEachNew: the first read of a tape is its latest
// bar; then each bar appended after it, in order, none twice, and the
// source waits (polls) while the tape has nothing new.
func TestTapeBarsLatestThenEachNew(t *testing.T) {
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	tape := strategy.Bars{Series: symbol + "@1m"}
	for i := range 3 {
		appendBar(&tape, start.Add(time.Duration(i)*time.Minute).Unix(), 1, 1, 1, float64(i), 1)
	}
	reads := 0
	read := func(_ context.Context, _ string, after time.Time) (strategy.Bars, error) {
		reads++
		if reads == 3 { // the recorder appends while the source waits
			appendBar(&tape, start.Add(3*time.Minute).Unix(), 1, 1, 1, 3, 1)
			appendBar(&tape, start.Add(4*time.Minute).Unix(), 1, 1, 1, 4, 1)
		}
		out := strategy.Bars{Series: tape.Series}
		for i, ts := range tape.Time {
			if (after.IsZero() && i == tape.Len()-1) || (!after.IsZero() && ts > after.Unix()) {
				appendBar(&out, ts, 1, 1, 1, tape.Close[i], 1)
			}
		}
		return out, nil
	}
	src := &TapeBars{Read: read, Every: time.Millisecond}
	ctx := ctxT(t)
	var after time.Time
	var got []float64
	for range 3 {
		b, err := src.Next(ctx, symbol+"@1m", after)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, b.Close)
		after = b.Time
	}
	if len(got) != 3 || got[0] != 2 || got[1] != 3 || got[2] != 4 {
		t.Fatalf("closes %v, want the latest (2) then 3 and 4", got)
	}
}
