// Package alpacafake is an httptest server that speaks the parts of
// Alpaca's APIs the node's adapter uses, built from Alpaca's published
// documentation (docs.alpaca.markets): Trading API "Account"
// (GET /v2/account), "Positions" (GET /v2/positions), "Assets"
// (GET /v2/assets/{symbol}), "Orders" (POST/GET/PATCH/DELETE /v2/orders,
// GET /v2/orders:by_client_order_id), errors as {"code","message"} with
// 403/404/422 and 429 with Retry-After, "Websocket Streaming" (auth,
// listen, trade_updates on /stream), "Account Activities" (GET
// /v2/account/activities: FILL and FEE), and Market Data "Latest trades"
// (/v2/stocks/trades/latest, /v1beta3/crypto/us/latest/trades).
//
// It keeps one account in memory, fills market orders at the symbol's
// price (optionally half at once: PartialFills), rests limit orders until
// Cross or a SetPrice that reaches them, and injects faults through
// venuefault plus a hook that runs after an order is taken and before it
// is answered. Stop, stop_limit and trailing_stop orders (stop_price,
// trail_price / trail_percent, the high-water mark hwm) trigger on
// SetPrice; order_class oco (a take-profit limit parent with its stop-loss
// child) and bracket (an entry parent whose take_profit and stop_loss
// children are held until it fills) are one order with legs, as the
// "Orders" page documents them: a fill of one exit cancels the other, a
// cancel of the parent or of one exit cancels the group. Crypto pairs take
// market, limit and stop_limit only, and a bracket no trailing stop.
//
// It is for tests only: it listens on loopback, checks the key headers,
// and never prints a key.
package alpacafake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"wicket/node/venuecall/venuefault"
	"wicket/node/venuefake"
)

// Asset is a tradable asset: a stock (class us_equity) or a crypto pair
// (class crypto, symbol BASE/QUOTE).
type Asset struct {
	Symbol, Class           string
	Fractionable, Shortable bool
	MinOrder, Increment     string // crypto: min_order_size, min_trade_increment
	PriceIncrement          string // crypto
	Price                   string // last trade
}

// Order is an order at the fake broker.
type Order struct {
	ID, ClientOrderID string
	Symbol            string
	Side, Type, TIF   string
	Qty, Limit        decimal.Decimal
	Status            string
	Filled, Notional  decimal.Decimal
	Created           time.Time
	ReplacedBy        string
	Class             string // "" (simple), "oco" or "bracket"
	Stop, TrailPrice  decimal.Decimal
	TrailPercent, HWM decimal.Decimal
	Triggered         bool     // a stop_limit's stop traded: it rests as a limit
	Parent            string   // a child leg's parent order id
	Legs              []string // a parent's child leg ids
}

// Fake is a running fake broker.
type Fake struct {
	*httptest.Server
	venuefault.Faults
	KeyID, Secret string

	mu      sync.Mutex
	assets  map[string]*Asset
	cash    decimal.Decimal
	pos     map[string]decimal.Decimal // by symbol as positions report it (BTCUSD, SPY)
	avg     map[string]decimal.Decimal
	orders  []*Order
	streams venuefake.Hub[struct{}]
	partial bool
	onOrder func(Order)
	seq     int
	closed  *time.Time // SetClosed: the market is closed until then
	acts    []activity // the account's activities, oldest first (history.go)
}

// New starts a fake with the assets and cash.
func New(keyID, secret string, assets []Asset, cash string) *Fake {
	f := &Fake{KeyID: keyID, Secret: secret, assets: map[string]*Asset{}, cash: decimal.RequireFromString(cash),
		pos: map[string]decimal.Decimal{}, avg: map[string]decimal.Decimal{}}
	f.RateLimitBody = `{"code":42910000,"message":"rate limit exceeded"}`
	for i := range assets {
		a := assets[i]
		f.assets[a.Symbol] = &a
	}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	return f
}

func working(o *Order) bool {
	return o.Status == "new" || o.Status == "accepted" || o.Status == "partially_filled"
}

