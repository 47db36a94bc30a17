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
	if got := fetchSummary(r); got != "SPY@1d: added 1 bar from alpaca SPY (2024-01-01T00:00:00Z to 2024-01-01T00:00:00Z) in 1 page; no gaps" {
		t.Errorf("summary %q", got)
	}
	r.Added, r.Pages, r.Gaps = 0, 0, history.GapStats{}
	if got := fetchSummary(r); got != "SPY@1d: up to date from alpaca SPY; nothing new to add" {
		t.Errorf("up to date %q", got)
	}
}
