package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/binancefutures/binancefuturesfake"
	"wicket/node/command"
	"wicket/node/venuerig"
)

// futuresProject is a project with one binance-futures venue "perps"
// (BTCUSDT at 3x) on node/venuerig's futures fake, its keys in
// settings/secrets.env.
type futuresProject struct {
	venueProject
	ffake *binancefuturesfake.Fake
}

func newFuturesProject(t *testing.T) *futuresProject {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "proj")
	p, err := project.Init(dir, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	f := venuerig.BinanceFutures(t, "100000", "BTCUSDT")
	appendFile(t, p.ConfigPath(), fmt.Sprintf("\n[[venues]]\nname = \"perps\"\nkind = %q\nenvironment = \"testnet\"\nmay_arm = true\nbase_url = %q\nsymbols = [\"BTCUSDT\"]\n[venues.contracts.BTCUSDT]\nleverage = 3\n",
		project.KindBinanceFutures, f.URL))
	appendFile(t, p.SecretsPath(), project.KeyBinanceFuturesAPIKey+"="+f.APIKey+"\n"+project.KeyBinanceFuturesAPISecret+"="+f.Secret+"\n")
	s, err := p.Secrets(func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	fp := &futuresProject{venueProject: venueProject{dir: dir}, ffake: f}
	fp.observe, _, _ = s.Lookup(project.KeyObserve)
	fp.control, _, _ = s.Lookup(project.KeyControl)
	if fp.operator, err = p.OperatorKey(func(string) (string, bool) { return "", false }); err != nil {
		t.Fatal(err)
	}
	return fp
}

// startFutures runs `wicket node serve` for the project and waits until
// the node has read venue perps.
func (fp *futuresProject) startFutures(t *testing.T) (*node.Client, *syncBuffer, func()) {
	t.Helper()
	cmd, addr, log := runNodeServe(t, "--project", fp.dir, "node", "serve", "--listen", "127.0.0.1:0", "--tick", "0", "--venue-timeout", "1s")
	c, err := node.NewClient(addr, fp.observe, fp.control)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "venue perps synced", log, func() bool {
		snap, err := c.Snapshot(context.Background(), "perps", 0)
		return err == nil && snap.Venues[0].Connection == "connected" && snap.Venues[0].Account != ""
	})
	return c, log, func() { kill(t, cmd) }
}

// TestFuturesBracketAcrossSIGKILL: the node is killed with SIGKILL after
// Binance filled a bracket's entry and before its answer arrived. The
// restarted node adopts the filled entry and sends its reduce-only exits;
// it is killed again after Binance took the take-profit and before the
// stop was sent. The next node adopts the take-profit by its client order
// id, proves the stop absent, never resends either, and flags the
// position unprotected with the reason.
func TestFuturesBracketAcrossSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real node processes")
	}
	fp := newFuturesProject(t)
	f := fp.ffake
	c, _, killFirst := fp.startFutures(t)
	ctx := context.Background()
	if _, err := c.Arm(ctx, "perps", time.Hour, "perps", fp.operator); err != nil {
		t.Fatal(err)
	}
	killed := make(chan struct{})
	f.OnOrder(func(binancefuturesfake.Order) { killFirst(); close(killed) }) // the entry filled at binance, its answer lost
	cid := "wk-0190f5a2-7c1e-7b3a-9d4e-00000000f0a1"
	bracket := command.Command{Verb: command.SubmitOrder, Venue: "perps", Symbol: "BTCUSDT", Side: command.Buy, Type: command.Bracket,
		Quantity: testkit.D("0.02"), TakeProfit: testkit.D("60600"), StopPrice: testkit.D("59400"), ClientOrderID: cid}
	if _, err := c.Submit(ctx, command.NewEnvelope(bracket, "crash test")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-killed:
	case <-time.After(15 * time.Second):
		t.Fatal("the entry never reached the venue")
	}
	f.OnOrder(nil)
	if n := f.Requests("POST /fapi/v1/algoOrder"); n != 0 {
		t.Fatalf("%d exits sent before the entry's answer", n)
	}
	held, release := f.HoldResponses("/fapi/v1/algoOrder")
	defer release()
	_, _, killSecond := fp.startFutures(t) // adopts the entry, then sends the take-profit: its answer is held
	select {
	case <-held:
	case <-time.After(15 * time.Second):
		t.Fatal("the restarted node never sent the exits")
	}
	killSecond()
	release()

	c, log, _ := fp.startFutures(t)
	snap, err := c.Snapshot(ctx, "perps", 500)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, ev := range snap.Events {
		if ev.Kind == node.EventAccepted {
			ids[ev.ClientOrderID] = ev.OrderID
		}
	}
	tp, stop := ids[cid+node.TakeProfitLegSuffix], ids[cid+node.StopLegSuffix]
	var reason string
	eventually(t, "the take-profit adopted, the stop proved absent", log, func() bool {
		snap, err := c.Snapshot(ctx, "perps", 500)
		if err != nil {
			return false
		}
		open := map[string]bool{}
		for _, o := range snap.Venues[0].OpenOrders {
			open[o.ID] = o.Status == node.OrderOpen
		}
		failed := false
		for _, ev := range snap.Events {
			failed = failed || (ev.Kind == node.EventFailed && ev.OrderID == stop)
		}
		for _, p := range snap.Venues[0].Positions {
			if p.Symbol == "BTCUSDT" && p.Unprotected {
				reason = p.UnprotectedReason
			}
		}
		return open[tp] && failed && reason != ""
	})
	if !strings.Contains(reason, stop) || !strings.Contains(reason, "never resubmitted") {
		t.Errorf("the position's reason: %q", reason)
	}
	if n, m := len(f.Orders()), f.Requests("POST /fapi/v1/algoOrder"); n != 1 || m != 1 {
		t.Errorf("the venue was sent %d orders and %d algo orders, want the entry and the one take-profit", n, m)
	}
	if p := f.Position("BTCUSDT"); !p.Amount.Equal(testkit.D("0.02")) {
		t.Errorf("position at the venue: %+v", p)
	}
}