// open is working or held (a bracket's child waiting for its entry).
func open(o *Order) bool { return working(o) || o.Status == "held" }

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("APCA-API-KEY-ID") != f.KeyID || r.Header.Get("APCA-API-SECRET-KEY") != f.Secret {
		if r.URL.Path == "/stream" {
			f.stream(w, r)
			return
		}
		venuefake.WriteJSON(w, http.StatusUnauthorized, apiErr(40110000, "request is not authorized"))
		return
	}
	if f.Before(w, r) {
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
	path := r.URL.Path
	var status int
	var out any
	var taken *Order
	var hook func(Order)
	f.mu.Lock()
	switch {
	case r.Method == "GET" && path == "/v2/clock":
		status, out = 200, f.clock()
	case r.Method == "GET" && path == "/v2/account":
		status, out = 200, map[string]any{"id": "c8f1e5a2-0000-4000-8000-000000000001", "account_number": "PA3FAKE0001", "status": "ACTIVE",
			"currency": "USD", "cash": f.cash.String(), "buying_power": f.cash.String(), "equity": f.cash.String(), "shorting_enabled": true}
	case r.Method == "GET" && path == "/v2/positions":
		status, out = 200, f.positions()
	case r.Method == "GET" && strings.HasPrefix(path, "/v2/assets/"):
		status, out = f.asset(strings.TrimPrefix(path, "/v2/assets/"))
	case r.Method == "POST" && path == "/v2/orders":
		status, out, taken = f.place(body)
		hook = f.onOrder
	case r.Method == "GET" && path == "/v2/orders:by_client_order_id":
		status, out = f.byClientID(r.URL.Query().Get("client_order_id"))
	case r.Method == "GET" && path == "/v2/orders":
		status, out = 200, f.list(r.URL.Query().Get("symbols"), r.URL.Query().Get("nested") == "true")
	case strings.HasPrefix(path, "/v2/orders/"):
		id := strings.TrimPrefix(path, "/v2/orders/")
		switch r.Method {
		case "GET":
			status, out = f.get(id)
		case "PATCH":
			status, out = f.replace(id, body)
		case "DELETE":
			status, out = f.cancel(id)
		}
	case r.Method == "GET" && path == "/v2/account/activities":
		status, out = f.activities(r.URL.Query())
	case r.Method == "GET" && path == "/v2/stocks/trades/latest":
		status, out = 200, f.latest(r.URL.Query().Get("symbols"), false)
	case r.Method == "GET" && path == "/v1beta3/crypto/us/latest/trades":
		status, out = 200, f.latest(r.URL.Query().Get("symbols"), true)
	default:
		status, out = 404, apiErr(40410000, "endpoint not found: "+r.Method+" "+path)
	}
	f.mu.Unlock()
	venuefake.Answer(w, r, &f.Faults, hook, taken, status, out)
}

func apiErr(code int, msg string) map[string]any { return map[string]any{"code": code, "message": msg} }

func positionSymbol(s string) string { return strings.ReplaceAll(s, "/", "") }

func (f *Fake) positions() []map[string]any {
	out := []map[string]any{}
	syms := make([]string, 0, len(f.pos))
	for s := range f.pos {
		syms = append(syms, s)
	}
	sort.Strings(syms)
	for _, s := range syms {
		q := f.pos[s]
		if q.IsZero() {
			continue
		}
		side := "long"
		if q.IsNegative() {
			side = "short"
		}
		out = append(out, map[string]any{"symbol": s, "qty": q.Abs().String(), "avg_entry_price": f.avg[s].String(), "side": side,
			"asset_class": "us_equity", "qty_available": q.Abs().String(), "cost_basis": "0", "unrealized_pl": "0", "exchange": "NASDAQ"})
	}
	return out
}

