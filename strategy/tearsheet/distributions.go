package tearsheet

import (
	"math"
	"strconv"
	"wicket/strategy/backtest"
	"wicket/strategy/robust"
)

// histogram is the distribution of closed trades' returns.
type histogram struct {
	H              int
	Bars           []bar
	XTicks, YTicks []tick
	Left, Right    int
	Bottom         int
	Count          int
	Zero           string
}

type bar struct {
	X, Y, W, H, Fill, Title string
}

// tradeHistogram bins the trades' returns (pnl over entry notional) into
// Bins equal bins from the lowest to the highest; nil without trades.
func tradeHistogram(trades []backtest.Trade) *histogram {
	rs := make([]float64, 0, len(trades))
	for _, t := range trades {
		if !bad(t.Return) {
			rs = append(rs, t.Return)
		}
	}
	return binned(rs, "trades", pct)
}

// binned bins the values rs into Bins equal bins from the lowest to the
// highest, each bar titled with its count of what and its range written
// by label; nil without values.
func binned(rs []float64, what string, label func(float64) string) *histogram {
	if len(rs) == 0 {
		return nil
	}
	lo, hi := rs[0], rs[0]
	for _, r := range rs {
		lo, hi = math.Min(lo, r), math.Max(hi, r)
	}
	if hi == lo {
		pad := math.Max(math.Abs(lo)*0.01, 1e-4)
		lo, hi = lo-pad, hi+pad
	}
	counts := make([]int, Bins)
	width := (hi - lo) / Bins
	for _, r := range rs {
		counts[min(int((r-lo)/width), Bins-1)]++
	}
	top := 0
	for _, c := range counts {
		top = max(top, c)
	}
	const h = 200
	plotH := float64(h - marginT - marginB)
	yt := niceTicks(0, float64(top), 4)
	ymax := yt[len(yt)-1]
	g := &histogram{H: h, Left: marginL, Right: marginL + plotW, Bottom: h - marginB, Count: len(rs)}
	xAt := func(v float64) float64 { return marginL + (v-lo)/(hi-lo)*plotW }
	for i, c := range counts {
		if c == 0 {
			continue
		}
		b0, b1 := lo+float64(i)*width, lo+float64(i+1)*width
		bh := float64(c) / ymax * plotH
		fill := "#1a9850"
		if (b0+b1)/2 < 0 {
			fill = "#d73027"
		}
		g.Bars = append(g.Bars, bar{
			X: coord(xAt(b0)), W: coord(math.Max(xAt(b1)-xAt(b0)-1, 1)), Y: coord(marginT + plotH - bh), H: coord(bh),
			Fill: fill, Title: strconv.Itoa(c) + " " + what + " from " + label(b0) + " to " + label(b1),
		})
	}
	for _, v := range yt {
		g.YTicks = append(g.YTicks, tick{At: coord(marginT + plotH - v/ymax*plotH), Label: plainLabel(v)})
	}
	for i := range 5 {
		v := lo + (hi-lo)*float64(i)/4
		g.XTicks = append(g.XTicks, tick{At: coord(xAt(v)), Label: label(v)})
	}
	if lo < 0 && hi > 0 {
		g.Zero = coord(xAt(0))
	}
	return g
}

// rangeChart shows each Monte Carlo method's final equity, p5 to p95 as
// a bar and p50 as a mark.
type rangeChart struct {
	H           int
	Rows        []rangeRow
	XTicks      []tick
	Left, Right int
	Bottom      int
	Start       string // x of the starting capital
}

type rangeRow struct {
	Label, Y, TY, X, W, Mid, Title string
}

func monteCarloRanges(mcs []robust.MonteCarlo, capital float64) *rangeChart {
	var ok []robust.MonteCarlo
	lo, hi := 1.0, 1.0
	for _, mc := range mcs {
		q := mc.FinalEquity
		if bad(q.P5) || bad(q.P95) || bad(q.P50) {
			continue
		}
		ok = append(ok, mc)
		lo, hi = math.Min(lo, q.P5), math.Max(hi, q.P95)
	}
	if len(ok) == 0 {
		return nil
	}
	const rowH = 28
	h := marginT + len(ok)*rowH + marginB
	ticks := niceTicks(lo*capital, hi*capital, 5)
	x0, x1 := ticks[0], ticks[len(ticks)-1]
	xAt := func(v float64) float64 { return marginL + (v-x0)/(x1-x0)*plotW }
	c := &rangeChart{H: h, Left: marginL, Right: marginL + plotW, Bottom: h - marginB, Start: coord(xAt(capital))}
	for i, mc := range ok {
		q := mc.FinalEquity
		y := marginT + i*rowH
		a, b := xAt(q.P5*capital), xAt(q.P95*capital)
		c.Rows = append(c.Rows, rangeRow{
			Label: string(mc.Method), Y: strconv.Itoa(y + 6), TY: strconv.Itoa(y + rowH/2 + 4),
			X: coord(a), W: coord(math.Max(b-a, 1)), Mid: coord(xAt(q.P50 * capital)),
			Title: string(mc.Method) + ": final equity p5 " + money(q.P5*capital) + ", p50 " + money(q.P50*capital) + ", p95 " + money(q.P95*capital),
		})
	}
	for _, v := range ticks {
		c.XTicks = append(c.XTicks, tick{At: coord(xAt(v)), Label: plainLabel(v)})
	}
	return c
}
