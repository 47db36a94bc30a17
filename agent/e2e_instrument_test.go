package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"wicket/internal/project"
	"wicket/node/venuerig"
)

// TestMCPTakesTheVenuesSpelling: on a Binance venue listing wicket's
// BTC-USD, submit_order naming Binance's BTCUSDT previews and confirms
// (the same arguments both times) as BTC-USD, the order reaches the venue
// as BTCUSDT, and node_snapshot and the preview show both spellings.
func TestMCPTakesTheVenuesSpelling(t *testing.T) {
	f := venuerig.Binance(t, map[string]string{"USDT": "20000"}, "BTCUSDT")
	n := venuerig.Start(t, []venuerig.Venue{venuerig.OnBinance(f, project.Venue{Name: "bn", MayArm: true, Symbols: []string{"BTC-USD"}})})
	proj := newProject(t)
	cfg, err := os.OpenFile(filepath.Join(proj, project.ConfigFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(cfg, "\n[[venues]]\nname = \"bn\"\nkind = \"binance\"\nmay_arm = true\nbase_url = %q\nsymbols = [\"BTC-USD\"]\n", f.URL)
	cfg.Close()
	if _, err := n.Client().Arm(context.Background(), "bn", time.Hour, "bn", n.OperatorKey); err != nil {
		t.Fatal(err)
	}
	s := startMCP(t, nodeEnv(n), proj, "--node", n.Addr)

	snap := object(t, s.call(t, "node_snapshot", `{"venue":"bn"}`))
	v := snap["venues"].([]any)[0].(map[string]any)
	sp, _ := v["spellings"].(map[string]any)["BTC-USD"].(map[string]any)
	if sp["canonical"] != "BTC-USD" || sp["venue"] != "BTCUSDT" {
		t.Errorf("node_snapshot spellings: %v", v["spellings"])
	}
	order := `"venue":"bn","symbol":"BTCUSDT","side":"buy","type":"market","quantity":"0.01"`
	prev := object(t, s.call(t, "submit_order", "{"+order+"}"))
	if c := prev["command"].(map[string]any); c["symbol"] != "BTC-USD" {
		t.Fatalf("previewed %v", prev)
	}
	if pv := prev["venues"].([]any)[0].(map[string]any); pv["spellings"] == nil {
		t.Errorf("the preview's venue shows no spellings: %v", pv)
	}
	res := object(t, s.call(t, "submit_order", "{"+order+`,"confirm":true,"preview_token":"`+prev["preview_token"].(string)+`"}`))
	if res["status"] != "accepted" {
		t.Fatalf("confirmed: %v", res)
	}
	if orders := f.Orders(); len(orders) != 1 || orders[0].Symbol != "BTCUSDT" {
		t.Errorf("at the venue: %+v", orders)
	}
}