func (f *Fake) asset(symbol string) (int, any) {
	a := f.assets[symbol]
	if a == nil {
		return 404, apiErr(40410000, "asset not found for "+symbol)
	}
	m := map[string]any{"id": "a-" + positionSymbol(a.Symbol), "class": a.Class, "exchange": "NASDAQ", "symbol": a.Symbol, "status": "active",
		"tradable": true, "marginable": a.Class == "us_equity", "shortable": a.Shortable, "easy_to_borrow": a.Shortable, "fractionable": a.Fractionable}
	if a.Class == "crypto" {
		m["exchange"], m["min_order_size"], m["min_trade_increment"], m["price_increment"] = "CRYPTO", a.MinOrder, a.Increment, a.PriceIncrement
	}
	return 200, m
}

func (f *Fake) orderJSON(o *Order) map[string]any {
	m := map[string]any{
		"id": o.ID, "client_order_id": o.ClientOrderID, "created_at": o.Created, "updated_at": time.Now().UTC(), "submitted_at": o.Created,
		"asset_id": "a-" + positionSymbol(o.Symbol), "symbol": o.Symbol, "asset_class": f.assets[o.Symbol].Class, "qty": o.Qty.String(),
		"filled_qty": o.Filled.String(), "order_class": o.Class, "order_type": o.Type, "type": o.Type, "side": o.Side, "time_in_force": o.TIF,
		"status": o.Status, "extended_hours": false, "legs": nil,
	}
	if o.Type == "limit" || o.Type == "stop_limit" {
		m["limit_price"] = o.Limit.String()
	}
	if o.Type == "stop" || o.Type == "stop_limit" || o.Type == "trailing_stop" {
		m["stop_price"] = o.Stop.String()
	}
	if o.Type == "trailing_stop" {
		m["hwm"] = o.HWM.String()
		if o.TrailPercent.IsPositive() {
			m["trail_percent"] = o.TrailPercent.String()
		} else {
			m["trail_price"] = o.TrailPrice.String()
		}
	}
	if o.Filled.IsPositive() {
		m["filled_avg_price"] = o.Notional.DivRound(o.Filled, 8).String()
	}
	if o.ReplacedBy != "" {
		m["replaced_by"] = o.ReplacedBy
	}
	if len(o.Legs) > 0 {
		var legs []map[string]any
		for _, id := range o.Legs {
			legs = append(legs, f.orderJSON(f.find(id)))
		}
		m["legs"] = legs
	}
	return m
}

// trailStop is a trailing stop's stop from its high-water mark.
func trailStop(o *Order) decimal.Decimal {
	off := o.TrailPrice
	if o.TrailPercent.IsPositive() {
		off = o.HWM.Mul(o.TrailPercent).Div(decimal.NewFromInt(100))
	}
	return venuefake.Trail(o.Side == "buy", o.HWM, off)
}

// execute fills what can fill at price: a market order at once, a stop
// once price is at or through its stop (a stop_limit then rests as its
// limit), a limit when price reaches it; a trailing stop first follows
// price. An ioc's rest is canceled.
func (f *Fake) execute(o *Order, price decimal.Decimal) {
	buy := o.Side == "buy"
	through := func(level decimal.Decimal) bool { return venuefake.Through(buy, price, level) }
	reaches := venuefake.Reaches(buy, price, o.Limit)
	switch {
	case o.Type == "market" && f.partial:
		f.fill(o, o.Qty.Div(decimal.NewFromInt(2)).Truncate(4), price)
	case o.Type == "market":
		f.fill(o, o.Qty, price)
	case o.Type == "trailing_stop":
		if venuefake.Improves(buy, price, o.HWM) {
			o.HWM = price
			o.Stop = trailStop(o)
		}
		if through(o.Stop) {
			f.fill(o, o.Qty.Sub(o.Filled), price)
		}
	case o.Type == "stop":
		if through(o.Stop) {
			f.fill(o, o.Qty.Sub(o.Filled), price)
		}
	case o.Type == "stop_limit":
		if !o.Triggered && through(o.Stop) {
			o.Triggered = true
		}
		if o.Triggered && reaches {
			f.fill(o, o.Qty.Sub(o.Filled), o.Limit)
		}
	case reaches:
		f.fill(o, o.Qty.Sub(o.Filled), o.Limit)
	}
	if o.TIF == "ioc" && working(o) {
		o.Status = "canceled"
		f.report("canceled", o)
	}
}

