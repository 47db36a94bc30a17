package server_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"wicket/gate"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/guardrail"
	"wicket/node/nodetest"
)

func bracket(side command.Side, qty, entry, tp, sl string) command.Command {
	c := command.Command{Verb: command.SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: side, Type: command.Bracket,
		Quantity: testkit.D(qty), TakeProfit: testkit.D(tp), StopPrice: testkit.D(sl)}
	if entry != "" {
		c.Price = testkit.D(entry)
	}
	return c
}

func groupOf(v node.Venue, id string) *node.Group {
	for i := range v.Groups {
		if v.Groups[i].ID == id {
			return &v.Groups[i]
		}
	}
	return nil
}

// TestBracketThroughTheNode places a limit bracket as one command: three
// linked orders whose exits wait inactive, the entry's fill activating
// them sized to it, the position protected while they work, the
// take-profit's fill cancelling the stop-loss; then cancel_order on a
// group id cancels every leg, and a position left without a stop is
// marked unprotected with the reason.
func TestBracketThroughTheNode(t *testing.T) {
	srv := nodetest.NewServer(t, replay(map[string][]decimal.Decimal{"BTC-USD": ds("100", "98.5", "103", "104.5", "100")}))
	c := srv.Client()
	br := bracket(command.Buy, "10", "99", "104", "96")
	br.ClientOrderID = "br-1"

	v, err := c.DryRun(context.Background(), command.NewEnvelope(br, ""))
	if err != nil || !v.WouldAccept {
		t.Fatalf("dry run: %+v %v", v, err)
	}
	legs := map[string]int{}
	for _, ch := range v.Checks {
		legs[ch.Leg]++
	}
	if legs[command.LegEntry] == 0 || legs[command.LegTakeProfit] == 0 || legs[command.LegStopLoss] == 0 || legs[""] == 0 {
		t.Errorf("dry run checks by leg %v, want each leg's and the command's", legs)
	}
	wrong := br
	wrong.StopPrice = testkit.D("99.5")
	if out := rejected(t, c, wrong, "stop_side"); !strings.Contains(out.Reason, "stop_loss leg stop_side: sell stop_price 99.5 must be below entry price 99") {
		t.Errorf("a stop-loss above the entry: %s", out.Reason)
	}

	out := accepted(t, c, br)
	if len(out.OrderIDs) != 3 || out.OrderID != out.OrderIDs[0] || !strings.Contains(out.Detail, "bracket "+out.OrderID) ||
		!strings.Contains(out.Detail, "inactive until entry "+out.OrderID+" fills") {
		t.Fatalf("bracket outcome: %+v", out)
	}
	entry, tp, sl := openOrder(t, c, out.OrderIDs[0]), openOrder(t, c, out.OrderIDs[1]), openOrder(t, c, out.OrderIDs[2])
	if entry == nil || tp == nil || sl == nil || entry.Leg != command.LegEntry || entry.Inactive || !tp.Inactive || !sl.Inactive ||
		tp.Parent != entry.ID || tp.Side != command.Sell || tp.Type != command.Limit || sl.Type != command.Stop ||
		tp.ClientOrderID != "br-1-tp" || sl.ClientOrderID != "br-1-stop" || tp.Group != entry.ID {
		t.Fatalf("legs: %+v %+v %+v", entry, tp, sl)
	}
	rejected(t, c, br, "duplicate_client_order_id")
	if g := groupOf(venueOf(t, snapshot(t, c), "paper"), entry.ID); g == nil || g.State != node.GroupAwaitingEntry || g.Type != command.Bracket || len(g.Legs) != 3 {
		t.Fatalf("group before the entry fills: %+v", g)
	}

	srv.Tick(t, 1) // 98.5: the entry fills at the mark (better than its limit); the exits become active, sized to it
	tp, sl = openOrder(t, c, out.OrderIDs[1]), openOrder(t, c, out.OrderIDs[2])
	if tp == nil || sl == nil || tp.Inactive || sl.Inactive || !tp.Quantity.Equal(testkit.D("10")) {
		t.Fatalf("exits after the entry's fill: %+v %+v", tp, sl)
	}
	pv := venueOf(t, snapshot(t, c), "paper")
	if p, _ := position(pv, "BTC-USD"); !p.Quantity.Equal(testkit.D("10")) || p.Unprotected || !p.AveragePrice.Equal(testkit.D("98.5")) {
		t.Errorf("position with a working stop-loss: %+v", p)
	}
	if g := groupOf(pv, entry.ID); g == nil || g.State != node.GroupActive {
		t.Errorf("group after the entry's fill: %+v", g)
	}

	srv.Tick(t, 2) // 103, then 104.5: the take-profit fills at the mark and cancels the stop-loss
	snap := snapshot(t, c)
	var tpAt decimal.Decimal
	slCanceled := false
	for _, ev := range snap.Events {
		if ev.Kind == node.EventFilled && ev.OrderID == out.OrderIDs[1] {
			tpAt = ev.Price
		}
		slCanceled = slCanceled || (ev.Kind == node.EventCanceled && ev.OrderID == out.OrderIDs[2] && strings.Contains(ev.Note, "another leg of bracket "+entry.ID))
	}
	if !tpAt.Equal(testkit.D("104.5")) || !slCanceled {
		t.Errorf("take-profit filled at %s, stop-loss canceled %v", tpAt, slCanceled)
	}
	pv = venueOf(t, snap, "paper")
	if p, _ := position(pv, "BTC-USD"); !p.Quantity.IsZero() || len(pv.Groups) != 0 {
		t.Errorf("after the take-profit: position %+v, groups %+v", p, pv.Groups)
	}

	// cancel_order on the group id, the entry still working, cancels all three.
	second := accepted(t, c, bracket(command.Buy, "1", "100", "110", "96"))
	cx := accepted(t, c, command.Command{Verb: command.CancelOrder, Venue: "paper", OrderID: second.OrderID})
	if strings.Join(cx.Canceled, ",") != strings.Join(second.OrderIDs, ",") {
		t.Errorf("cancel of the group: canceled %v of %v", cx.Canceled, second.OrderIDs)
	}

	// A market entry fills at once; its exits are active from the start.
	// cancel_order on the group id — the filled entry's — cancels the
	// exits and leaves the position unprotected, saying why.
	third := bracket(command.Buy, "2", "", "110", "90")
	third.ClientOrderID = "br-3"
	mk := accepted(t, c, third)
	if o := openOrder(t, c, mk.OrderIDs[2]); o == nil || o.Inactive || !o.Quantity.Equal(testkit.D("2")) {
		t.Fatalf("market bracket stop-loss: %+v (%s)", o, mk.Detail)
	}
	cx = accepted(t, c, command.Command{Verb: command.CancelOrder, Venue: "paper", OrderID: mk.OrderID})
	if strings.Join(cx.Canceled, ",") != strings.Join(mk.OrderIDs[1:], ",") || !strings.Contains(cx.Detail, "canceled bracket "+mk.OrderID) {
		t.Errorf("cancel by group id: canceled %v, want the two exits %v (%s)", cx.Canceled, mk.OrderIDs[1:], cx.Detail)
	}
	p, _ := position(venueOf(t, snapshot(t, c), "paper"), "BTC-USD")
	if !p.Unprotected || !strings.Contains(p.UnprotectedReason, mk.OrderIDs[2]+" stop sell (br-3-stop), was canceled without filling: canceled by cancel_order") {
		t.Errorf("position after its stop-loss was canceled: %+v", p)
	}
	rejected(t, c, command.Command{Verb: command.CancelOrder, Venue: "paper", OrderID: mk.OrderID}, "order_not_open")

	// cancel_order on one exit, by its client order id, cancels the other.
	fourth := bracket(command.Buy, "1", "", "110", "90")
	fourth.ClientOrderID = "br-4"
	mk = accepted(t, c, fourth)
	// The position is 3 (br-3's 2 and br-4's 1); br-4's stop-loss covers 1
	// of it: flagged by what it covers (issue 44 item 17b).
	if p, _ := position(venueOf(t, snapshot(t, c), "paper"), "BTC-USD"); !p.Unprotected || !p.Covered.Equal(testkit.D("1")) ||
		!strings.Contains(p.UnprotectedReason, "cover 1 of 3 (33.3 %)") {
		t.Errorf("a position of 3 with a stop-loss of 1: %+v", p)
	}
	cx = accepted(t, c, command.Command{Verb: command.CancelOrder, Venue: "paper", ClientOrderID: "br-4-tp"})
	if strings.Join(cx.Canceled, ",") != strings.Join(mk.OrderIDs[1:], ",") {
		t.Errorf("cancel of a leg: canceled %v, want %v", cx.Canceled, mk.OrderIDs[1:])
	}
}

