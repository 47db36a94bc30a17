package provider_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"wicket/strategy/provider"
	"wicket/strategy/provider/alpaca"
	"wicket/strategy/provider/binance"
	"wicket/strategy/provider/providertest"
)

func TestMarksFromProviders(t *testing.T) {
	now := t0.Add(90 * time.Minute)
	clock := providertest.NewClock(now)
	gen := providertest.Gen{Start: t0, End: t0.Add(24 * time.Hour), Step: time.Minute}
	bf := providertest.NewBinance(clock, map[string]providertest.Gen{"BTCUSDT": gen})
	defer bf.Close()
	af := providertest.NewAlpaca(clock, map[string]providertest.Gen{"SPY": gen}, map[string]providertest.Gen{"ETH/USD": gen})
	defer af.Close()
	af.KeyID, af.Secret = "id-not-secret", "secret-not-secret"
	want := gen.At(now).C

	bn := binance.New(binance.Config{BaseURL: bf.URL})
	m, err := bn.LastPrice(context.Background(), "BTC-USD")
	if err != nil || m.Price.InexactFloat64() != want || m.Source != "binance" || m.Symbol != "BTC-USD" {
		t.Fatalf("binance mark %+v, %v; want %v", m, err, want)
	}
	if _, err := bn.LastPrice(context.Background(), "DOGE-USD"); err == nil || !strings.Contains(err.Error(), "no spot symbol DOGEUSDT") {
		t.Errorf("unknown symbol: %v", err)
	}

	ap := alpaca.New(alpaca.Config{BaseURL: af.URL, KeyID: "id-not-secret", Secret: "secret-not-secret"})
	for _, sym := range []string{"ETH-USD", "SPY"} {
		m, err := ap.LastPrice(context.Background(), sym)
		if err != nil || m.Price.InexactFloat64() != want || !m.At.Equal(now) {
			t.Fatalf("alpaca %s mark %+v, %v; want %v", sym, m, err, want)
		}
	}

	// PollMarks: a round per interval, errors reported and skipped.
	ctx, cancel := context.WithCancel(context.Background())
	var got []provider.Mark
	var errs []string
	err = provider.PollMarks(ctx, bn, []string{"BTC-USD", "DOGE-USD"}, 5*time.Second, clock.Sleep,
		func(m provider.Mark) {
			got = append(got, m)
			if len(got) == 3 {
				cancel()
			}
		}, func(sym string, err error) { errs = append(errs, sym) })
	if err != context.Canceled || len(got) != 3 || len(errs) != 2 {
		t.Fatalf("poll: %v, %d marks, errors for %v", err, len(got), errs)
	}
}

func TestLiveMarks(t *testing.T) {
	now := t0.Add(10 * time.Minute)
	clock := providertest.NewClock(now)
	gen := providertest.Gen{Start: t0, End: t0.Add(24 * time.Hour), Step: time.Minute}
	bf := providertest.NewBinance(clock, map[string]providertest.Gen{"BTCUSDT": gen, "ETHUSDT": gen})
	defer bf.Close()
	var lm provider.LiveMarks
	if _, ok := lm.Get("BTC-USD"); ok {
		t.Fatal("a mark before any poll")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- lm.Run(ctx, binance.New(binance.Config{BaseURL: bf.URL}), []string{"BTC-USD", "ETH-USD"}, 10*time.Millisecond, nil)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, a := lm.Get("BTC-USD")
		_, b := lm.Get("ETH-USD")
		if a && b {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no marks arrived")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("Run: %v", err)
	}
	m, _ := lm.Get("ETH-USD")
	if m.Price.InexactFloat64() != gen.At(now).C || m.Source != "binance" {
		t.Fatalf("mark %+v", m)
	}
}
