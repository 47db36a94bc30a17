package alpaca_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"wicket/strategy"
	"wicket/strategy/provider"
	"wicket/strategy/provider/alpaca"
	"wicket/strategy/provider/providertest"
)

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// Test credentials: not secrets, just values the fake compares.
const testID, testSecret = "test-id-not-a-secret", "test-secret-not-a-secret"

func setup(t *testing.T, stocks, crypto map[string]providertest.Gen, cfg alpaca.Config) (*providertest.Alpaca, *providertest.Clock, *alpaca.Client) {
	t.Helper()
	clock := providertest.NewClock(t0.Add(60 * 24 * time.Hour))
	f := providertest.NewAlpaca(clock, stocks, crypto)
	f.KeyID, f.Secret = testID, testSecret
	t.Cleanup(f.Close)
	cfg.BaseURL = f.URL
	cfg.Transport = &provider.Transport{Sleep: clock.Sleep, Now: clock.Now}
	return f, clock, alpaca.New(cfg)
}

func collect(c *alpaca.Client, sym string, g strategy.Granularity, from, to time.Time) (strategy.Bars, int, error) {
	var all strategy.Bars
	pages := 0
	err := c.Bars(context.Background(), sym, g, from, to, func(b strategy.Bars) error {
		pages++
		all.Time = append(all.Time, b.Time...)
		all.Close = append(all.Close, b.Close...)
		all.Volume = append(all.Volume, b.Volume...)
		return nil
	})
	return all, pages, err
}

func TestSymbolMapping(t *testing.T) {
	for _, tc := range []struct{ wicket, alpaca string }{
		{"BTC-USD", "BTC/USD"}, {"eth-usdt", "ETH/USDT"}, {"SPY", "SPY"}, {"BRK.B", "BRK.B"},
	} {
		got, err := alpaca.Symbol(tc.wicket)
		if err != nil || got != tc.alpaca {
			t.Errorf("Symbol(%q) = %q, %v; want %q", tc.wicket, got, err, tc.alpaca)
		}
	}
	if got := alpaca.ToWicket("BTC/USD"); got != "BTC-USD" {
		t.Errorf("ToWicket(BTC/USD) = %q", got)
	}
	for _, bad := range []string{"spy", "TOOLONGX", "A-B-C"} {
		if _, err := alpaca.Symbol(bad); err == nil || !strings.Contains(err.Error(), "US stock ticker") {
			t.Errorf("Symbol(%q): %v", bad, err)
		}
	}
	for _, g := range strategy.Granularities {
		if _, err := alpaca.TimeFrame(g); err != nil {
			t.Errorf("TimeFrame(%s): %v", g, err)
		}
	}
}

