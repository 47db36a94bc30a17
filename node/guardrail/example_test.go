package guardrail_test

import (
	"fmt"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/node/command"
	"wicket/node/guardrail"
)

// market is a one-symbol view: BTC-USD marked at 40000, 1 held.
type market struct{}

func (market) Mark(venue, symbol string) (decimal.Decimal, bool) {
	return decimal.NewFromInt(40000), true
}
func (market) Position(venue, symbol string) decimal.Decimal { return decimal.NewFromInt(1) }
func (market) OpenOrder(venue, id, cid string) (guardrail.Order, bool) {
	return guardrail.Order{}, false
}

func Example() {
	g := guardrail.New(project.Defaults())
	c, _ := command.Build("submit_order", map[string]string{
		"venue": "paper", "symbol": "BTC-USD", "side": "buy", "type": "limit", "quantity": "0.5", "price": "41000",
	})
	r := g.Check(c, market{})
	for _, ch := range r.Checks {
		fmt.Printf("%-17s %-5v %s\n", ch.Name, ch.OK, ch.Detail)
	}
	fmt.Println(r.OK)
	// Output:
	// venue             true  paper (paper, USD)
	// symbol            true  BTC-USD is listed on paper
	// quantity          true  0.5 is positive
	// precision         true  quantity 1 of 6 decimals, price 0 of 2
	// price_collar      true  limit 41000 is 2.50% from mark 40000 (collar 10%)
	// order_notional    true  0.5 × limit 41000 = 20500 ≤ max_order_notional 25000
	// position_notional false position 1 → 1.5 BTC-USD; 1.5 × mark 40000 = 60000 exceeds max_position_notional 50000
	// false
}
