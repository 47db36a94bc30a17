package alpaca_test

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/alpaca"
	"wicket/node/alpaca/alpacafake"
	"wicket/node/venuetest"
)

// TestConformance runs the venue conformance suite against the adapter
// on alpacafake.
func TestConformance(t *testing.T) {
	venuetest.Run(t, func(t *testing.T) venuetest.Harness {
		f, another := startWith(t, 2*time.Second)
		return &harness{f: f, another: another}
	})
}

// harness is venuetest's view of alpacafake.
type harness struct {
	f       *alpacafake.Fake
	another func() *alpaca.Adapter
}

func (h *harness) Adapter(t *testing.T) venuetest.Exchange { return h.another() }
func (h *harness) Symbol() string                          { return "BTC-USD" }
func (h *harness) Price() decimal.Decimal                  { return testkit.D("60000") }
func (h *harness) Cross()                                  { h.f.Cross() }
func (h *harness) DropStreams()                            { h.f.DropStreams() }

func (h *harness) FillPart(_ *testing.T, venueOrderID string, qty decimal.Decimal) {
	h.f.FillPart(venueOrderID, qty.String())
}

// Protective trades a stock: Alpaca takes stops and ocos on stocks, not
// on crypto pairs.
func (h *harness) Protective() (string, decimal.Decimal, decimal.Decimal) {
	return "SPY", testkit.D("500"), testkit.D("2")
}
func (h *harness) SetPrice(p decimal.Decimal) { h.f.SetPrice("SPY", p.String()) }

// request is an op's method and path at Alpaca.
func request(op venuetest.Op, venueOrderID string) (method, path string) {
	switch op {
	case venuetest.OpReplace:
		return "PATCH", "/v2/orders/" + venueOrderID
	case venuetest.OpCancel:
		return "DELETE", "/v2/orders/" + venueOrderID
	}
	return "POST", "/v2/orders"
}

func (h *harness) LoseNextAnswer(op venuetest.Op, venueOrderID string) {
	_, path := request(op, venueOrderID)
	h.f.DropResponses(path, 1)
}

func (h *harness) Sent(op venuetest.Op, venueOrderID string) int {
	method, path := request(op, venueOrderID)
	return h.f.Requests(method + " " + path)
}

func (h *harness) Orders() []venuetest.FakeOrder {
	var out []venuetest.FakeOrder
	for _, o := range h.f.Orders() {
		st := map[string]node.VenueState{"new": node.VenueOpen, "accepted": node.VenueOpen, "partially_filled": node.VenueOpen,
			"filled": node.VenueFilled, "canceled": node.VenueCanceled, "expired": node.VenueCanceled, "replaced": node.VenueCanceled,
			"rejected": node.VenueRejected}[o.Status]
		out = append(out, venuetest.FakeOrder{VenueOrderID: o.ID, State: st, Quantity: o.Qty, Filled: o.Filled})
	}
	return out
}
