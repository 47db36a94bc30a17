package history

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// TestFundingStore: rates round-trip exactly as decimals, by range, under
// the pair's funding symbol; a store without funding reads as none.
func TestFundingStore(t *testing.T) {
	s := openTemp(t)
	if err := s.Write(ctx, "BTC-USD@1h", synth(3, 1704067200, 3600), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Funding("BTC-USD", time.Time{}, time.Time{}); err != nil || got != nil {
		t.Fatalf("funding of a store without any: %v, %v", got, err)
	}
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var rates []FundingRate
	for k, r := range []string{"0.00010000", "-0.00003750", "0.00012345"} {
		rates = append(rates, FundingRate{Time: t0.Add(time.Duration(k)*8*time.Hour + time.Millisecond), Rate: decimal.RequireFromString(r)})
	}
	if err := s.WriteFunding(ctx, "btc-usdt", rates[:2]); err != nil {
		t.Fatal(err)
	}
	// A later page overlapping the last one replaces it, adds the rest.
	if err := s.WriteFunding(ctx, "BTC-USD", rates[1:]); err != nil {
		t.Fatal(err)
	}
	got, err := s.Funding("BTC-USDT", time.Time{}, time.Time{})
	if err != nil || len(got) != 3 {
		t.Fatalf("read back %v, %v", got, err)
	}
	for i, r := range got {
		if !r.Time.Equal(rates[i].Time) || r.Rate.String() != rates[i].Rate.String() {
			t.Errorf("rate %d = %v %s, want %v %s", i, r.Time, r.Rate, rates[i].Time, rates[i].Rate)
		}
	}
	got, err = s.Funding("BTC-USD", t0.Add(time.Hour), t0.Add(16*time.Hour))
	if err != nil || len(got) != 1 || got[0].Rate.String() != "-0.0000375" {
		t.Errorf("range read %v, %v", got, err)
	}
	info, err := s.FundingInfo("BTC-USD")
	if err != nil || info.Count != 3 || !info.First.Equal(rates[0].Time) || !info.Last.Equal(rates[2].Time) {
		t.Errorf("info %+v, %v", info, err)
	}
	if other, err := s.Funding("ETH-USD", time.Time{}, time.Time{}); err != nil || len(other) != 0 {
		t.Errorf("another symbol's funding: %v, %v", other, err)
	}
	if _, err := s.Funding("../x", time.Time{}, time.Time{}); err == nil {
		t.Error("a bad symbol was accepted")
	}
	// A read-only store, and one written before funding existed.
	ro, err := OpenReadOnly(s.path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if got, err := ro.Funding("BTC-USD", time.Time{}, time.Time{}); err != nil || len(got) != 3 {
		t.Errorf("read-only: %d rates, %v", len(got), err)
	}
	if err := ro.WriteFunding(ctx, "BTC-USD", rates); err == nil {
		t.Error("a read-only store wrote funding")
	}
	plain := openTemp(t)
	if err := plain.Write(ctx, "BTC-USD@1h", synth(3, 1704067200, 3600), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	plain.Close()
	old, err := OpenReadOnly(filepath.Clean(plain.path))
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if info, err := old.FundingInfo("BTC-USD"); err != nil || info.Count != 0 {
		t.Errorf("a store without the table: %+v, %v", info, err)
	}
}
