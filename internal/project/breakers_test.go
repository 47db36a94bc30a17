package project

import (
	"strings"
	"testing"
)

// TestVenueBreakerKeys: [[venues]] max_daily_loss and max_drawdown_pct
// read as decimal strings; a negative loss or a drawdown of 100% or more
// is refused naming the fix.
func TestVenueBreakerKeys(t *testing.T) {
	base := "[[venues]]\nname = \"paper\"\nkind = \"paper\"\ncurrency = \"USD\"\ncash = \"10000\"\nsymbols = [\"BTC-USD\"]\n"
	cfg, err := ParseConfig("wicket.toml", []byte(base+"max_daily_loss = \"500.5\"\nmax_drawdown_pct = \"12.5\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	v, _ := cfg.Venue("paper")
	if v.MaxDailyLoss.String() != "500.5" || v.MaxDrawdownPct.String() != "12.5" {
		t.Fatalf("read %s and %s", v.MaxDailyLoss, v.MaxDrawdownPct)
	}
	for _, c := range []struct{ line, want string }{
		{"max_daily_loss = \"-1\"", "max_daily_loss -1: give the most the venue may lose"},
		{"max_drawdown_pct = \"100\"", "max_drawdown_pct 100: give a percent above 0 and under 100"},
	} {
		if _, err := ParseConfig("wicket.toml", []byte(base+c.line+"\n")); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.line, err)
		}
	}
}
