package guardrail_test

import (
	"strings"
	"testing"

	"wicket/internal/testkit"
	"wicket/node/command"
	"wicket/node/guardrail"
)

// TestCheckFlip: only an order that closes more than the position is
// refused, naming the position, the order, where it would leave the
// position, and the two orders to send instead.
func TestCheckFlip(t *testing.T) {
	for _, c := range []struct {
		side      command.Side
		qty, pos  string
		ok        bool
		mentioned []string
	}{
		{command.Sell, "0.3", "0.1", false, []string{"sell 0.3 BTCUSDT", "position of 0.1 BTCUSDT", "to -0.2", "send sell 0.1 to close it", "then sell 0.2 to open the short"}},
		{command.Buy, "0.5", "-0.2", false, []string{"buy 0.5 BTCUSDT", "position of -0.2", "to 0.3", "send buy 0.2 to close", "buy 0.3 to open the long"}},
		{command.Sell, "0.1", "0.1", true, nil},  // closes exactly
		{command.Sell, "0.05", "0.1", true, nil}, // reduces
		{command.Buy, "0.3", "0.1", true, nil},   // adds
		{command.Sell, "0.3", "0", true, nil},    // opens from flat
	} {
		ch := guardrail.CheckFlip("BTCUSDT", c.side, testkit.D(c.qty), testkit.D(c.pos))
		if ch.OK != c.ok || ch.Name != "position_flip" {
			t.Errorf("%s %s on %s: %+v", c.side, c.qty, c.pos, ch)
		}
		for _, m := range c.mentioned {
			if !strings.Contains(ch.Detail, m) {
				t.Errorf("%s %s on %s: %q lacks %q", c.side, c.qty, c.pos, ch.Detail, m)
			}
		}
	}
}
