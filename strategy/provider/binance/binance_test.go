package binance_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"wicket/strategy"
	"wicket/strategy/provider"
	"wicket/strategy/provider/binance"
	"wicket/strategy/provider/providertest"
)

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func newFake(t *testing.T, gens map[string]providertest.Gen) (*providertest.Binance, *providertest.Clock, *binance.Client) {
	t.Helper()
	clock := providertest.NewClock(t0.Add(30 * 24 * time.Hour))
	f := providertest.NewBinance(clock, gens)
	t.Cleanup(f.Close)
	c := binance.New(binance.Config{BaseURL: f.URL, Transport: &provider.Transport{Sleep: clock.Sleep, Now: clock.Now, Timeout: 2 * time.Second}})
	return f, clock, c
}

func collect(t *testing.T, c *binance.Client, sym string, g strategy.Granularity, from, to time.Time) (strategy.Bars, int, error) {
	t.Helper()
	var all strategy.Bars
	pages := 0
	err := c.Bars(context.Background(), sym, g, from, to, func(b strategy.Bars) error {
		pages++
		all.Time = append(all.Time, b.Time...)
		all.Open = append(all.Open, b.Open...)
		all.High = append(all.High, b.High...)
		all.Low = append(all.Low, b.Low...)
		all.Close = append(all.Close, b.Close...)
		all.Volume = append(all.Volume, b.Volume...)
		return nil
	})
	return all, pages, err
}

func TestSymbolMapping(t *testing.T) {
	for _, tc := range []struct{ wicket, binance, back string }{
		{"BTC-USD", "BTCUSDT", "BTC-USD"},
		{"ETH-BTC", "ETHBTC", "ETH-BTC"},
		{"sol-usdc", "SOLUSDC", "SOL-USDC"},
		{"BTC-USDT", "BTCUSDT", "BTC-USD"},
	} {
		got, err := binance.Symbol(tc.wicket)
		if err != nil || got != tc.binance {
			t.Errorf("Symbol(%q) = %q, %v; want %q", tc.wicket, got, err, tc.binance)
		}
		back, err := binance.ToWicket(got)
		if err != nil || back != tc.back {
			t.Errorf("ToWicket(%q) = %q, %v; want %q", got, back, err, tc.back)
		}
	}
	for _, bad := range []string{"SPY", "BTC-", "-USD", "A-B-C", "BTC/USD"} {
		_, err := binance.Symbol(bad)
		if err == nil || !strings.Contains(err.Error(), "BTC-USD (BTCUSDT)") {
			t.Errorf("Symbol(%q): %v, want an error naming the accepted form", bad, err)
		}
	}
	if _, err := binance.ToWicket("XYZ"); err == nil {
		t.Error("ToWicket(XYZ) mapped a symbol with no known quote")
	}
	for _, g := range strategy.Granularities {
		if _, err := binance.Interval(g); err != nil {
			t.Errorf("Interval(%s): %v", g, err)
		}
	}
	if _, err := binance.Interval("2h"); err == nil || !strings.Contains(err.Error(), "1m, 5m, 15m, 1h, 4h, 1d") {
		t.Errorf("Interval(2h): %v, want the supported list", err)
	}
}

func TestKlinesPaged(t *testing.T) {
	gen := providertest.Gen{Start: t0, End: t0.Add(2500 * time.Minute), Step: time.Minute}
	f, _, c := newFake(t, map[string]providertest.Gen{"BTCUSDT": gen})
	bars, pages, err := collect(t, c, "BTCUSDT", "1m", t0, t0.Add(2500*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if bars.Len() != 2500 || pages != 3 {
		t.Fatalf("got %d bars in %d pages, want 2500 in 3", bars.Len(), pages)
	}
	for i := range 2500 {
		want := gen.At(t0.Add(time.Duration(i) * time.Minute))
		if bars.Time[i] != want.T.Unix() || bars.Open[i] != want.O || bars.High[i] != want.H || bars.Low[i] != want.L || bars.Close[i] != want.C || bars.Volume[i] != want.V {
			t.Fatalf("bar %d = %v %v %v %v %v %v, want %+v", i, bars.Time[i], bars.Open[i], bars.High[i], bars.Low[i], bars.Close[i], bars.Volume[i], want)
		}
	}
	reqs := f.Requests()
	if len(reqs) != 3 || !strings.Contains(reqs[0].Query, "limit=1000") || !strings.Contains(reqs[0].Query, "interval=1m") {
		t.Fatalf("requests: %+v", reqs)
	}
	for _, r := range reqs {
		if len(r.Header) != 0 {
			t.Errorf("request %d sent credentials %v to a public endpoint", r.N, r.Header)
		}
	}
}

// TestKlinesFixture decodes a recorded-shape response (testdata) exactly.
func TestKlinesFixture(t *testing.T) {
	body, err := os.ReadFile("testdata/klines_btcusdt_1h.json")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v3/klines" || r.URL.Query().Get("symbol") != "BTCUSDT" || r.URL.Query().Get("interval") != "1h" {
			http.Error(w, `{"code":-1100,"msg":"bad request"}`, 400)
			return
		}
		w.Write(body)
	}))
	defer srv.Close()
	c := binance.New(binance.Config{BaseURL: srv.URL})
	var got strategy.Bars
	err = c.Bars(context.Background(), "BTCUSDT", "1h", t0, t0.Add(3*time.Hour), func(b strategy.Bars) error { got = b; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if got.Len() != 3 || got.Time[0] != 1704067200 || got.Open[0] != 42283.58 || got.High[1] != 42775 || got.Low[2] != 42500 || got.Close[2] != 42581.1 || got.Volume[0] != 1271.68108 {
		t.Fatalf("decoded %+v", got)
	}
}

func TestErrors(t *testing.T) {
	gen := providertest.Gen{Start: t0, End: t0.Add(10 * time.Minute), Step: time.Minute}
	_, _, c := newFake(t, map[string]providertest.Gen{"BTCUSDT": gen})
	_, _, err := collect(t, c, "NOPEUSDT", "1m", t0, t0.Add(time.Hour))
	var pe *provider.Error
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "no spot symbol NOPEUSDT") || !strings.Contains(err.Error(), "BTC-USD (BTCUSDT)") {
		t.Fatalf("unknown symbol: %v", err)
	}

	// A body that is not Binance's error shape is shown, bounded.
	f, _, c := newFake(t, map[string]providertest.Gen{"BTCUSDT": gen})
	f.Fail(1, providertest.Fault{Status: 403, Body: "<html>WAF says no</html>"})
	if _, _, err := collect(t, c, "BTCUSDT", "1m", t0, t0.Add(time.Hour)); err == nil || !strings.Contains(err.Error(), "WAF says no") {
		t.Fatalf("403: %v", err)
	}
}

