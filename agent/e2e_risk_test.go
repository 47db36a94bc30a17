package agent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"wicket/agent"
	"wicket/node/nodetest"
)

// TestRiskStatusAndKillNotice: a read-only caller reads risk_status; the
// operator's kill (outside any MCP session) reaches the caller's listen
// stream on wicket://session as a notice within the node watch's second,
// and risk_status then shows the kill; a trader's confirm that was
// previewed before the kill is refused by the node, naming it.
func TestRiskStatusAndKillNotice(t *testing.T) {
	n := nodetest.NewServer(t)
	proj := newProject(t)
	tok := addCaller(t, proj, "viewer", agent.ProfileReadOnly)
	trader := addCaller(t, proj, "trader", agent.ProfileFull)
	h := startHTTP(t, nodeEnv(n), proj, "--node", n.Addr)
	notices := make(chan string, 32)
	s := h.connectSDK(t, tok, &sdk.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
		if nt, _ := req.Params.Meta["wicket/notice"].(map[string]any); nt != nil {
			d, _ := nt["data"].(string)
			select {
			case notices <- d:
			default:
			}
		}
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st := sdkObject(t, s.call(t, "risk_status", `{}`))
	if st["trading_state"] != "active" || st["kill"] != nil {
		t.Fatalf("risk_status before: %v", st)
	}
	if err := s.Subscribe(ctx, &sdk.SubscribeParams{URI: "wicket://session"}); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	s.rec.acked(t)
	tr := h.connectSDK(t, trader, nil)
	prev := sdkObject(t, tr.call(t, "submit_order", "{"+marketBuy+"}"))
	if _, err := n.Client().Kill(ctx, false, "drill", n.OperatorKey); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case d := <-notices:
			if !strings.Contains(d, "the node was killed by its operator") || !strings.Contains(d, "drill") {
				continue
			}
		case <-ctx.Done():
			t.Fatal("no notice of the kill on the listen stream")
		}
		break
	}
	done := sdkObject(t, tr.call(t, "submit_order", "{"+marketBuy+`,"confirm":true,"preview_token":"`+prev["preview_token"].(string)+`"}`))
	if done["status"] != "rejected" || done["code"] != "killed" {
		t.Errorf("a confirm previewed before the kill: %v", done)
	}
	st = sdkObject(t, s.call(t, "risk_status", `{}`))
	kill, _ := st["kill"].(map[string]any)
	if st["trading_state"] != "halted" || kill == nil || !strings.Contains(kill["reason"].(string), "drill") {
		t.Fatalf("risk_status after the kill: %v", st)
	}
}