// TestBracketPreviewGate: the one token of a bracket's preview confirms
// exactly that command — a confirm with a different leg price is refused
// and sends nothing, the previewed command places all three legs, and a
// replay of the token sends nothing.
func TestBracketPreviewGate(t *testing.T) {
	srv := nodetest.NewServer(t)
	c := srv.Client()
	ctx := context.Background()
	previews := gate.New[command.Command](gate.Options{})
	g := guardrail.New(srv.Config)
	ids := 0
	newID := func() string { ids++; return "0190a8c4-0000-7000-8000-00000000000" + string(rune('0'+ids)) }
	mark := venueOf(t, snapshot(t, c), "paper").Marks["BTC-USD"]
	br := bracket(command.Buy, "0.01", "", mark.Mul(testkit.D("1.02")).Round(2).String(), mark.Mul(testkit.D("0.98")).Round(2).String())

	orders := func() int { return len(venueOf(t, snapshot(t, c), "paper").OpenOrders) }
	p := node.NewPreview(ctx, c, g, br, "gate test", newID)
	if !p.Guardrail.OK || p.DryRun == nil || !p.DryRun.WouldAccept {
		t.Fatalf("preview: %s %+v", p.Guardrail.Summary(), p.DryRun)
	}
	tok, _, err := previews.Issue("submit_order", p.Command)
	if err != nil {
		t.Fatal(err)
	}
	other := br
	other.TakeProfit = br.TakeProfit.Add(testkit.D("1"))
	if _, err := previews.Take("submit_order", tok, other); !errors.Is(err, gate.ErrMismatch) || !strings.Contains(err.Error(), "take_profit") {
		t.Fatalf("a different take_profit confirmed: %v", err)
	}
	if n := orders(); n != 0 {
		t.Fatalf("%d orders after a refused confirm", n)
	}

	p = node.NewPreview(ctx, c, g, br, "gate test", newID)
	tok, _, _ = previews.Issue("submit_order", p.Command)
	stored, err := previews.Take("submit_order", tok, br)
	if err != nil {
		t.Fatal(err)
	}
	r := node.Send(ctx, c, node.Preview{Command: stored, Reason: p.Reason}, node.TicketWait)
	if r.Status != string(node.Accepted) {
		t.Fatalf("confirmed bracket: %+v", r)
	}
	if n := orders(); n != 2 { // the market entry filled; its two exits rest
		t.Fatalf("%d open orders after the bracket, want its 2 exits", n)
	}
	if _, err := previews.Take("submit_order", tok, br); !errors.Is(err, gate.ErrUsedToken) {
		t.Fatalf("a replayed token: %v", err)
	}
	if n := orders(); n != 2 {
		t.Fatalf("%d open orders after a replayed token", n)
	}
}
