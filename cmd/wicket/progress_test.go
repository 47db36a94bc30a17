package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"wicket/strategy/provider"
)

// TestFetchBar: the progress bar draws on a terminal and stays silent
// elsewhere (a pipe or a log gets only the summary).
func TestFetchBar(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	p := provider.Progress{Series: "BTC-USD@1m", Bars: 5000, Pages: 5, From: t0, To: t0.Add(10000 * time.Minute), Through: t0.Add(5000 * time.Minute)}
	var tty, pipe bytes.Buffer
	on, off := newFetchBar(&tty, true), newFetchBar(&pipe, false)
	on.update(p)
	off.update(p)
	on.done()
	off.done()
	if pipe.Len() != 0 {
		t.Errorf("drew on a pipe: %q", pipe.String())
	}
	got := tty.String()
	for _, want := range []string{"\rBTC-USD@1m [############------------]  50%", "5000 bars", "5 pages", "through 2024-01-04T11:20:00Z", "\r\033[K"} {
		if !strings.Contains(got, want) {
			t.Errorf("bar %q lacks %q", got, want)
		}
	}
}