func TestRateLimitBackoff(t *testing.T) {
	body, _ := os.ReadFile("testdata/error_too_many_requests.json")
	gen := providertest.Gen{Start: t0, End: t0.Add(3000 * time.Minute), Step: time.Minute}
	f, clock, c := newFake(t, map[string]providertest.Gen{"BTCUSDT": gen})
	f.Fail(2, providertest.Fault{Status: 429, RetryAfter: "7", Body: string(body)})
	f.Fail(3, providertest.Fault{Status: 429, RetryAfter: "11", Body: string(body)})
	bars, _, err := collect(t, c, "BTCUSDT", "1m", t0, t0.Add(3000*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if bars.Len() != 3000 {
		t.Fatalf("got %d bars, want 3000", bars.Len())
	}
	reqs := f.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests, want 5 (3 pages + 2 rate-limited)", len(reqs))
	}
	if d := reqs[2].At.Sub(reqs[1].At); d < 7*time.Second {
		t.Errorf("request 3 came %v after the 429 that asked for 7s", d)
	}
	if d := reqs[3].At.Sub(reqs[2].At); d < 11*time.Second {
		t.Errorf("request 4 came %v after the 429 that asked for 11s", d)
	}
	if reqs[1].Query != reqs[2].Query || reqs[2].Query != reqs[3].Query {
		t.Errorf("the retried requests differ: %q %q %q", reqs[1].Query, reqs[2].Query, reqs[3].Query)
	}
	_ = clock
}

func TestServerErrorsBounded(t *testing.T) {
	gen := providertest.Gen{Start: t0, End: t0.Add(100 * time.Minute), Step: time.Minute}
	f, clock, c := newFake(t, map[string]providertest.Gen{"BTCUSDT": gen})
	f.Fail(1, providertest.Fault{Status: 503, Body: `{"code":-1001,"msg":"Internal error; unable to process your request. Please try again."}`})
	if bars, _, err := collect(t, c, "BTCUSDT", "1m", t0, t0.Add(100*time.Minute)); err != nil || bars.Len() != 100 {
		t.Fatalf("one 503 then success: %d bars, %v", bars.Len(), err)
	}
	if s := clock.Slept(); len(s) != 1 || s[0] != time.Second {
		t.Errorf("slept %v, want one 1s backoff", s)
	}

	f, clock, c = newFake(t, map[string]providertest.Gen{"BTCUSDT": gen})
	for n := 1; n <= 10; n++ {
		f.Fail(n, providertest.Fault{Status: 500, Body: `{"code":-1000,"msg":"An unknown error occurred while processing the request."}`})
	}
	_, _, err := collect(t, c, "BTCUSDT", "1m", t0, t0.Add(100*time.Minute))
	if err == nil || !strings.Contains(err.Error(), "unknown error") {
		t.Fatalf("persistent 500: %v", err)
	}
	if n := len(f.Requests()); n != 4 {
		t.Errorf("%d requests for a persistent 500, want 4 (1 + 3 retries)", n)
	}
	if s := clock.Slept(); len(s) != 3 || s[0] != time.Second || s[1] != 2*time.Second || s[2] != 4*time.Second {
		t.Errorf("backoff %v, want 1s 2s 4s", s)
	}
}

func TestSlowPageRetried(t *testing.T) {
	gen := providertest.Gen{Start: t0, End: t0.Add(100 * time.Minute), Step: time.Minute}
	clock := providertest.NewClock(t0.Add(24 * time.Hour))
	f := providertest.NewBinance(clock, map[string]providertest.Gen{"BTCUSDT": gen})
	defer f.Close()
	f.Fail(1, providertest.Fault{Delay: 2 * time.Second})
	c := binance.New(binance.Config{BaseURL: f.URL, Transport: &provider.Transport{Sleep: clock.Sleep, Now: clock.Now, Timeout: 150 * time.Millisecond}})
	bars, _, err := collect(t, c, "BTCUSDT", "1m", t0, t0.Add(100*time.Minute))
	if err != nil || bars.Len() != 100 {
		t.Fatalf("slow page: %d bars, %v", bars.Len(), err)
	}
	if n := len(f.Requests()); n != 2 {
		t.Errorf("%d requests, want 2 (the slow one timed out and was retried)", n)
	}
}
