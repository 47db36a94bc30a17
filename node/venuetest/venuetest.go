// Package venuetest is the one conformance suite every real venue's
// adapter (node/alpaca, node/binance) runs against its fake: a table of
// behaviours (submit, lost answer, partial fill, replace, cancel, stream
// drop, reconcile; and protective orders: a stop_limit placed and filled,
// an oco's one-cancels-other, an oco canceled as a group), each a
// function of a small Harness the adapter's own test package implements
// over its fake. The decimal, key and clock helpers those test packages
// share are internal/testkit's.
//
// It is for tests only: it never talks to a real venue, never prints a
// key, and never sleeps to synchronise (it waits on the adapter's stream
// with a bounded timeout).
package venuetest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/node"
	"wicket/node/command"
)

// Exchange is what the suite needs of an adapter: the order calls and the
// stream the node's engine uses.
type Exchange interface {
	Submit(ctx context.Context, r node.OrderRequest) (node.VenueOrder, error)
	SubmitGroup(ctx context.Context, g node.GroupRequest) ([]node.VenueOrder, error)
	Lookup(ctx context.Context, o node.VenueOrder) (node.VenueOrder, error)
	Cancel(ctx context.Context, o node.VenueOrder) (node.VenueOrder, error)
	Replace(ctx context.Context, o node.VenueOrder, r node.Replacement) (node.VenueOrder, error)
	OpenOrders(ctx context.Context, symbols []string) ([]node.VenueOrder, error)
	Stream(ctx context.Context, updates func(node.VenueUpdate)) error
}

// Op is a write whose answer a harness can lose.
type Op int

// The writes.
const (
	OpSubmit Op = iota
	OpReplace
	OpCancel
	OpGroup // a group's one request (an order_class order, an order list)
)

func (o Op) String() string { return [...]string{"submit", "replace", "cancel", "group"}[o] }

// FakeOrder is one order as the fake holds it, in the node's vocabulary
// (the harness maps the fake's status: a replaced incarnation is
// VenueCanceled).
type FakeOrder struct {
	VenueOrderID string
	State        node.VenueState
	Quantity     decimal.Decimal
	Filled       decimal.Decimal
}

// Harness is one adapter's fake, as the suite drives it. Each behaviour
// gets a fresh one.
type Harness interface {
	// Adapter makes an adapter on the fake, its instruments loaded; each
	// call is another process on the same account.
	Adapter(t *testing.T) Exchange
	// Symbol is the symbol the suite trades, in the node's spelling; the
	// fake fills market orders in it at Price, and accepts quantities in
	// steps of 0.001 and prices in whole units.
	Symbol() string
	Price() decimal.Decimal
	// Protective is the symbol the protective behaviours trade (one the
	// venue takes stops and ocos on), its price and the quantity to trade;
	// SetPrice moves its last trade price at the fake, triggering what it
	// reaches.
	Protective() (symbol string, price, qty decimal.Decimal)
	SetPrice(price decimal.Decimal)
	// FillPart fills qty of a working order at its limit.
	FillPart(t *testing.T, venueOrderID string, qty decimal.Decimal)
	// Cross fills every working order in full.
	Cross()
	// DropStreams closes every order stream connection.
	DropStreams()
	// LoseNextAnswer makes the fake process the next op (on the order
	// venueOrderID, for a replace or cancel) and close the connection
	// instead of answering.
	LoseNextAnswer(op Op, venueOrderID string)
	// Sent counts the op requests (on the order venueOrderID, for a
	// replace or cancel) the fake has seen.
	Sent(op Op, venueOrderID string) int
	// Orders lists every order the fake holds, oldest first.
	Orders() []FakeOrder
}

// Behaviour is one row of the suite.
type Behaviour struct {
	Name string
	Run  func(t *testing.T, h Harness)
}

// Behaviours is the suite: what every adapter must do against its fake.
var Behaviours = []Behaviour{
	{"submit", submit},
	{"lost answer", lostAnswer},
	{"partial fill", partialFill},
	{"replace", replace},
	{"lost replace answer", lostReplace},
	{"cancel", cancel},
	{"stream drop", streamDrop},
	{"reconcile", reconcile},
	{"stop_limit placed and filled", stopLimit},
	{"oco one cancels other", ocoOneCancelsOther},
	{"oco group cancel", ocoGroupCancel},
	{"stop_limit replaced", stopLimitReplace},
}

// Run runs every behaviour as a subtest, each on a harness from mk.
func Run(t *testing.T, mk func(t *testing.T) Harness) {
	for _, b := range Behaviours {
		t.Run(b.Name, func(t *testing.T) { b.Run(t, mk(t)) })
	}
}

// dec is the library's own decimal-from-literal (a bad literal panics):
// internal/testkit.D is for _test.go files only, and this package is not one.
var dec = decimal.RequireFromString

// Ctx is a context bounded for one test.
func Ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

var seq atomic.Int64

// ClientID is a fresh client order id in the node's form.
func ClientID() string { return fmt.Sprintf("wk-0190f5a2-7c1e-7b3a-9d4e-%012x", seq.Add(1)) }

// The suite's figures: limits rest below the price.
var (
	qty      = dec("0.02")
	limitOff = dec("1000")
)

func limit(h Harness, id string) node.OrderRequest {
	return node.OrderRequest{ClientOrderID: id, Symbol: h.Symbol(), Side: command.Buy, Type: command.Limit, TimeInForce: command.GTC,
		Quantity: qty, Price: h.Price().Sub(limitOff)}
}

func market(h Harness, id string) node.OrderRequest {
	return node.OrderRequest{ClientOrderID: id, Symbol: h.Symbol(), Side: command.Buy, Type: command.Market, Quantity: dec("0.01")}
}

func place(t *testing.T, a Exchange, r node.OrderRequest) node.VenueOrder {
	t.Helper()
	o, err := a.Submit(Ctx(t), r)
	if err != nil {
		t.Fatalf("submit %s: %v", r.ClientOrderID, err)
	}
	return o
}

func lookup(t *testing.T, a Exchange, h Harness, id string) node.VenueOrder {
	t.Helper()
	o, err := a.Lookup(Ctx(t), node.VenueOrder{Symbol: h.Symbol(), ClientOrderID: id})
	if err != nil {
		t.Fatalf("lookup %s: %v", id, err)
	}
	return o
}

func fakeOrder(t *testing.T, h Harness, venueOrderID string) FakeOrder {
	t.Helper()
	for _, o := range h.Orders() {
		if o.VenueOrderID == venueOrderID {
			return o
		}
	}
	t.Fatalf("the fake holds no order %s", venueOrderID)
	return FakeOrder{}
}
