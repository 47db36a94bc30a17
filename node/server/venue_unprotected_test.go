package server_test

import (
	"strings"
	"testing"
	"time"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
)

// bnPosition is venue bn's BTCUSDT position.
func (vn *venueNode) bnPosition(t testing.TB) node.Position {
	t.Helper()
	for _, p := range vn.venue(t, "bn").Positions {
		if p.Symbol == "BTCUSDT" {
			return p
		}
	}
	t.Fatal("no BTCUSDT position at bn")
	return node.Position{}
}

// TestUnprotectedHeldStopOnADisarmedVenue (issue 44, item 17b): Binance's
// 0.1 BTC covered by a stop the node holds is protected while the venue is
// armed; disarmed (a restart), the stop cannot fire, and with the mark 3 %
// through it the position is flagged, saying why — it showed as protected.
func TestUnprotectedHeldStopOnADisarmedVenue(t *testing.T) {
	vn := startVenueNode(t, bnVenue)
	vn.arm(t, "bn", time.Hour)
	stop := order("bn", "BTCUSDT", command.Sell, command.Stop, "0.1", "")
	stop.StopPrice = testkit.D("59000")
	out := accepted(t, vn.c, stop)
	if !strings.Contains(out.Detail, "held by the node") {
		t.Fatalf("stop: %+v", out)
	}
	if p := vn.bnPosition(t); p.Unprotected || !p.Covered.Equal(testkit.D("0.1")) {
		t.Errorf("armed, the held stop covering it all: %+v", p)
	}
	vn.srv.Restart(t) // disarmed by the restart
	vn.c = vn.srv.Client()
	vn.waitSynced(t, "bn")
	vn.fake.SetPrice("BTCUSDT", "57230.00") // 3 % through the stop
	vn.waitMark(t, "57230")
	p := vn.bnPosition(t)
	if !p.Unprotected || !p.Covered.IsZero() || !strings.Contains(p.UnprotectedReason, out.OrderID+" stop sell is held by the node, which fires it only while bn is armed, and bn is disarmed") {
		t.Errorf("disarmed, the mark through the held stop: %+v", p)
	}
}
