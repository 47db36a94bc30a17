package alpaca_test

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/alpaca"
	"wicket/node/alpaca/alpacafake"
	"wicket/node/command"
)

// TestSymbolOverrideTravels: a [symbols.alpaca] override is the symbol the
// adapter sends (XBT-USD listed, BTC/USD at Alpaca), and what Alpaca
// reports back (BTC/USD orders, BTCUSD positions) is named as listed.
func TestSymbolOverrideTravels(t *testing.T) {
	key, secret := testkit.Secret(t, 16), testkit.Secret(t, 16)
	f := alpacafake.New(key, secret, []alpacafake.Asset{
		{Symbol: "BTC/USD", Class: "crypto", Fractionable: true, MinOrder: "0.0001", Increment: "0.000000001", PriceIncrement: "1", Price: "60000"},
	}, "100000")
	t.Cleanup(f.Close)
	cfg, err := project.ParseConfig("wicket.toml", []byte(`[[venues]]
name = "al"
kind = "alpaca"
base_url = "`+f.URL+`"
symbols = ["XBT-USD"]

[symbols.alpaca]
"XBT-USD" = "BTC/USD"
`))
	if err != nil {
		t.Fatal(err)
	}
	vc, _ := cfg.Venue("al")
	a, err := alpaca.New(alpaca.Config{Venue: vc, KeyID: key, Secret: secret, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if in, err := a.Instruments(ctx(t), vc.Symbols); err != nil || len(in) != 1 || in["XBT-USD"].Tick.IsZero() {
		t.Fatalf("instruments %+v, %v", in, err)
	}
	vo, err := a.Submit(ctx(t), node.OrderRequest{ClientOrderID: cid, Symbol: "XBT-USD", Side: command.Buy, Type: command.Market,
		TimeInForce: command.GTC, Quantity: decimal.RequireFromString("0.01")})
	if err != nil || vo.Symbol != "XBT-USD" {
		t.Fatalf("submit: %+v, %v", vo, err)
	}
	if got := f.Orders(); len(got) != 1 || got[0].Symbol != "BTC/USD" {
		t.Fatalf("the fake took %+v", got)
	}
	acct, err := a.Account(ctx(t))
	if err != nil || len(acct.Positions) != 1 || acct.Positions[0].Symbol != "XBT-USD" {
		t.Fatalf("positions %+v, %v", acct.Positions, err)
	}
}