func (f *Fake) fill(o *Order, qty, price decimal.Decimal) {
	if !qty.IsPositive() {
		return
	}
	o.Filled, o.Notional = o.Filled.Add(qty), o.Notional.Add(qty.Mul(price))
	o.Status = "partially_filled"
	event := "partial_fill"
	if o.Filled.Equal(o.Qty) {
		o.Status, event = "filled", "fill"
	}
	ps := positionSymbol(o.Symbol)
	signed := qty
	if o.Side == "sell" {
		signed = qty.Neg()
	}
	before := f.pos[ps]
	after := before.Add(signed)
	if before.Sign() == signed.Sign() || before.IsZero() {
		f.avg[ps] = f.avg[ps].Mul(before.Abs()).Add(qty.Mul(price)).DivRound(after.Abs(), 8)
	}
	f.pos[ps] = after
	f.cash = f.cash.Sub(signed.Mul(price))
	f.recordFill(o, event, qty, price)
	f.reportFill(event, o, qty, price, after)
	f.linked(o)
}

// exits are the take-profit and stop-loss of a group order: an oco's
// parent and child, a bracket's children.
func (f *Fake) exits(o *Order) []*Order {
	p := o
	if o.Parent != "" {
		p = f.find(o.Parent)
	}
	var out []*Order
	if p.Class == "oco" {
		out = append(out, p)
	}
	for _, id := range p.Legs {
		out = append(out, f.find(id))
	}
	return out
}

// linked applies a fill of o to its group: a bracket's entry filled in
// full releases its held exits; an exit's fill cancels the other exit.
func (f *Fake) linked(o *Order) {
	switch {
	case o.Class == "bracket" && o.Parent == "":
		if o.Status != "filled" {
			return
		}
		for _, id := range o.Legs {
			if c := f.find(id); c.Status == "held" {
				c.Status = "new"
				f.report("new", c)
				f.execute(c, decimal.RequireFromString(f.assets[c.Symbol].Price))
			}
		}
	case o.Class == "oco" || o.Class == "bracket":
		for _, x := range f.exits(o) {
			if x != o && open(x) {
				x.Status = "canceled"
				f.report("canceled", x)
			}
		}
	}
}

func (f *Fake) find(id string) *Order {
	for _, o := range f.orders {
		if o.ID == id {
			return o
		}
	}
	return nil
}

func (f *Fake) get(id string) (int, any) {
	o := f.find(id)
	if o == nil {
		return 404, apiErr(40410000, "order not found")
	}
	return 200, f.orderJSON(o)
}

func (f *Fake) byClientID(cid string) (int, any) {
	for _, o := range f.orders {
		if o.ClientOrderID == cid {
			return 200, f.orderJSON(o)
		}
	}
	return 404, apiErr(40410000, "order not found")
}

// list implements GET /v2/orders?status=open: with nested=true a group
// order is listed once, its children under legs, while any of it is open.
func (f *Fake) list(symbols string, nested bool) []map[string]any {
	want := map[string]bool{}
	for _, s := range strings.Split(symbols, ",") {
		if s != "" {
			want[s] = true
		}
	}
	out := []map[string]any{}
	for _, o := range f.orders {
		if len(want) > 0 && !want[o.Symbol] {
			continue
		}
		switch {
		case nested && o.Parent != "":
		case nested && len(o.Legs) > 0:
			if open(o) || slices.ContainsFunc(o.Legs, func(id string) bool { return open(f.find(id)) }) {
				out = append(out, f.orderJSON(o))
			}
		case open(o):
			m := f.orderJSON(o)
			if !nested {
				m["legs"] = nil
			}
			out = append(out, m)
		}
	}
	return out
}

