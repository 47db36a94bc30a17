package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wicket/cmd/wicket/internal/trade"
	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/binance/binancefake"
	"wicket/node/command"
	"wicket/node/nodetest"
)

func TestNodeArmNeedsAnOperatorAtATerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real node processes")
	}
	vp := newVenueProject(t)
	_, c, log := vp.start(t)
	addr := strings.TrimPrefix(c.String(), "node.Client(")
	addr = strings.TrimSuffix(addr, ")")
	if !strings.Contains(log.String(), "real venue starts disarmed") {
		t.Errorf("the node's log does not say the venue starts disarmed:\n%s", log.String())
	}
	// Through a pipe: refused, nothing armed.
	out, err := vp.cli(t, addr, "node", "arm", "bn", "--addr", addr)
	if err == nil || !strings.Contains(out, "needs an interactive terminal") {
		t.Errorf("arm through a pipe: %v\n%s", err, out)
	}
	// The control key alone does not arm: the node wants the operator key.
	var ne *node.Error
	if _, err := c.Arm(context.Background(), "bn", time.Hour, "bn", nil); !errors.As(err, &ne) || ne.Code != "operator_signature_required" ||
		!strings.Contains(ne.Message, "wicket node arm bn") {
		t.Errorf("arming with the control key only: %v", err)
	}
	// Without the operator key (a project made before there was one), even
	// at a terminal: refused before the prompt, saying how to make one.
	keyFile := filepath.Join(vp.dir, "settings", "operator.key")
	if err := os.Rename(keyFile, keyFile+".away"); err != nil {
		t.Fatal(err)
	}
	out, err = vp.armAtTerminal(t, addr, "bn", "bn")
	if err == nil || !strings.Contains(out, "wicket init --operator-key") || strings.Contains(out, "to arm it: ") {
		t.Errorf("arm without the operator key: %v\n%s", err, out)
	}
	if err := os.Rename(keyFile+".away", keyFile); err != nil {
		t.Fatal(err)
	}
	// On a terminal, with the wrong name typed: not armed.
	out, err = vp.armAtTerminal(t, addr, "bn", "paper")
	if err == nil || !strings.Contains(out, "not armed") {
		t.Errorf("arm with the wrong name: %v\n%s", err, out)
	}
	// Refused without may_arm, and for live on a node without --allow-live.
	if out, err := vp.armAtTerminal(t, addr, "bnnope", "bnnope"); err == nil || !strings.Contains(out, "may_arm = true") {
		t.Errorf("arm without may_arm: %v\n%s", err, out)
	}
	if out, err := vp.armAtTerminal(t, addr, "bnlive", "bnlive"); err == nil || !strings.Contains(out, "--allow-live") || !strings.Contains(out, "REAL MONEY") {
		t.Errorf("arm live without --allow-live: %v\n%s", err, out)
	}
	if snap, _ := c.Snapshot(context.Background(), "", 0); snap != nil {
		for _, v := range snap.Venues {
			if v.Kind == "binance" && v.Armed {
				t.Errorf("%s is armed after refusals", v.Name)
			}
		}
	}
	// On a terminal, typing the name: armed, with what arming means shown first.
	out, err = vp.armAtTerminal(t, addr, "bn", "bn", "--for", "2h")
	if err != nil || !strings.Contains(out, "environment  testnet") || !strings.Contains(out, "cash         20000 USDT") ||
		!strings.Contains(out, "max order notional 25000") || !strings.Contains(out, "bn is armed until") {
		t.Fatalf("arm at a terminal: %v\n%s", err, out)
	}
	snap, err := c.Snapshot(context.Background(), "bn", 5)
	if err != nil || !snap.Venues[0].Armed || time.Until(snap.Venues[0].ArmedUntil) > 2*time.Hour {
		t.Fatalf("after arming: %+v %v", snap.Venues[0], err)
	}
	// A confirmed order now reaches the venue.
	cmd := command.Command{Verb: command.SubmitOrder, Venue: "bn", Symbol: "BTCUSDT", Side: command.Buy, Type: command.Market, Quantity: testkit.D("0.01")}
	res, err := nodetest.Send(context.Background(), c, command.NewEnvelope(cmd, "armed test"), 5*time.Second)
	if err != nil || res.Order.Status != node.OrderFilled || len(vp.fake.Orders()) != 1 {
		t.Errorf("order on the armed venue: %+v %v", res, err)
	}
	// Disarm works from a script.
	if out, err := vp.cli(t, addr, "node", "disarm", "bn", "--addr", addr); err != nil || !strings.Contains(out, "bn is disarmed") {
		t.Errorf("disarm: %v\n%s", err, out)
	}
	res, _ = nodetest.Send(context.Background(), c, command.NewEnvelope(cmd, ""), 5*time.Second)
	if res.Code != "disarmed" {
		t.Errorf("after disarm: %+v", res)
	}
	// --json (after VENUE too) prints the venue's arming state, for a script.
	if out, err := vp.cli(t, addr, "node", "disarm", "bn", "--json", "--addr", addr); err != nil {
		t.Errorf("disarm --json: %v\n%s", err, out)
	} else if info, err := decodeJSON[node.ArmInfo](out); err != nil || info.Venue != "bn" || info.Armed || info.Environment != "testnet" {
		t.Errorf("disarm --json: %+v %v\n%s", info, err, out)
	}
	// Both are rows of the node's audit trail, by the control key, and the
	// refusals armed nothing there either.
	page, err := c.Audit(context.Background(), node.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var arming []node.ArmingChange
	for _, e := range page.Entries {
		if e.Arming != nil {
			if want := map[node.ArmingAction]string{node.ArmingArm: node.KeyOperator, node.ArmingDisarm: node.KeyControl}[e.Arming.Action]; e.KeyID != want {
				t.Errorf("%s entry by %q, want %q: %+v", e.Arming.Action, e.KeyID, want, e)
			}
			arming = append(arming, *e.Arming)
		}
	}
	if len(arming) != 2 || arming[0].Action != node.ArmingArm || arming[1].Action != node.ArmingDisarm ||
		arming[0].Venue != "bn" || arming[0].Environment != "testnet" || !arming[0].Until.Equal(snap.Venues[0].ArmedUntil) {
		t.Errorf("the audit trail's arming entries: %+v", arming)
	}
	// Keys never reach the log.
	for _, k := range []string{vp.fake.APIKey, vp.fake.Secret, vp.control, vp.observe, hex.EncodeToString(vp.operator.Seed())} {
		if strings.Contains(log.String(), k) {
			t.Error("a key appears in the node's log")
		}
	}
}

