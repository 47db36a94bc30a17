package trade

import (
	"bytes"
	"strings"
	"testing"

	"wicket/internal/testkit"
	"wicket/node/command"
)

// TestTradeSnapshotShowsStops (issue 44, item 17): `wicket trade snapshot`
// shows each open order's stop price — a stop's, a stop_limit's beside its
// limit, a trailing stop's current stop with its trail — and an
// unprotected position's quantity and what the stops cover.
func TestTradeSnapshotShowsStops(t *testing.T) {
	s := testSnapshot()
	v := &s.Venues[0]
	base := v.OpenOrders[0]
	stop := base
	stop.ID, stop.Type, stop.Side, stop.Price, stop.StopPrice, stop.Symbol = "ord-00000008", command.Stop, command.Sell, testkit.D("0"), testkit.D("39000"), "BTC-USD"
	stopLimit := stop
	stopLimit.ID, stopLimit.Type, stopLimit.Price, stopLimit.StopPrice = "ord-00000009", command.StopLimit, testkit.D("38900"), testkit.D("38950")
	trail := stop
	trail.ID, trail.Type, trail.StopPrice, trail.TrailPercent = "ord-00000010", command.TrailingStop, testkit.D("40164.5"), testkit.D("2.5")
	v.OpenOrders = append(v.OpenOrders, stop, stopLimit, trail)
	v.Positions[0].Unprotected, v.Positions[0].Covered = true, testkit.D("0.025")
	v.Positions[0].UnprotectedReason = "the protective orders that can fire cover 0.025 of 0.125 (20 %)"
	var b bytes.Buffer
	if err := printTradeSnapshot(&b, s); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"PRICE  STOP",
		"ord-00000008", "-      39000  ",
		"38900  38950  ",
		"40164.5 (trail 2.5%)",
		"0.125     0.025    the protective orders that can fire cover 0.025 of 0.125 (20 %)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("snapshot lacks %q:\n%s", want, out)
		}
	}
}