func (f *Fake) cancel(id string) (int, any) {
	o := f.find(id)
	if o == nil {
		return 404, apiErr(40410000, "order not found")
	}
	if !open(o) {
		return 422, apiErr(42210000, "order is already "+o.Status)
	}
	o.Status = "canceled"
	f.report("canceled", o)
	if o.Class != "" { // a parent takes its children along; an exit the other exit
		group := f.exits(o)
		for _, id := range o.Legs {
			group = append(group, f.find(id))
		}
		for _, x := range group {
			if x != o && open(x) {
				x.Status = "canceled"
				f.report("canceled", x)
			}
		}
	}
	return http.StatusNoContent, nil
}

// replace implements PATCH /v2/orders/{id}: the old order becomes
// replaced and a new one takes its place.
func (f *Fake) replace(id string, body []byte) (int, any) {
	o := f.find(id)
	if o == nil {
		return 404, apiErr(40410000, "order not found")
	}
	if !open(o) || o.Type == "market" || (o.Triggered && o.Type == "stop_limit") {
		return 422, apiErr(42210000, "order is not replaceable")
	}
	var req orderReq
	if err := json.Unmarshal(body, &req); err != nil {
		return 422, apiErr(40010000, "invalid body")
	}
	if (req.LimitPrice != nil && o.Type != "limit" && o.Type != "stop_limit") || (req.StopPrice != nil && o.Type != "stop" && o.Type != "stop_limit") ||
		(req.Trail != nil && o.Type != "trailing_stop") {
		return 422, apiErr(40010001, "the replace names a field order type "+o.Type+" does not have")
	}
	f.seq++
	n := *o
	n.ID, n.ClientOrderID, n.Status, n.Created, n.ReplacedBy, n.Filled, n.Notional = fmt.Sprintf("61e69015-8549-4bfd-b9c3-%012d", f.seq), req.ClientOrderID, "new", time.Now().UTC(), "", decimal.Zero, decimal.Zero
	if o.Status == "held" { // a bracket's child waiting for its entry stays held
		n.Status = "held"
	}
	if req.Qty != nil {
		n.Qty = *req.Qty
	}
	if req.LimitPrice != nil {
		n.Limit = *req.LimitPrice
	}
	if req.StopPrice != nil {
		n.Stop = *req.StopPrice
	}
	if req.Trail != nil {
		if o.TrailPercent.IsPositive() {
			n.TrailPercent = *req.Trail
		} else {
			n.TrailPrice = *req.Trail
		}
		n.Stop = trailStop(&n)
	}
	o.Status, o.ReplacedBy = "replaced", n.ID
	if p := f.find(o.Parent); p != nil { // a child leg: its parent lists the new one
		p.Legs[slices.Index(p.Legs, o.ID)] = n.ID
	}
	f.orders = append(f.orders, &n)
	f.report("replaced", o)
	f.report("new", &n)
	if working(&n) {
		f.execute(&n, decimal.RequireFromString(f.assets[n.Symbol].Price))
	}
	return 200, f.orderJSON(&n)
}

func (f *Fake) latest(symbols string, crypto bool) map[string]any {
	trades := map[string]any{}
	for _, s := range strings.Split(symbols, ",") {
		if a := f.assets[s]; a != nil && (a.Class == "crypto") == crypto {
			p, _ := decimal.RequireFromString(a.Price).Float64()
			trades[s] = map[string]any{"t": time.Now().UTC(), "p": p, "s": 1, "i": 1}
		}
	}
	return map[string]any{"trades": trades}
}

// clock implements GET /v2/clock: open (closing in six hours) unless
// SetClosed closed it.
func (f *Fake) clock() map[string]any {
	now := time.Now().UTC()
	if f.closed != nil && now.Before(*f.closed) {
		return map[string]any{"timestamp": now, "is_open": false, "next_open": *f.closed, "next_close": f.closed.Add(6*time.Hour + 30*time.Minute)}
	}
	return map[string]any{"timestamp": now, "is_open": true, "next_open": now.Add(24 * time.Hour), "next_close": now.Add(6 * time.Hour)}
}
