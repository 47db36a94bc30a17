package backtest

import (
	"bytes"
	"math"
	"unsafe"

	"wicket/strategy"
)

// targetSource gives a vectorised strategy's decisions to the engine:
// next(i, n) is the first bar j in [i, n) that may carry a target (n when
// none does), asked with i rising; at(j) is bar j's target, NaN for no
// change. Between i and next the engine runs its tight loops.
type targetSource interface {
	next(i, n int) int
	at(i int) float64
}

// targetOf is bar i's target: NaN unless i is the source's next bar.
func targetOf(src targetSource, i, next int) float64 {
	if i != next {
		return math.NaN()
	}
	return src.at(i)
}

// denseTargets is one target per bar (Decisions.Targets).
type denseTargets []float64

func (t denseTargets) next(i, n int) int {
	for ; i < n; i++ {
		if v := t[i]; v == v {
			return i
		}
	}
	return n
}

func (t denseTargets) at(i int) float64 { return t[i] }

// signalCursor finds the bars where a signal is set (long, short or exit)
// by a byte search of each flag column, keeping each column's next set
// bar, so a run reads each column once whatever the order of its events.
// Its targets are Signals.TargetAt's.
type signalCursor struct {
	sig   strategy.Signals
	flags [3][]byte
	ahead [3]int // each column's next set bar at or after the last ask (MaxInt: none)
}

func newSignalCursor(sig strategy.Signals) *signalCursor {
	c := &signalCursor{sig: sig}
	for k, v := range [3][]bool{sig.Long, sig.Short, sig.Exit} {
		c.flags[k] = boolBytes(v)
		c.ahead[k] = -1
	}
	return c
}

func (c *signalCursor) next(i, n int) int {
	j := n
	for k, f := range c.flags {
		if c.ahead[k] < i {
			c.ahead[k] = math.MaxInt // none left in this column
			if i < len(f) {
				if at := bytes.IndexByte(f[i:], 1); at >= 0 {
					c.ahead[k] = i + at
				}
			}
		}
		j = min(j, c.ahead[k])
	}
	return j
}

func (c *signalCursor) at(i int) float64 { return c.sig.TargetAt(i) }

// boolBytes views flags as bytes (a Go bool is one byte, 0 or 1), for
// bytes.IndexByte's vector search.
func boolBytes(v []bool) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v))
}

// firstBadPrice is the first bar whose open or close is not a finite
// price above zero, or len(open) when every bar's are.
func firstBadPrice(open, close []float64) int {
	close = close[:len(open)]
	for i, o := range open {
		if c := close[i]; !(o > 0 && o <= math.MaxFloat64 && c > 0 && c <= math.MaxFloat64) {
			return i
		}
	}
	return len(open)
}

// validUntil is firstBadPrice of the run's bars, remembered by a Scratch
// for the next run over the same columns (a sweep's combinations share
// their bars).
func (s *sim) validUntil(open, close []float64) int {
	p := s.prices
	if p == nil {
		return firstBadPrice(open, close)
	}
	if !sameColumn(p.open, open) || !sameColumn(p.close, close) {
		p.open, p.close, p.valid = open, close, firstBadPrice(open, close)
	}
	return p.valid
}

// priceCheck is a Scratch's memory of firstBadPrice for one pair of
// columns. It holds the columns, so their memory cannot be reused for
// other bars while it is remembered.
type priceCheck struct {
	open, close []float64
	valid       int
}

// sameColumn reports whether a and b are the same memory.
func sameColumn(a, b []float64) bool {
	return len(a) == len(b) && unsafe.SliceData(a) == unsafe.SliceData(b)
}

// timeGrid is a Scratch's memory of how far one time column runs evenly
// spaced (evenUntil), for the drawdown durations (curveAcc.regained). It
// holds the column, as priceCheck does.
type timeGrid struct {
	times []int64
	step  int64
	even  int
}

// evenUntil is the first bar j whose time is not step after bar j-1's:
// the bars before it are evenly spaced (len(times) when all are).
func evenUntil(times []int64, step int64) int {
	for j := 1; j < len(times); j++ {
		if times[j]-times[j-1] != step {
			return j
		}
	}
	return len(times)
}

// evenBars is evenUntil of times, remembered by g for the next run over
// the same column.
func (g *timeGrid) evenBars(times []int64, step int64) int {
	if len(g.times) != len(times) || unsafe.SliceData(g.times) != unsafe.SliceData(times) || g.step != step {
		g.times, g.step, g.even = times, step, evenUntil(times, step)
	}
	return g.even
}
