package project

import (
	"strings"
	"testing"
)

func TestVenueKinds(t *testing.T) {
	ok := func(body string) Venue {
		t.Helper()
		cfg, err := ParseConfig("wicket.toml", []byte(body))
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		return cfg.Venues[0]
	}
	v := ok("[[venues]]\nname = \"bn\"\nkind = \"binance\"\nsymbols = [\"BTCUSDT\"]\n")
	if v.Environment != EnvTestnet || v.MayArm || v.Live() || !v.Real() {
		t.Errorf("binance defaults: %+v", v)
	}
	v = ok("[[venues]]\nname = \"al\"\nkind = \"alpaca\"\nenvironment = \"live\"\nmay_arm = true\nbase_url = \"http://127.0.0.1:9\"\nsymbols = [\"SPY\"]\n")
	if v.Environment != EnvLive || !v.MayArm || !v.Live() || v.BaseURL != "http://127.0.0.1:9" {
		t.Errorf("alpaca live: %+v", v)
	}
	for _, src := range []string{"binance", "alpaca"} {
		if v := ok("[[venues]]\nname = \"p\"\nmarks = \"" + src + "\"\nsymbols = [\"BTC-USD\"]\n"); v.Marks != src || v.Real() {
			t.Errorf("paper marks %s: %+v", src, v)
		}
	}
	if v := ok("[[venues]]\nname = \"p\"\nsymbols = [\"BTC-USD\"]\n"); v.Marks != "" {
		t.Errorf("paper marks default %q, want simulated (empty)", v.Marks)
	}
	if v := ok("[[venues]]\nname = \"al\"\nkind = \"alpaca\"\nsymbols = [\"SPY\"]\n"); v.Environment != EnvPaper {
		t.Errorf("alpaca default environment %q", v.Environment)
	}
	for _, tc := range []struct{ body, want string }{
		{"kind = \"binance\"\nenvironment = \"paper\"", `environment "paper" is not one of binance's: testnet, live`},
		{"kind = \"alpaca\"\nenvironment = \"testnet\"", `not one of alpaca's: paper, live`},
		{"kind = \"paper\"\nenvironment = \"live\"", "a paper venue has no environment"},
		{"kind = \"paper\"\nmay_arm = true", "a paper venue needs no arming"},
		{"base_url = \"http://x\"", "a paper venue reaches no API"},
		{"kind = \"binance\"\nbase_url = \"ftp://x\"", "is not an http(s) URL"},
		{"kind = \"binance\"\nbase_url = \"http://user:pw@x\"", "no credentials"},
		{"kind = \"binance\"\ncash = \"100\"", "cash is the account's own"},
		{"kind = \"alpaca\"\nfee_bps = 1", "fees and fills are the venue's own"},
		{"kind = \"alpaca\"\nstart_prices = { SPY = \"1\" }", "marks come from the venue"},
		{"kind = \"binance\"\nmay_arm = \"yes\"", "may_arm"},
		{"kind = \"binance\"\napi_key = \"x\"", "unknown key"},
		{"kind = \"binance\"\nmarks = \"binance\"", "marks: a binance venue's marks come from the venue"},
		{"kind = \"alpaca\"\nmarks = \"alpaca\"", "marks: a alpaca venue's marks come from the venue"},
		{"marks = \"kraken\"", `marks "kraken" is not a mark source (valid: binance, alpaca`},
		{"marks = \"Binance\"", `marks "Binance" is not a mark source`},
		{"marks = 1", "marks"},
	} {
		_, err := ParseConfig("wicket.toml", []byte("[[venues]]\nname = \"v\"\nsymbols = [\"SPY\"]\n"+tc.body+"\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.body, err, tc.want)
		}
	}
}

func TestSecretsListShowsVenueKeysByName(t *testing.T) {
	env := map[string]string{KeyBinanceAPIKey: "k-not-shown", KeyBinanceAPISecret: "s-not-shown"}
	s, err := LoadSecrets(t.TempDir()+"/secrets.env", func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range s.List() {
		names = append(names, k.Name)
		if k.Name == KeyBinanceAPIKey && (!k.Present || !k.Known || k.Source != FromEnvironment) {
			t.Errorf("%+v", k)
		}
		if k.Name == KeyAlpacaID && k.Present { // always listed (market data reads it too), here unset
			t.Errorf("%+v", k)
		}
	}
	got := strings.Join(names, ",")
	if !strings.Contains(got, KeyBinanceAPIKey+","+KeyBinanceAPISecret) || strings.Count(got, KeyAlpacaID) != 1 {
		t.Errorf("listed %s", got)
	}
}
