package tearsheet

import (
	"math"
	"strconv"
	"time"
	"wicket/strategy/backtest"
)

// heatmap is the monthly returns: a row per year, a column per month and
// one for the year.
type heatmap struct {
	W, H   int
	Months []tick
	Years  []tick
	Cells  []cell
	Note   string
}

type cell struct {
	X, Y, W, H, TX, TY string
	Fill, Text, Title  string
	Ink                string
}

const (
	cellW = plotW / 13
	cellH = 20
)

var monthNames = [...]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

// monthly computes each calendar month's return (UTC, by bar open time)
// from the equity at its last bar against the month before's (or the
// capital), and each year's the same way.
func monthly(c backtest.Curve, capital float64) *heatmap {
	type mret struct {
		year, month int
		r           float64
	}
	var months, years []mret
	prevM, prevY := capital, capital
	// A month ends at the last bar before the next month's first second:
	// the calendar is consulted once a month, not once a bar.
	var cur time.Time
	var next int64 = math.MinInt64
	for i, t := range c.Time {
		if t >= next {
			cur = time.Unix(t, 0).UTC()
			y, m, _ := cur.Date()
			next = time.Date(y, m+1, 1, 0, 0, 0, 0, time.UTC).Unix()
		}
		if i < len(c.Time)-1 && c.Time[i+1] < next {
			continue
		}
		e := c.Equity[i]
		months = append(months, mret{cur.Year(), int(cur.Month()), change(e, prevM)})
		prevM = e
		if i == len(c.Time)-1 || cur.Month() == time.December || time.Unix(c.Time[i+1], 0).UTC().Year() != cur.Year() {
			years = append(years, mret{cur.Year(), 0, change(e, prevY)})
			prevY = e
		}
	}
	h := &heatmap{}
	first := years[0].year
	if last := years[len(years)-1].year; last-first+1 > MaxYears {
		first = last - MaxYears + 1
		h.Note = "the run spans " + strconv.Itoa(last-years[0].year+1) + " years; the last " + strconv.Itoa(MaxYears) + " are shown"
	}
	top := marginT + cellH
	row := func(y int) int { return top + (y-first)*cellH }
	scale := 0.0
	for _, m := range months {
		if m.year >= first && !bad(m.r) {
			scale = math.Max(scale, math.Abs(m.r))
		}
	}
	add := func(m mret, col int, s float64) {
		x, y := marginL+col*cellW, row(m.year)
		label := dash
		if !bad(m.r) {
			label = strconv.FormatFloat(100*m.r, 'f', 1, 64)
		}
		when := strconv.Itoa(m.year)
		if m.month > 0 {
			when += "-" + monthNames[m.month-1]
		}
		fill, ink := shade(m.r, s)
		h.Cells = append(h.Cells, cell{
			X: strconv.Itoa(x), Y: strconv.Itoa(y), W: strconv.Itoa(cellW - 1), H: strconv.Itoa(cellH - 1),
			TX: strconv.Itoa(x + cellW/2), TY: strconv.Itoa(y + cellH/2 + 4),
			Fill: fill, Ink: ink, Text: label, Title: when + ": " + pct(m.r),
		})
	}
	for _, m := range months {
		if m.year >= first {
			add(m, m.month-1, scale)
		}
	}
	yscale := 0.0
	for _, y := range years {
		if y.year >= first && !bad(y.r) {
			yscale = math.Max(yscale, math.Abs(y.r))
		}
	}
	for _, y := range years {
		if y.year >= first {
			add(y, 12, yscale)
		}
	}
	for i, n := range monthNames {
		h.Months = append(h.Months, tick{At: strconv.Itoa(marginL + i*cellW + cellW/2), Label: n})
	}
	h.Months = append(h.Months, tick{At: strconv.Itoa(marginL + 12*cellW + cellW/2), Label: "year"})
	for y := first; y <= years[len(years)-1].year; y++ {
		h.Years = append(h.Years, tick{At: strconv.Itoa(row(y) + cellH/2 + 4), Label: strconv.Itoa(y)})
	}
	h.W, h.H = chartW, row(years[len(years)-1].year)+cellH+marginT
	return h
}

func change(e, prev float64) float64 {
	if prev <= 0 {
		return math.NaN()
	}
	return e/prev - 1
}

// shade colours a return on a diverging scale whose ends are ±scale:
// green for gains, red for losses, white at zero; ink is the text colour
// that stays readable on it.
func shade(r, scale float64) (fill, ink string) {
	if bad(r) || scale == 0 {
		return "#eeeeee", "#222222"
	}
	t := math.Min(math.Abs(r)/scale, 1)
	to := [3]float64{26, 152, 80}
	if r < 0 {
		to = [3]float64{215, 48, 39}
	}
	var c [3]int
	for i := range c {
		c[i] = int(math.Round(255 + (to[i]-255)*t))
	}
	ink = "#222222"
	if t > 0.6 {
		ink = "#ffffff"
	}
	return "#" + hex2(c[0]) + hex2(c[1]) + hex2(c[2]), ink
}

func hex2(v int) string {
	s := strconv.FormatInt(int64(v), 16)
	if len(s) < 2 {
		s = "0" + s
	}
	return s
}
