package binancefutures_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/binancefutures"
	"wicket/node/binancefutures/binancefuturesfake"
	"wicket/node/server"
	"wicket/node/venuetest"
)

// The adapter is what the node needs of a real venue.
var _ server.Exchange = (*binancefutures.Adapter)(nil)

func ctx(t testing.TB) context.Context { return venuetest.Ctx(t) }

// venueOf is a binance-futures venue on the fake at url, BTCUSDT at
// leverage 3 isolated, ETHUSDT at the defaults.
func venueOf(url string) project.Venue {
	return project.Venue{Name: "perps", Kind: project.KindBinanceFutures, Environment: project.EnvTestnet, BaseURL: url,
		Symbols: []string{"BTCUSDT", "ETHUSDT"}, Futures: project.Futures{Contracts: map[string]project.Contract{"BTCUSDT": {Leverage: 3, MarginType: project.MarginIsolated}}}}
}

// startWith starts a fake and returns a maker of adapters on it (each
// another process on the same account, its instruments read).
func startWith(t *testing.T, opts ...func(*binancefutures.Config)) (*binancefuturesfake.Fake, func() *binancefutures.Adapter) {
	t.Helper()
	key, secret := testkit.Secret(t, 16), testkit.Secret(t, 16)
	f := binancefuturesfake.New(key, secret, []binancefuturesfake.Symbol{
		{Name: "BTCUSDT", Base: "BTC", Quote: "USDT", Tick: "0.10", Step: "0.001", MinQty: "0.001", MinNo: "5", Price: "60000"},
		{Name: "ETHUSDT", Base: "ETH", Quote: "USDT", Tick: "0.01", Step: "0.001", MinQty: "0.001", MinNo: "5", Price: "3000"},
	}, "10000")
	t.Cleanup(f.Close)
	cfg := binancefutures.Config{Venue: venueOf(f.URL), APIKey: key, APISecret: secret, Timeout: 2 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	return f, func() *binancefutures.Adapter {
		t.Helper()
		a, err := binancefutures.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Instruments(ctx(t), []string{"BTCUSDT", "ETHUSDT"}); err != nil {
			t.Fatal(err)
		}
		return a
	}
}

// notHere are the suite's behaviours that assume what USDⓈ-M futures
// does otherwise, each covered by this package's own test named beside:
// a limit is modified in place (same order id: TestReplaceInPlace), and
// an oco is two reduce-only algo orders the venue does not link (the node
// cancels the survivor: TestOCOLegs).
var notHere = map[string]string{
	"replace":               "TestReplaceInPlace",
	"oco one cancels other": "TestOCOLegs",
	"oco group cancel":      "TestOCOLegs",
}

// TestConformance runs the venue conformance suite against the adapter
// on binancefuturesfake. The protective behaviours sell to close: the
// account holds a long of their quantity first, as an exit needs one.
func TestConformance(t *testing.T) {
	for _, b := range venuetest.Behaviours {
		t.Run(b.Name, func(t *testing.T) {
			if other, ok := notHere[b.Name]; ok {
				t.Skipf("futures does this otherwise; %s covers it", other)
			}
			f, another := startWith(t)
			f.SetPosition("ETHUSDT", "1", "3000", 1, "ISOLATED")
			b.Run(t, &harness{f: f, another: another})
		})
	}
}

// harness is venuetest's view of binancefuturesfake.
type harness struct {
	f       *binancefuturesfake.Fake
	another func() *binancefutures.Adapter
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
	venuetest.OpSubmit:  "POST /fapi/v1/order",
	venuetest.OpReplace: "PUT /fapi/v1/order",
	venuetest.OpCancel:  "DELETE /fapi/v1/order",
	venuetest.OpGroup:   "POST /fapi/v1/algoOrder",
}

// algoPaths are the ops on an algo order (a stop type's venue id is a<n>).
var algoPaths = map[venuetest.Op]string{
	venuetest.OpReplace: "POST /fapi/v1/algoOrder", // cancel-then-new: the new one is the replace
	venuetest.OpCancel:  "DELETE /fapi/v1/algoOrder",
}

func (h *harness) path(op venuetest.Op, venueOrderID string) string {
	if strings.HasPrefix(venueOrderID, "a") {
		return algoPaths[op]
	}
	return paths[op]
}

func (h *harness) Protective() (string, decimal.Decimal, decimal.Decimal) {
	return "ETHUSDT", testkit.D("3000"), testkit.D("0.5")
}
func (h *harness) SetPrice(p decimal.Decimal) { h.f.SetPrice("ETHUSDT", p.String()) }

func (h *harness) LoseNextAnswer(op venuetest.Op, id string) {
	_, path, _ := strings.Cut(h.path(op, id), " ")
	h.f.DropResponses(path, 1)
}

func (h *harness) Sent(op venuetest.Op, id string) int { return h.f.Requests(h.path(op, id)) }

func (h *harness) Orders() []venuetest.FakeOrder {
	st := map[string]node.VenueState{"NEW": node.VenueOpen, "PARTIALLY_FILLED": node.VenueOpen, "FILLED": node.VenueFilled,
		"CANCELED": node.VenueCanceled, "EXPIRED": node.VenueCanceled, "REJECTED": node.VenueRejected}
	var out []venuetest.FakeOrder
	byActual := map[int64]binancefuturesfake.Order{}
	for _, o := range h.f.Orders() {
		if strings.HasPrefix(o.ClientOrderID, "algo") {
			byActual[o.ID] = o
			continue
		}
		out = append(out, venuetest.FakeOrder{VenueOrderID: strconv.FormatInt(o.ID, 10), State: st[o.Status], Quantity: o.Quantity, Filled: o.Filled})
	}
	for _, g := range h.f.Algos() {
		fo := venuetest.FakeOrder{VenueOrderID: "a" + strconv.FormatInt(g.ID, 10), State: node.VenueOpen, Quantity: g.Quantity}
		switch g.Status {
		case "CANCELED", "EXPIRED":
			fo.State = node.VenueCanceled
		case "REJECTED":
			fo.State = node.VenueRejected
		}
		if act, ok := byActual[g.Actual]; ok {
			fo.State, fo.Filled = st[act.Status], act.Filled
		}
		out = append(out, fo)
	}
	return out
}
