package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"wicket/strategy/provider"
	"wicket/strategy/research"
)

// The CLI's progress bars, drawn on stderr only when it is a terminal: the
// research runs' (sweep, walk-forward) and data fetch's.

// progressBar draws a progress bar on a terminal once a run has taken
// more than a second; elsewhere (a pipe, a file, a test) it stays silent.
type progressBar struct {
	w     io.Writer
	tty   bool
	unit  string
	now   func() time.Time
	start time.Time
	last  time.Time
	drawn bool
}

func newProgressBar(w io.Writer, unit string) *progressBar {
	b := &progressBar{w: w, tty: isCharDevice(w), unit: unit, now: time.Now}
	b.start = b.now()
	return b
}

// Progress bar geometry and pace.
const (
	barWidth   = 30
	barDelay   = time.Second
	barRefresh = 100 * time.Millisecond
)

func (b *progressBar) update(p research.Progress) {
	if !b.tty || p.Total <= 0 {
		return
	}
	now := b.now()
	if now.Sub(b.start) < barDelay || (now.Sub(b.last) < barRefresh && p.Done < p.Total) {
		return
	}
	b.last = now
	filled := barWidth * p.Done / p.Total
	fmt.Fprintf(b.w, "\r[%s%s] %d/%d %s  %s ", strings.Repeat("#", filled), strings.Repeat(" ", barWidth-filled),
		p.Done, p.Total, b.unit, now.Sub(b.start).Round(time.Second))
	b.drawn = true
}

func (b *progressBar) clear() {
	if b.drawn {
		fmt.Fprintf(b.w, "\r%s\r", strings.Repeat(" ", barWidth+60))
		b.drawn = false
	}
}

// fetchBar draws a fetch's progress on a terminal, at most ten times a
// second, and nothing at all elsewhere (a log or a pipe gets the summary).
type fetchBar struct {
	w       io.Writer
	on      bool
	now     func() time.Time
	start   time.Time
	last    time.Time
	started bool
}

func newFetchBar(w io.Writer, terminal bool) *fetchBar {
	b := &fetchBar{w: w, on: terminal, now: time.Now}
	b.start = b.now()
	return b
}

func (b *fetchBar) update(p provider.Progress) {
	now := b.now()
	if !b.on || now.Sub(b.last) < 100*time.Millisecond {
		return
	}
	b.last, b.started = now, true
	const width = 24
	f := p.Fraction()
	filled := int(f * width)
	rate := float64(p.Bars) / max(now.Sub(b.start).Seconds(), 1e-3)
	fmt.Fprintf(b.w, "\r%s [%s%s] %3.0f%%  %d bars  %d pages  %.0f bars/s  through %s ", p.Series,
		strings.Repeat("#", filled), strings.Repeat("-", width-filled), 100*f, p.Bars, p.Pages, rate, p.Through.Format(time.RFC3339))
}

func (b *fetchBar) done() {
	if b.on && b.started {
		fmt.Fprint(b.w, "\r\033[K")
	}
}
