package server_test

import (
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/nodetest"
)

func modify(id string, set func(*command.Command)) command.Command {
	c := command.Command{Verb: command.Modify, Venue: "paper", OrderID: id}
	set(&c)
	return c
}

// TestModifyMovesProtectiveOrders: modify moves a stop's stop_price, a
// stop_limit's limit_price and a trailing stop's trail, each re-checked by
// the guardrail at its new price; a field the type does not take, and a
// leg's quantity, are refused saying what it takes; a bracket's exits move
// too, judged against the entry while they wait for it; and a moved stop
// fills by its new price, also after a restart.
func TestModifyMovesProtectiveOrders(t *testing.T) {
	srv := nodetest.NewServer(t, replay(map[string][]decimal.Decimal{"BTC-USD": ds("100", "103", "98.5", "97.5")}))
	c := srv.Client()
	accepted(t, c, order("paper", "BTC-USD", command.Buy, command.Market, "10", ""))

	stop := accepted(t, c, stopCmd(command.Sell, command.Stop, "4", func(c *command.Command) { c.StopPrice = testkit.D("95") }))
	out := rejected(t, c, modify(stop.OrderID, func(c *command.Command) { c.StopPrice = testkit.D("100.5") }), "stop_side")
	if !strings.Contains(out.Reason, "sell stop_price 100.5 must be below mark 100") {
		t.Errorf("a moved stop through the mark: %s", out.Reason)
	}
	out = rejected(t, c, modify(stop.OrderID, func(c *command.Command) { c.Price = testkit.D("99") }), "not_modifiable")
	if !strings.Contains(out.Reason, "a stop order takes no price; it takes quantity, stop_price") {
		t.Errorf("a stop's price: %s", out.Reason)
	}
	if m := accepted(t, c, modify(stop.OrderID, func(c *command.Command) { c.StopPrice = testkit.D("99") })); !m.Order.StopPrice.Equal(testkit.D("99")) {
		t.Errorf("moved stop: %+v", m.Order)
	}

	sl := accepted(t, c, stopCmd(command.Sell, command.StopLimit, "1", func(c *command.Command) { c.StopPrice = testkit.D("96"); c.LimitPrice = testkit.D("95.5") }))
	rejected(t, c, modify(sl.OrderID, func(c *command.Command) { c.LimitPrice = testkit.D("80") }), "price_collar")
	if m := accepted(t, c, modify(sl.OrderID, func(c *command.Command) { c.StopPrice = testkit.D("97"); c.LimitPrice = testkit.D("96.5") })); !m.Order.StopPrice.Equal(testkit.D("97")) || !m.Order.Price.Equal(testkit.D("96.5")) {
		t.Errorf("moved stop_limit: %+v", m.Order)
	}

	trail := accepted(t, c, stopCmd(command.Sell, command.TrailingStop, "2", func(c *command.Command) { c.TrailAmount = testkit.D("5") }))
	m := accepted(t, c, modify(trail.OrderID, func(c *command.Command) { c.TrailPercent = testkit.D("2") }))
	if o := m.Order; !o.TrailPercent.Equal(testkit.D("2")) || !o.TrailAmount.IsZero() || !o.StopPrice.Equal(testkit.D("98")) {
		t.Errorf("trailing stop with a 2%% trail from best 100: %+v", o)
	}

	// A bracket's waiting exits: judged against the entry, and a leg takes no quantity.
	br := accepted(t, c, bracket(command.Buy, "1", "99.5", "102", "97"))
	out = rejected(t, c, modify(br.OrderIDs[2], func(c *command.Command) { c.StopPrice = testkit.D("99.75") }), "stop_side")
	if !strings.Contains(out.Reason, "sell stop_price 99.75 must be below entry price 99.5") {
		t.Errorf("a waiting stop-loss moved above its entry: %s", out.Reason)
	}
	out = rejected(t, c, modify(br.OrderIDs[1], func(c *command.Command) { c.Quantity = testkit.D("2") }), "not_modifiable")
	if !strings.Contains(out.Reason, "leg of an oco or bracket") {
		t.Errorf("a leg's quantity: %s", out.Reason)
	}
	accepted(t, c, modify(br.OrderIDs[1], func(c *command.Command) { c.Price = testkit.D("101") }))
	accepted(t, c, modify(br.OrderIDs[2], func(c *command.Command) { c.StopPrice = testkit.D("98") }))

	srv.Restart(t)
	c = srv.Client()
	if o := openOrder(t, c, stop.OrderID); o == nil || !o.StopPrice.Equal(testkit.D("99")) {
		t.Fatalf("moved stop after a restart: %+v", o)
	}
	if o := openOrder(t, c, trail.OrderID); o == nil || !o.StopPrice.Equal(testkit.D("98")) || !o.TrailPercent.Equal(testkit.D("2")) {
		t.Fatalf("trailing stop after a restart: %+v", o)
	}
	srv.Tick(t, 1) // 103: the trailing stop follows to 100.94
	if o := openOrder(t, c, trail.OrderID); o == nil || !o.StopPrice.Equal(testkit.D("100.94")) {
		t.Fatalf("trailing stop at 103 with 2%%: %+v", o)
	}
	srv.Tick(t, 1) // 98.5: the moved stop (99) and the trailing stop fill; the bracket's entry (99.5) fills at the mark
	fills := map[string]decimal.Decimal{}
	for _, ev := range snapshot(t, c).Events {
		if ev.Kind == node.EventFilled {
			fills[ev.OrderID] = ev.Price
		}
	}
	for _, id := range []string{stop.OrderID, trail.OrderID, br.OrderIDs[0]} {
		if _, ok := fills[id]; !ok {
			t.Errorf("order %s did not fill at 98.5 (fills %v)", id, fills)
		}
	}
	if o := openOrder(t, c, br.OrderIDs[2]); o == nil || o.Inactive || !o.StopPrice.Equal(testkit.D("98")) {
		t.Errorf("stop-loss once the entry filled: %+v", o)
	}
	srv.Tick(t, 1) // 97.5: the moved stop-loss fills, the take-profit is canceled
	if openOrder(t, c, br.OrderIDs[1]) != nil || openOrder(t, c, br.OrderIDs[2]) != nil {
		t.Error("a bracket leg is still open after its stop-loss filled")
	}
}
