package node

import (
	"context"
	"testing"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/node/command"
	"wicket/node/guardrail"
)

// TestPreviewTakesTheVenuesSpelling: a command naming a binance venue's
// listed BTC-USD as binance writes it (BTCUSDT) is previewed, checked and
// sent as the listed BTC-USD; the snapshot's venue shows both spellings.
func TestPreviewTakesTheVenuesSpelling(t *testing.T) {
	cfg, err := project.ParseConfig("wicket.toml", []byte("[[venues]]\nname = \"bn\"\nkind = \"binance\"\nsymbols = [\"BTC-USD\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	vc, _ := cfg.Venue("bn")
	v := Venue{Name: "bn", Symbols: vc.Symbols, Spellings: vc.Spellings(), Marks: map[string]decimal.Decimal{"BTC-USD": decimal.NewFromInt(100)}}
	f := &fakeConn{snap: &Snapshot{Venues: []Venue{v}}, verdict: Verdict{WouldAccept: true}}
	for _, sym := range []string{"BTCUSDT", "btcusdt", "BTC-USD"} {
		c, err := command.Build("submit_order", map[string]string{"venue": "bn", "symbol": sym, "side": "buy", "type": "market", "quantity": "1"})
		if err != nil {
			t.Fatal(err)
		}
		p := NewPreview(context.Background(), f, guardrail.New(cfg), c, "", func() string { return "id" })
		if p.Command.Symbol != "BTC-USD" || !p.Guardrail.OK {
			t.Errorf("%s: previewed %s, guardrail %+v", sym, p.Command.Symbol, p.Guardrail)
		}
	}
	if v.Both("BTCUSDT") != "BTC-USD (BTCUSDT)" || v.Both("BTC-USD") != "BTC-USD (BTCUSDT)" || v.Listed("BTCUSDT") != "BTC-USD" || v.Both("ETH-USD") != "ETH-USD" {
		t.Errorf("both %q, listed %q", v.Both("BTC-USD"), v.Listed("BTCUSDT"))
	}
}
