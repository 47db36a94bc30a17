package agent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"wicket/node/binance"
)

// TestRealVenueEndToEnd drives the real wicket mcp binary against a real
// node whose venues are binance accounts on a fake exchange: testnet bn
// and live bnlive (the node runs with --allow-live).
func TestRealVenueEndToEnd(t *testing.T) {
	n, f := binanceNode(t)
	nc := n.Client()
	s := startMCP(t, nodeEnv(n), newProject(t), "--node", n.Addr)
	if !strings.Contains(s.init.Instructions, "no tool, prompt or resource of this server can arm a venue") {
		t.Error("the instructions do not say that no tool can arm a venue")
	}

	snap := object(t, s.call(t, "node_snapshot", `{"venue":"bn"}`))
	v := snap["venues"].([]any)[0].(map[string]any)
	if v["kind"] != "binance" || v["environment"] != "testnet" || v["armed"] != false || !strings.Contains(v["mark_source"].(string), "binance") {
		t.Errorf("node_snapshot of bn: %v", v)
	}

	order := `"venue":"bn","symbol":"BTCUSDT","side":"buy","type":"market","quantity":"0.01"`
	// Disarmed: the preview says so, and the confirmed send reports the node's refusal as it is.
	prev := object(t, s.call(t, "submit_order", "{"+order+"}"))
	pv := prev["venues"].([]any)[0].(map[string]any)
	if pv["environment"] != "testnet" || pv["armed"] != false || prev["attention"] != nil {
		t.Errorf("preview of a disarmed testnet order: %v", prev)
	}
	if dr := prev["dry_run"].(map[string]any); dr["would_accept"] != false || dr["code"] != "disarmed" {
		t.Errorf("dry run: %v", dr)
	}
	res := object(t, s.call(t, "submit_order", "{"+order+`,"confirm":true,"preview_token":"`+prev["preview_token"].(string)+`"}`))
	if res["status"] != "rejected" || res["code"] != "disarmed" || res["reason"] != "venue bn is disarmed; an operator arms it at a terminal with wicket node arm bn" {
		t.Errorf("confirmed on a disarmed venue: %v", res)
	}
	if len(f.Orders()) != 0 {
		t.Fatal("a disarmed venue received an order")
	}

	// Armed by the operator: the previewed client order id reaches the venue.
	if _, err := nc.Arm(context.Background(), "bn", time.Hour, "bn", n.OperatorKey); err != nil {
		t.Fatal(err)
	}
	prev = object(t, s.call(t, "submit_order", "{"+order+`,"reason":"e2e real venue"}`))
	pv = prev["venues"].([]any)[0].(map[string]any)
	if pv["armed"] != true || pv["armed_until"] == nil {
		t.Errorf("preview on an armed venue: %v", pv)
	}
	coid := prev["client_order_id"].(string)
	res = object(t, s.call(t, "submit_order", "{"+order+`,"reason":"e2e real venue","confirm":true,"preview_token":"`+prev["preview_token"].(string)+`"}`))
	if res["status"] != "accepted" || res["client_order_id"] != coid {
		t.Fatalf("confirmed on an armed venue: %v", res)
	}
	want, _ := binance.ClientID(coid)
	if orders := f.Orders(); len(orders) != 1 || orders[0].ClientOrderID != want || binance.NodeID(orders[0].ClientOrderID) != coid {
		t.Errorf("at the venue: %+v, want client id %s (from %s)", orders, want, coid)
	}

	// A live venue: the preview leads with it (its JSON's first key).
	live := s.call(t, "submit_order", `{"venue":"bnlive","symbol":"BTCUSDT","side":"buy","type":"market","quantity":"0.01"}`)
	if txt := text(live); !strings.HasPrefix(txt, `{"attention":"LIVE VENUE bnlive (binance live): this is real money; disarmed`) {
		t.Errorf("live preview does not lead with the venue: %.200s", txt)
	}

	// wicket://session shows each venue's kind, environment and armed state
	// (as the last node_snapshot saw them).
	s.call(t, "node_snapshot", `{}`)
	rr, err := s.ReadResource(context.Background(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "wicket://session"}})
	if err != nil {
		t.Fatal(err)
	}
	body := rr.Contents[0].(mcp.TextResourceContents).Text
	for _, w := range []string{`"environment":"testnet"`, `"environment":"live"`, `"armed":true`, `"kind":"binance"`} {
		if !strings.Contains(body, w) {
			t.Errorf("wicket://session lacks %s: %s", w, body)
		}
	}
}
