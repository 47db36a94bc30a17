package budget

import (
	"testing"

	"github.com/shopspring/decimal"

	"wicket/internal/testkit"
	"wicket/node/command"
	"wicket/node/guardrail"
)

// markView is a guardrail.View with one mark and nothing else.
type markView struct{ mark decimal.Decimal }

func (v markView) Mark(string, string) (decimal.Decimal, bool) { return v.mark, true }
func (markView) Position(string, string) decimal.Decimal       { return decimal.Zero }
func (markView) OpenOrder(string, string, string) (guardrail.Order, bool) {
	return guardrail.Order{}, false
}

// TestNotionalOfProtectiveOrders: a stop is valued at its stop, a
// stop_limit at its limit and an oco at its dearest leg, as the guardrail
// values them, not at the mark.
func TestNotionalOfProtectiveOrders(t *testing.T) {
	view := markView{testkit.D("100")}
	for _, c := range []struct {
		name string
		cmd  command.Command
		want string
	}{
		{"market", command.Command{Type: command.Market, Quantity: testkit.D("2")}, "200"},
		{"limit", command.Command{Type: command.Limit, Quantity: testkit.D("2"), Price: testkit.D("90")}, "180"},
		{"stop", command.Command{Type: command.Stop, Side: command.Buy, Quantity: testkit.D("2"), StopPrice: testkit.D("110")}, "220"},
		{"stop_limit", command.Command{Type: command.StopLimit, Side: command.Buy, Quantity: testkit.D("2"), StopPrice: testkit.D("110"), LimitPrice: testkit.D("111")}, "222"},
		{"oco", command.Command{Type: command.OCO, Side: command.Sell, Quantity: testkit.D("2"), Price: testkit.D("120"), StopPrice: testkit.D("95")}, "240"},
	} {
		c.cmd.Verb = command.SubmitOrder
		n, ok := Notional(c.cmd, view)
		if !ok || !n.Equal(testkit.D(c.want)) {
			t.Errorf("%s: notional %s (%v), want %s", c.name, n, ok, c.want)
		}
	}
}
