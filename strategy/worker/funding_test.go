package worker

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/strategy/history"
)

// TestShippedFundingRoundTripAndDigest: funding read back from its
// shipped form is the store's to the millisecond and the decimal digit,
// a file that does not hash to its digest is refused, and Clip keeps the
// settlements of a span, both ends included.
func TestShippedFundingRoundTripAndDigest(t *testing.T) {
	at := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	f := Funding{Held: true, Rates: []history.FundingRate{
		{Time: at.Add(7 * time.Millisecond), Rate: decimal.RequireFromString("0.000123456789")},
		{Time: at.Add(8 * time.Hour), Rate: decimal.RequireFromString("-0.0003")},
		{Time: at.Add(16 * time.Hour), Rate: decimal.Zero},
	}}
	data := f.Encode()
	digest := FundingDigest(data)
	path := filepath.Join(t.TempDir(), digest+".funding")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFundingFile(path, digest)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Held || len(got.Rates) != len(f.Rates) {
		t.Fatalf("read back %+v", got)
	}
	for i, r := range got.Rates {
		if !r.Time.Equal(f.Rates[i].Time) || !r.Rate.Equal(f.Rates[i].Rate) {
			t.Errorf("rate %d: %v %s, want %v %s", i, r.Time, r.Rate, f.Rates[i].Time, f.Rates[i].Rate)
		}
	}
	if c := got.Clip(at.Add(7*time.Millisecond), at.Add(8*time.Hour)); !c.Held || len(c.Rates) != 2 {
		t.Errorf("clip to the first two settlements: %+v", c)
	}
	if c := got.Clip(at.Add(17*time.Hour), at.Add(20*time.Hour)); !c.Held || len(c.Rates) != 0 {
		t.Errorf("clip to a span without settlements keeps the funding held and no rate: %+v", c)
	}

	altered := []byte(strings.Replace(string(data), "-0.0003", "-0.0009", 1))
	if err := os.WriteFile(path, altered, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFundingFile(path, digest); err == nil || !strings.Contains(err.Error(), "does not match its digest") {
		t.Fatalf("altered funding: %v", err)
	}
	if _, err := ReadFundingFile(path, ""); err == nil {
		t.Fatal("funding without a digest was read")
	}
}