// TestStockBarsPaged follows next_page_token inside a chunk and moves the
// start between chunks; the keys travel only in Alpaca's headers.
func TestStockBarsPaged(t *testing.T) {
	gen := providertest.Gen{Start: t0, End: t0.Add(14 * 24 * time.Hour), Step: time.Hour, Weekdays: true}
	f, _, c := setup(t, map[string]providertest.Gen{"SPY": gen}, nil, alpaca.Config{KeyID: testID, Secret: testSecret, Chunk: 100, PageLimit: 30})
	bars, pages, err := collect(c, "SPY", "1h", t0, t0.Add(14*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := 10 * 24 // ten weekdays in two weeks from a Monday
	if bars.Len() != want || pages != 3 {
		t.Fatalf("%d bars in %d pages, want %d in 3", bars.Len(), pages, want)
	}
	reqs := f.Requests()
	tokens := 0
	for _, r := range reqs {
		if strings.Contains(r.Query, "page_token=") {
			tokens++
		}
		if r.Header.Get("Apca-Api-Key-Id") != testID || r.Header.Get("Apca-Api-Secret-Key") != testSecret {
			t.Errorf("request %d: key headers %v", r.N, r.Header)
		}
		if strings.Contains(r.Query, testID) || strings.Contains(r.Query, testSecret) {
			t.Errorf("request %d put a key in its URL", r.N)
		}
		if !strings.Contains(r.Query, "adjustment=split") || !strings.Contains(r.Query, "timeframe=1Hour") {
			t.Errorf("request %d: %s", r.N, r.Query)
		}
	}
	if tokens == 0 {
		t.Errorf("no request followed a next_page_token: %+v", reqs)
	}
	for i := 1; i < bars.Len(); i++ {
		if bars.Time[i] <= bars.Time[i-1] {
			t.Fatalf("bar %d out of order or repeated", i)
		}
	}
}

func TestStockDailyIsTheTradingDay(t *testing.T) {
	gen := providertest.Gen{Start: t0, End: t0.Add(10 * 24 * time.Hour), Step: 24 * time.Hour, Weekdays: true}
	_, _, c := setup(t, map[string]providertest.Gen{"SPY": gen}, nil, alpaca.Config{KeyID: testID, Secret: testSecret})
	bars, _, err := collect(c, "SPY", "1d", t0, t0.Add(10*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if bars.Len() != 8 || bars.Time[0] != t0.Unix() || bars.Time[1] != t0.Add(24*time.Hour).Unix() {
		t.Fatalf("daily bars at %v, want 00:00 UTC of each weekday", bars.Time)
	}
}

func TestStockFixture(t *testing.T) {
	body, _ := os.ReadFile("testdata/stock_bars_spy_1day.json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
	defer srv.Close()
	c := alpaca.New(alpaca.Config{BaseURL: srv.URL, KeyID: testID, Secret: testSecret})
	bars, _, err := collect(c, "SPY", "1d", t0, t0.Add(5*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if bars.Len() != 2 || bars.Time[0] != time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC).Unix() || bars.Close[1] != 468.79 || bars.Volume[0] != 123623700 {
		t.Fatalf("decoded %+v", bars)
	}
}

func TestCryptoNeedsNoKey(t *testing.T) {
	gen := providertest.Gen{Start: t0, End: t0.Add(24 * time.Hour), Step: 15 * time.Minute}
	f, _, c := setup(t, nil, map[string]providertest.Gen{"BTC/USD": gen}, alpaca.Config{})
	bars, _, err := collect(c, "BTC/USD", "15m", t0, t0.Add(24*time.Hour))
	if err != nil || bars.Len() != 96 {
		t.Fatalf("crypto: %d bars, %v", bars.Len(), err)
	}
	if r := f.Requests()[0]; r.Path != "/v1beta3/crypto/us/bars" || !strings.Contains(r.Query, "symbols=BTC%2FUSD") {
		t.Errorf("request %+v", r)
	}
}

func TestKeysMissingOrRefused(t *testing.T) {
	gen := providertest.Gen{Start: t0, End: t0.Add(24 * time.Hour), Step: time.Hour}
	f, _, c := setup(t, map[string]providertest.Gen{"SPY": gen}, nil, alpaca.Config{})
	_, _, err := collect(c, "SPY", "1h", t0, t0.Add(24*time.Hour))
	if err == nil || !strings.Contains(err.Error(), "WICKET_ALPACA_KEY_ID and WICKET_ALPACA_SECRET_KEY") || !strings.Contains(err.Error(), "wicket secrets list") {
		t.Fatalf("no keys: %v", err)
	}
	if n := len(f.Requests()); n != 0 {
		t.Errorf("sent %d requests without keys", n)
	}
	_, _, c = setup(t, map[string]providertest.Gen{"SPY": gen}, nil, alpaca.Config{KeyID: "wrong-id", Secret: "wrong-secret-value"})
	_, _, err = collect(c, "SPY", "1h", t0, t0.Add(24*time.Hour))
	if err == nil || !strings.Contains(err.Error(), "HTTP 401") || strings.Contains(err.Error(), "wrong-secret-value") || strings.Contains(err.Error(), "wrong-id") {
		t.Fatalf("bad keys: %v", err)
	}
	_, _, c = setup(t, map[string]providertest.Gen{"SPY": gen}, nil, alpaca.Config{KeyID: testID, Secret: testSecret})
	_, _, err = collect(c, "NOPE", "1h", t0, t0.Add(24*time.Hour))
	if err == nil || !strings.Contains(err.Error(), "invalid symbol: NOPE") || !strings.Contains(err.Error(), "crypto pairs (BTC-USD for BTC/USD)") {
		t.Fatalf("unknown symbol: %v", err)
	}
}

func TestRateLimitAndServerErrors(t *testing.T) {
	gen := providertest.Gen{Start: t0, End: t0.Add(24 * time.Hour), Step: time.Hour}
	f, clock, c := setup(t, nil, map[string]providertest.Gen{"BTC/USD": gen}, alpaca.Config{})
	f.Fail(1, providertest.Fault{Status: 429, RetryAfter: "3", Body: `{"message":"too many requests."}`})
	f.Fail(2, providertest.Fault{Status: 502, Body: `bad gateway`})
	bars, _, err := collect(c, "BTC/USD", "1h", t0, t0.Add(24*time.Hour))
	if err != nil || bars.Len() != 24 {
		t.Fatalf("%d bars, %v", bars.Len(), err)
	}
	reqs := f.Requests()
	if len(reqs) != 3 || reqs[1].At.Sub(reqs[0].At) < 3*time.Second {
		t.Fatalf("requests %+v, sleeps %v", reqs, clock.Slept())
	}
}
