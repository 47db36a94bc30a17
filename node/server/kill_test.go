package server_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/nodetest"
	"wicket/node/venuerig"
)

// killRig is a node with the paper venue, a binance venue "bn" and an
// alpaca venue "al" on their fakes, both armed.
type killRig struct {
	srv *nodetest.Server
	c   *node.Client
	bn  *venueNode
}

func newKillRig(t testing.TB) *killRig {
	t.Helper()
	bf := newBinanceFake(t)
	af := venuerig.Alpaca(t, "50000", "BTC/USD")
	srv := venuerig.Node(t, project.Defaults(), []venuerig.Venue{binanceVenue("bn", "testnet", true, bf), alpacaVenue(af, "BTC-USD")},
		nodetest.WithVenueTimeout(2*time.Second))
	vn := &venueNode{srv: srv, fake: bf, c: srv.Client()}
	vn.waitSynced(t, "bn")
	vn.waitSynced(t, "al")
	vn.arm(t, "bn", time.Hour)
	vn.arm(t, "al", time.Hour)
	return &killRig{srv: srv, c: vn.c, bn: vn}
}

// paperLimit is a resting buy on paper 5% under the mark.
func (k *killRig) paperLimit(t *testing.T) node.Outcome {
	t.Helper()
	m := venueOf(t, snapshot(t, k.c), "paper").Marks["BTC-USD"]
	return accepted(t, k.c, order("paper", "BTC-USD", command.Buy, command.Limit, "0.01", m.Mul(testkit.D("0.95")).Round(2).String()))
}

func forbidden(t *testing.T, err error, code string) {
	t.Helper()
	var ne *node.Error
	if !errors.As(err, &ne) || ne.Kind != node.KindForbidden || ne.Code != code {
		t.Fatalf("got %v, want 403 %s", err, code)
	}
}

// TestKillCancelsEverythingHaltsAndOnlyTheOperatorResumes: working orders
// on paper, Binance and Alpaca; the control key alone cannot kill nor
// resume (403); the operator's kill cancels every one of them once (at
// the venues too), halts the node, refuses every write naming the kill
// (cancels and set_trading_state too), writes one audit entry naming
// every order, survives a restart, and the operator's resume-trading
// restores the trading state.
func TestKillCancelsEverythingHaltsAndOnlyTheOperatorResumes(t *testing.T) {
	k := newKillRig(t)
	ctx := context.Background()
	var want []string
	want = append(want, "paper:"+k.paperLimit(t).OrderID, "paper:"+k.paperLimit(t).OrderID)
	want = append(want, "bn:"+accepted(t, k.c, order("bn", "BTCUSDT", command.Buy, command.Limit, "0.01", "59000")).OrderID)
	want = append(want, "al:"+accepted(t, k.c, order("al", "BTC-USD", command.Buy, command.Limit, "0.01", "59000")).OrderID)

	_, err := k.c.Kill(ctx, false, "", nil) // the control key alone
	forbidden(t, err, "operator_signature_required")
	_, err = k.c.Kill(ctx, false, "", testkit.Key(t))
	forbidden(t, err, "bad_operator_signature")
	if s := snapshot(t, k.c); s.Kill != nil || s.TradingState != command.Active {
		t.Fatalf("a refused kill changed the node: %+v %s", s.Kill, s.TradingState)
	}

	rep, err := k.c.Kill(ctx, false, "runaway agent", k.srv.OperatorKey)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(rep.Canceled)
	slices.Sort(want)
	if !slices.Equal(rep.Canceled, want) || len(rep.Unconfirmed) != 0 || !strings.Contains(rep.Kill.Reason, "runaway agent") {
		t.Fatalf("kill canceled %v (unconfirmed %v), want %v; %+v", rep.Canceled, rep.Unconfirmed, want, rep)
	}
	for _, o := range k.bn.fake.Orders() {
		if o.Status != "CANCELED" {
			t.Errorf("binance order %d is %s after the kill", o.ID, o.Status)
		}
	}
	if n := k.bn.fake.CancelAlls(); n != 1 {
		t.Errorf("binance heard %d cancel-all requests, want its own cancel-all once", n)
	}
	s := snapshot(t, k.c)
	if s.TradingState != command.Halted || s.Kill == nil || s.Kill.Prior != command.Active {
		t.Fatalf("after the kill: state %s, kill %+v", s.TradingState, s.Kill)
	}
	for _, v := range s.Venues {
		if len(v.OpenOrders) != 0 {
			t.Errorf("%s still has %d open orders", v.Name, len(v.OpenOrders))
		}
	}
	for _, cmd := range []command.Command{
		order("paper", "BTC-USD", command.Buy, command.Market, "0.01", ""),
		order("bn", "BTCUSDT", command.Sell, command.Market, "0.01", ""),
		{Verb: command.SetTradingState, State: command.Active},
		{Verb: command.MassCancel, Venue: "paper"},
	} {
		out := rejected(t, k.c, cmd, "killed")
		if !strings.Contains(out.Reason, "killed by an operator") || !strings.Contains(out.Reason, "wicket node resume-trading") {
			t.Errorf("%s refused with %q", cmd.Verb, out.Reason)
		}
	}
	page, err := k.c.Audit(ctx, node.AuditQuery{Limit: 200})
	if err != nil {
		t.Fatal(err)
	}
	var kills []node.AuditEntry
	for _, e := range page.Entries {
		if e.Arming != nil && e.Arming.Action == node.ArmingKill {
			kills = append(kills, e)
		}
	}
	if len(kills) != 1 || kills[0].KeyID != node.KeyOperator {
		t.Fatalf("%d kill audit entries: %+v", len(kills), kills)
	}
	for _, id := range want {
		if !slices.Contains(kills[0].Outcome.Canceled, id) || !strings.Contains(kills[0].Outcome.Detail, id) {
			t.Errorf("the kill's audit entry does not name %s: %+v", id, kills[0].Outcome)
		}
	}

	k.srv.Restart(t)
	k.c = k.srv.Client()
	if s := snapshot(t, k.c); s.Kill == nil || s.TradingState != command.Halted {
		t.Fatalf("the kill did not survive a restart: %+v %s", s.Kill, s.TradingState)
	}
	_, err = k.c.ResumeTrading(ctx, "", nil)
	forbidden(t, err, "operator_signature_required")
	st, err := k.c.ResumeTrading(ctx, "checked", k.srv.OperatorKey)
	if err != nil {
		t.Fatal(err)
	}
	if st.Kill != nil || st.TradingState != command.Active {
		t.Fatalf("after resume-trading: %+v", st)
	}
	accepted(t, k.c, order("paper", "BTC-USD", command.Buy, command.Market, "0.01", ""))
}

// TestKillFlattenClosesPaperPositions: kill --flatten closes what paper
// holds, and a challenge is good for one act only.
func TestKillFlattenClosesPaperPositions(t *testing.T) {
	n := nodetest.NewServer(t)
	c := n.Client()
	accepted(t, c, order("paper", "BTC-USD", command.Buy, command.Market, "0.5", ""))
	rep, err := c.Kill(context.Background(), true, "", n.OperatorKey)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Flattened) != 1 {
		t.Fatalf("flattened %v", rep.Flattened)
	}
	if p, held := position(venueOf(t, snapshot(t, c), "paper"), "BTC-USD"); held && !p.Quantity.IsZero() {
		t.Fatalf("position after kill --flatten: %s", p.Quantity)
	}
}
