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

// TestSnapshotReadsEitherSpelling: a snapshot of a venue listing binance's
// BTCUSDT answers its mark, position and instrument under wicket's BTC-USD
// too (a deployment's series is BTC-USD@1m whatever the list writes).
func TestSnapshotReadsEitherSpelling(t *testing.T) {
	cfg, err := project.ParseConfig("wicket.toml", []byte("[[venues]]\nname = \"bn\"\nkind = \"binance\"\nsymbols = [\"BTCUSDT\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	vc, _ := cfg.Venue("bn")
	s := &Snapshot{Venues: []Venue{{Name: "bn", Symbols: vc.Symbols, Spellings: vc.Spellings(),
		Marks:       map[string]decimal.Decimal{"BTCUSDT": decimal.NewFromInt(60000)},
		Positions:   []Position{{Symbol: "BTCUSDT", Quantity: decimal.NewFromInt(2)}},
		Instruments: map[string]guardrail.Instrument{"BTCUSDT": {Tick: decimal.New(1, -2)}}}}}
	for _, sym := range []string{"BTCUSDT", "BTC-USD"} {
		if m, ok := s.Mark("bn", sym); !ok || !m.Equal(decimal.NewFromInt(60000)) {
			t.Errorf("Mark(%s) = %s, %v", sym, m, ok)
		}
		if q := s.Position("bn", sym); !q.Equal(decimal.NewFromInt(2)) {
			t.Errorf("Position(%s) = %s", sym, q)
		}
		if in, ok := s.Instrument("bn", sym); !ok || in.Tick.IsZero() {
			t.Errorf("Instrument(%s) = %+v, %v", sym, in, ok)
		}
	}
	if _, ok := s.Mark("bn", "ETH-USD"); ok {
		t.Error("a mark for a symbol the venue does not list")
	}
}
