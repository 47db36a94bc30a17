package binance_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/binance"
	"wicket/node/binance/binancefake"
	"wicket/node/venuetest"
)

// TestConformance runs the venue conformance suite against the adapter
// on binancefake.
func TestConformance(t *testing.T) {
	venuetest.Run(t, func(t *testing.T) venuetest.Harness {
		f, another := startWith(t)
		return &harness{f: f, another: another}
	})
}

// harness is venuetest's view of binancefake.
type harness struct {
	f       *binancefake.Fake
	another func() *binance.Adapter
}

func (h *harness) Adapter(t *testing.T) venuetest.Exchange { return h.another() }
func (h *harness) Symbol() string                          { return "BTCUSDT" }
func (h *harness) Price() decimal.Decimal                  { return testkit.D("60000") }
func (h *harness) Cross()                                  { h.f.Cross() }
func (h *harness) DropStreams()                            { h.f.DropStreams() }

func (h *harness) FillPart(t *testing.T, venueOrderID string, qty decimal.Decimal) {
	id, err := strconv.ParseInt(venueOrderID, 10, 64)
	if err != nil {
		t.Fatalf("a Binance order id %q: %v", venueOrderID, err)
	}
	h.f.FillPart(id, qty.String())
}

var paths = map[venuetest.Op]string{
	venuetest.OpSubmit:  "POST /api/v3/order",
	venuetest.OpReplace: "POST /api/v3/order/cancelReplace",
	venuetest.OpCancel:  "DELETE /api/v3/order",
	venuetest.OpGroup:   "POST /api/v3/orderList/oco",
}

func (h *harness) Protective() (string, decimal.Decimal, decimal.Decimal) {
	return "BTCUSDT", testkit.D("60000"), testkit.D("0.02")
}
func (h *harness) SetPrice(p decimal.Decimal) { h.f.SetPrice("BTCUSDT", p.StringFixed(2)) }

func (h *harness) LoseNextAnswer(op venuetest.Op, _ string) {
	_, path, _ := strings.Cut(paths[op], " ")
	h.f.DropResponses(path, 1)
}

func (h *harness) Sent(op venuetest.Op, _ string) int { return h.f.Requests(paths[op]) }

func (h *harness) Orders() []venuetest.FakeOrder {
	var out []venuetest.FakeOrder
	for _, o := range h.f.Orders() {
		st := map[string]node.VenueState{"NEW": node.VenueOpen, "PARTIALLY_FILLED": node.VenueOpen, "FILLED": node.VenueFilled,
			"CANCELED": node.VenueCanceled, "EXPIRED": node.VenueCanceled, "REJECTED": node.VenueRejected}[o.Status]
		out = append(out, venuetest.FakeOrder{VenueOrderID: strconv.FormatInt(o.ID, 10), State: st, Quantity: o.Quantity, Filled: o.Filled})
	}
	return out
}