// TestVenueOrderSurvivesSIGKILLBeforeTheAck kills the node with SIGKILL
// after the venue has taken an order and before the node could journal the
// venue's answer; the restarted node finds exactly that one order at the
// venue by its client order id and adopts it with its fill.
func TestVenueOrderSurvivesSIGKILLBeforeTheAck(t *testing.T) {
	vp, proc, c := startArmedVenueNode(t)
	killed := make(chan struct{})
	vp.fake.OnOrder(func(binancefake.Order) {
		proc.Process.Kill() //nolint:errcheck // SIGKILL; the answer below goes to a dead process
		proc.Wait()         //nolint:errcheck // killed
		close(killed)
	})
	cid := "wk-0190f5a2-7c1e-7b3a-9d4e-00000000c0de"
	cmd := command.Command{Verb: command.SubmitOrder, Venue: "bn", Symbol: "BTCUSDT", Side: command.Buy, Type: command.Market,
		Quantity: testkit.D("0.02"), ClientOrderID: cid}
	ticket, err := c.Submit(context.Background(), command.NewEnvelope(cmd, "crash test"))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-killed:
	case <-time.After(15 * time.Second):
		t.Fatal("the order never reached the venue")
	}
	vp.fake.OnOrder(nil)

	_, c, log := vp.start(t)
	var o node.Order
	eventually(t, "the order adopted with its fill after the restart", log, func() bool {
		snap, err := c.Snapshot(context.Background(), "bn", 100)
		if err != nil {
			t.Fatal(err)
		}
		o = node.Order{}
		for _, ev := range snap.Events {
			if ev.ClientOrderID == cid && ev.Kind == node.EventFilled {
				o.Filled = o.Filled.Add(ev.Quantity)
				o.AveragePrice = ev.Price
			}
		}
		return o.Filled.Equal(testkit.D("0.02"))
	})
	if !o.AveragePrice.Equal(testkit.D("60000")) {
		t.Errorf("adopted fill at %s", o.AveragePrice)
	}
	if n := len(vp.fake.Orders()); n != 1 {
		t.Errorf("the venue holds %d orders, want exactly 1", n)
	}
	if n := vp.fake.Requests("POST /api/v3/order"); n != 1 {
		t.Errorf("the order was sent %d times", n)
	}
	if snap, _ := c.Snapshot(context.Background(), "bn", 0); snap.Venues[0].Armed {
		t.Error("the restarted node kept the venue armed")
	}
	// The command's audit entry is written by the reconciliation, and its ticket reads back.
	page, err := c.Audit(context.Background(), node.AuditQuery{ClientOrderID: cid})
	if err != nil || len(page.Entries) != 1 || page.Entries[0].Ticket != ticket || !strings.Contains(page.Entries[0].Outcome.Detail, "settled by reconciliation") {
		t.Errorf("audit after the crash: %+v %v", page.Entries, err)
	}
	if out, err := c.Ticket(context.Background(), ticket, 0); err != nil || out.Status != node.Accepted || out.Order.Status != node.OrderFilled {
		t.Errorf("ticket after the crash: %+v %v", out, err)
	}
}

