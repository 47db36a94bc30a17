package handlers

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/strategy"
	"wicket/strategy/backtest"
	"wicket/strategy/history"
)

// TestFundingFromTheKeptStore: a chunk reads its funding from the store
// the worker keeps open (one store, opened once), answers as a store
// opened for it does, and sees rates written after it was opened.
func TestFundingFromTheKeptStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	w, err := history.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	at := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	bars := strategy.Bars{Time: []int64{at.Unix(), at.Add(time.Hour).Unix(), at.Add(24 * time.Hour).Unix()}}
	bars.Open, bars.High, bars.Low, bars.Close, bars.Volume = make([]float64, 3), make([]float64, 3), make([]float64, 3), make([]float64, 3), make([]float64, 3)
	cache := &barCache{}
	kept := fundingSource{path: path, stores: cache}
	var auto backtest.CostOptions

	if _, ok, err := fundingRates(kept, "BTC-USD@1h", auto, bars); err != nil || ok {
		t.Fatalf("no funding stored: ok %v, %v", ok, err)
	}
	if len(cache.stores) != 1 {
		t.Fatalf("%d stores kept, want the one", len(cache.stores))
	}
	first := cache.stores[0]

	w, err = history.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFunding(context.Background(), "BTC-USD", []history.FundingRate{
		{Time: at.Add(8 * time.Hour), Rate: decimal.RequireFromString("0.0001")},
		{Time: at.Add(16 * time.Hour), Rate: decimal.RequireFromString("-0.00005")},
		{Time: at.Add(48 * time.Hour), Rate: decimal.RequireFromString("0.0003")}, // after the bars
	}); err != nil {
		t.Fatal(err)
	}
	w.Close()

	got, ok, err := fundingRates(kept, "BTC-USD@1h", auto, bars)
	if err != nil || !ok {
		t.Fatalf("funding written since the store was kept: ok %v, %v", ok, err)
	}
	want, wantOK, err := fundingRates(fundingSource{path: path}, "BTC-USD@1h", auto, bars)
	if err != nil || !wantOK || len(want) != 2 {
		t.Fatalf("a store opened for the chunk: %v, ok %v, %v", want, wantOK, err)
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("kept store's funding %v, a fresh store's %v", got, want)
	}
	if len(cache.stores) != 1 || cache.stores[0] != first {
		t.Fatal("the second chunk opened the store again instead of using the kept one")
	}

	// A store that is gone is no funding under "auto", as before.
	gone := fundingSource{path: filepath.Join(t.TempDir(), "none.db"), stores: cache}
	if _, ok, err := fundingRates(gone, "BTC-USD@1h", auto, bars); err != nil || ok {
		t.Fatalf("a store that is gone: ok %v, %v", ok, err)
	}
}
