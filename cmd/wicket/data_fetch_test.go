package main

import (
	"testing"
	"time"

	"wicket/strategy/history"
	"wicket/strategy/provider"
)

func TestFetchSummary(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	r := provider.FetchResult{Series: "SPY@1d", Provider: "alpaca", ProviderSymbol: "SPY", Added: 1, First: t0, Last: t0, Pages: 1}
	if got := barsFetched(r).line(nil); got != "SPY@1d: added 1 bar from alpaca SPY (2024-01-01T00:00:00Z to 2024-01-01T00:00:00Z) in 1 page; no gaps" {
		t.Errorf("summary %q", got)
	}
	r.Added, r.Pages, r.Gaps = 0, 0, history.GapStats{}
	if got := barsFetched(r).line(nil); got != "SPY@1d: up to date from alpaca SPY; nothing new to add" {
		t.Errorf("up to date %q", got)
	}
}

// TestFetchedJSON: a fetch's --json entry carries its gaps and the error
// with what was committed before it, and the text line says the same.
func TestFetchedJSON(t *testing.T) {
	t0 := time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)
	r := provider.FetchResult{Series: "BTC-USD@1h", Provider: "binance", ProviderSymbol: "BTCUSDT", Added: 21, First: t0, Last: t0.Add(23 * time.Hour),
		Pages: 1, Gaps: history.GapStats{Count: 1, Largest: 3 * time.Hour, At: t0.Add(5 * time.Hour)}}
	f := barsFetched(r)
	if f.Kind != "bars" || f.First != "2024-01-02T00:00:00Z" || f.Last != "2024-01-02T23:00:00Z" || f.Gaps != 1 || f.LargestGap != "3h0m0s" ||
		f.LargestGapAt != "2024-01-02T05:00:00Z" {
		t.Errorf("entry %+v", f)
	}
	if got, want := f.line(nil), "BTC-USD@1h: added 21 bars from binance BTCUSDT (2024-01-02T00:00:00Z to 2024-01-02T23:00:00Z) in 1 page; "+
		"1 gap, the largest 3h0m0s from 2024-01-02T05:00:00Z"; got != want {
		t.Errorf("line\n%q, want\n%q", got, want)
	}
	err := errString("HTTP 500")
	if f = f.withError(err); f.Error != "HTTP 500" || f.line(err) != "BTC-USD@1h: 21 bars committed before the error (through 2024-01-02T23:00:00Z)" {
		t.Errorf("after an error: %+v %q", f, f.line(err))
	}
	if got := (fetchedJSON{Series: "ETH-USD@1h"}).line(err); got != "" {
		t.Errorf("an error with nothing committed prints %q", got)
	}
}