// TestNodeServeNamesMissingVenueKeys: a real venue without its keys stops
// the node at start, naming the keys (never printing any value).
func TestNodeServeNamesMissingVenueKeys(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "proj")
	p, err := project.Init(dir, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	appendFile(t, p.ConfigPath(), "\n[[venues]]\nname = \"al\"\nkind = \"alpaca\"\nsymbols = [\"SPY\"]\nbase_url = \"http://127.0.0.1:1\"\n")
	bin, _ := exec.LookPath("wicket")
	cmd := exec.Command(bin, "--project", dir, "node", "serve", "--listen", "127.0.0.1:0", "--tick", "0")
	cmd.Env = cleanEnv()
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), project.KeyAlpacaID) || !strings.Contains(string(out), project.KeyAlpacaSecret) {
		t.Errorf("serve without venue keys: %v\n%s", err, out)
	}
}

// TestTradePreviewLeadsWithALiveVenue: the trade REPL's preview of an order
// on a live venue says so in its first line; a testnet one does not.
func TestTradePreviewLeadsWithALiveVenue(t *testing.T) {
	cmd := command.Command{Verb: command.SubmitOrder, Venue: "bnlive", Symbol: "BTCUSDT", Side: command.Buy, Type: command.Market, Quantity: testkit.D("0.01")}
	var b strings.Builder
	trade.PrintPreview(&b, trade.Preview{Command: cmd, Venues: []node.PreviewVenue{{Name: "bnlive", Kind: "binance", Environment: "live"}}})
	if first, _, _ := strings.Cut(b.String(), "\n"); !strings.HasPrefix(first, "LIVE VENUE bnlive (binance live): this is real money; disarmed") {
		t.Errorf("first line %q", first)
	}
	b.Reset()
	trade.PrintPreview(&b, trade.Preview{Command: cmd, Venues: []node.PreviewVenue{{Name: "bn", Kind: "binance", Environment: "testnet", Armed: true}}})
	if strings.Contains(b.String(), "LIVE") || !strings.HasPrefix(b.String(), "preview: submit_order") {
		t.Errorf("testnet preview: %q", b.String())
	}
}

// TestTradeSnapshotShowsRealVenues: environment, arming, connection,
// pending and external orders are printed for real venues.
func TestTradeSnapshotShowsRealVenues(t *testing.T) {
	until := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	snap := &node.Snapshot{TradingState: command.Active, Venues: []node.Venue{
		{Name: "paper", Kind: "paper", Environment: "paper", Armed: true},
		{Name: "bnlive", Kind: "binance", Environment: "live", Armed: true, ArmedUntil: until, Connection: "connected", Account: "uid 1 (SPOT)",
			MarkSource: "binance live", OpenOrders: []node.Order{{ID: "ord-00000007", Venue: "bnlive", ClientOrderID: "wk-x", Symbol: "BTCUSDT",
				Side: command.Buy, Quantity: testkit.D("0.01"), Status: node.OrderPending}},
			ExternalOrders: []node.Order{{ID: "external", Venue: "bnlive", VenueOrderID: "77", ClientOrderID: "web_1", Symbol: "BTCUSDT",
				Side: command.Sell, Quantity: testkit.D("0.1"), Price: testkit.D("70000")}}},
	}}
	var b strings.Builder
	if err := trade.PrintSnapshot(&b, snap); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"LIVE (real money)", "2026-01-02T15:04:05Z", "connected", "pending at the venue", "ord-00000007", "external orders", "web_1"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("snapshot lacks %q:\n%s", want, b.String())
		}
	}
}
