package binance_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"wicket/strategy/history"
	"wicket/strategy/provider"
	"wicket/strategy/provider/binance"
	"wicket/strategy/provider/providertest"
)

// TestFundingRates pages through a funding history at the fake of
// /fapi/v1/fundingRate, keeping every rate exactly as written.
func TestFundingRates(t *testing.T) {
	var set []providertest.Settlement
	for k := range 250 {
		// Binance's settlement times drift by a few milliseconds.
		at := t0.Add(time.Duration(k)*8*time.Hour + time.Duration(k%3)*time.Millisecond)
		set = append(set, providertest.Settlement{Time: at, Rate: fmt.Sprintf("%.8f", float64(k%7-2)*0.00001)})
	}
	f := providertest.NewFunding(map[string][]providertest.Settlement{"BTCUSDT": set})
	defer f.Close()
	c := binance.New(binance.Config{FuturesURL: f.URL, PageLimit: 100, Transport: &provider.Transport{Timeout: 2 * time.Second}})
	var got []history.FundingRate
	pages := 0
	err := c.FundingRates(context.Background(), "BTCUSDT", t0, t0.Add(249*8*time.Hour+time.Second), func(p []history.FundingRate) error {
		pages++
		got = append(got, p...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 250 || pages != 3 {
		t.Fatalf("%d rates in %d pages, want 250 in 3 (100 a page)", len(got), pages)
	}
	for i, r := range got {
		if !r.Time.Equal(set[i].Time) || r.Rate.StringFixed(8) != set[i].Rate {
			t.Fatalf("rate %d = %v %s, want %v %s", i, r.Time, r.Rate, set[i].Time, set[i].Rate)
		}
	}
	for _, q := range f.Asked() {
		if !strings.Contains(q, "limit=100") || !strings.Contains(q, "startTime=") || !strings.Contains(q, "endTime=") {
			t.Errorf("request %q lacks limit, startTime or endTime", q)
		}
	}
	// A range the history does not reach: nothing, no error.
	err = c.FundingRates(context.Background(), "BTCUSDT", t0.Add(-48*time.Hour), t0.Add(-time.Hour), func(p []history.FundingRate) error {
		t.Errorf("a page outside the history: %v", p)
		return nil
	})
	if err != nil {
		t.Error(err)
	}
	// An unknown perpetual says what funding can be fetched for.
	err = c.FundingRates(context.Background(), "FOOBAR", t0, t0.Add(time.Hour), func([]history.FundingRate) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "no perpetual FOOBAR") {
		t.Errorf("unknown symbol: %v", err)
	}
}
