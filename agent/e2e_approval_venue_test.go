package agent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"wicket/internal/project"
	"wicket/node/binance"
	"wicket/node/binance/binancefake"
	"wicket/node/nodetest"
	"wicket/node/venuerig"
)

// binanceNode is a real node whose venues are binance accounts on a fake
// exchange: testnet bn and live bnlive (the node runs with --allow-live).
func binanceNode(t *testing.T) (*nodetest.Server, *binancefake.Fake) {
	t.Helper()
	f := venuerig.Binance(t, map[string]string{"USDT": "20000"}, "BTCUSDT")
	n := venuerig.Start(t, []venuerig.Venue{
		venuerig.OnBinance(f, project.Venue{Name: "bn", MayArm: true, Symbols: []string{"BTCUSDT"}}),
		venuerig.OnBinance(f, project.Venue{Name: "bnlive", Environment: project.EnvLive, MayArm: true, Symbols: []string{"BTCUSDT"}}),
	}, nodetest.WithAllowLive())
	return n, f
}

// TestElicitShowsVenueEnvironmentAndArming: under --approval elicit, what
// the person is asked states the venue's environment and armed state in
// plain words — a disarmed testnet venue says it is disarmed and no real
// money, a live venue says so before anything else — and an accept on the
// armed live venue sends exactly the previewed order.
func TestElicitShowsVenueEnvironmentAndArming(t *testing.T) {
	n, f := binanceNode(t)
	el := &elicitor{answer: answer(mcp.ElicitationResponseActionDecline, nil)}
	s, _ := startMCPWith(t, nodeEnv(n), newProject(t), []client.ClientOption{client.WithElicitationHandler(el)},
		"--node", n.Addr, "--approval", "elicit")
	lastShown := func() string {
		el.mu.Lock()
		defer el.mu.Unlock()
		if len(el.shown) == 0 {
			t.Fatal("nobody was asked")
		}
		return el.shown[len(el.shown)-1]
	}
	order := func(venue string) string {
		return `"venue":"` + venue + `","symbol":"BTCUSDT","side":"buy","type":"market","quantity":"0.01"`
	}

	// A disarmed testnet venue, declined: nothing sent.
	_, res := previewThenConfirm(t, s, order("bn"))
	if !res.IsError || !strings.HasPrefix(text(res), "REFUSED [approval] ") {
		t.Fatalf("declined: %q", text(res))
	}
	shown := lastShown()
	if strings.HasPrefix(shown, "LIVE") || strings.Contains(shown, "LIVE") {
		t.Errorf("a testnet venue is called live:\n%s", shown)
	}
	for _, w := range []string{"venue: bn (binance venue): environment testnet (the exchange's test network; no real money)",
		"DISARMED: the node refuses its orders until an operator arms it at a terminal", "dry run: the node would REJECT it"} {
		if !strings.Contains(shown, w) {
			t.Errorf("disarmed testnet elicitation lacks %q:\n%s", w, shown)
		}
	}

	// The live venue, armed by the operator: said first, with until when.
	if _, err := n.Client().Arm(context.Background(), "bnlive", time.Hour, "bnlive", n.OperatorKey); err != nil {
		t.Fatal(err)
	}
	el.mu.Lock()
	el.answer = answer(mcp.ElicitationResponseActionAccept, map[string]any{"approve": true})
	el.mu.Unlock()
	coid, res := previewThenConfirm(t, s, order("bnlive"))
	if done := object(t, res); done["status"] != "accepted" || done["client_order_id"] != coid {
		t.Fatalf("accepted on the live venue: %v", done)
	}
	shown = lastShown()
	if !strings.HasPrefix(shown, "LIVE VENUE bnlive (binance live): this is real money; armed until ") {
		t.Errorf("the live venue is not said first:\n%s", shown)
	}
	for _, w := range []string{"venue: LIVE VENUE, REAL MONEY: bnlive (binance venue): environment LIVE (real money); armed by an operator until ",
		"currency USDT", "node trading state active", coid} {
		if !strings.Contains(shown, w) {
			t.Errorf("live elicitation lacks %q:\n%s", w, shown)
		}
	}
	want, _ := binance.ClientID(coid)
	if orders := f.Orders(); len(orders) != 1 || orders[0].ClientOrderID != want {
		t.Errorf("at the venue: %+v, want one order with client id %s", orders, want)
	}
}

// TestApproveShowsLiveVenueFirst: `wicket approve` on a pseudo-terminal
// shows a command for a live venue with the live line before anything
// else, and its environment and armed state in plain words; a decline
// sends nothing.
func TestApproveShowsLiveVenueFirst(t *testing.T) {
	n, f := binanceNode(t)
	proj := newProject(t)
	s := startMCP(t, nodeEnv(n), proj, "--node", n.Addr, "--approval", "operator")
	term := startApprove(t, proj)
	term.waitFor("Nothing is waiting.", 1)
	order := `"venue":"bnlive","symbol":"BTCUSDT","side":"buy","type":"market","quantity":"0.01"`
	prev := object(t, s.call(t, "submit_order", "{"+order+"}"))
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		done <- s.call(t, "submit_order", "{"+order+`,"confirm":true,"preview_token":"`+prev["preview_token"].(string)+`"}`)
	}()
	out := term.waitFor("Send it?", 1)
	_, shown, _ := strings.Cut(out, "--- waiting for approval")
	_, shown, _ = strings.Cut(shown, "\n")
	if !strings.HasPrefix(strings.TrimLeft(shown, "\r\n"), "LIVE VENUE bnlive (binance live): this is real money; disarmed") {
		t.Errorf("wicket approve does not lead with the live venue:\n%s", out)
	}
	for _, w := range []string{"environment LIVE (real money)", "DISARMED: the node refuses its orders until an operator arms it", "dry run: the node would REJECT it"} {
		if !strings.Contains(out, w) {
			t.Errorf("wicket approve did not show %q:\n%s", w, out)
		}
	}
	term.typeLine("n")
	if res := <-done; !res.IsError || !strings.Contains(text(res), "REFUSED [approval] the operator declined") {
		t.Errorf("declined: %q", text(res))
	}
	if len(f.Orders()) != 0 {
		t.Error("a declined live order reached the venue")
	}
}
