package approval

import (
	"strings"
	"testing"

	"wicket/internal/testkit"
	"wicket/node/command"
)

// TestWordsOfProtectiveOrders: a person approving a stop reads its stop,
// never "at market".
func TestWordsOfProtectiveOrders(t *testing.T) {
	d := testkit.D
	for _, c := range []struct {
		cmd  command.Command
		want string
	}{
		{command.Command{Type: command.Stop, StopPrice: d("95")}, "stop at 95"},
		{command.Command{Type: command.StopLimit, StopPrice: d("95"), LimitPrice: d("94")}, "stop at 95 then limit at 94"},
		{command.Command{Type: command.TrailingStop, TrailPercent: d("2")}, "trailing stop 2% behind the best price"},
		{command.Command{Type: command.OCO, Price: d("110"), StopPrice: d("95")}, "one-cancels-other: limit at 110 or stop at 95"},
		{command.Command{Type: command.Market}, "at market"},
	} {
		c.cmd.Verb, c.cmd.Side, c.cmd.Quantity, c.cmd.Symbol, c.cmd.Venue = command.SubmitOrder, command.Sell, d("1"), "BTC-USD", "paper"
		if got := Words(c.cmd); !strings.Contains(got, c.want) || (c.cmd.Type != command.Market && strings.Contains(got, "at market")) {
			t.Errorf("%s: %q, want it to say %q", c.cmd.Type, got, c.want)
		}
	}
}
