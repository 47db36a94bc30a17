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

	"github.com/gorilla/websocket"
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

// PartialFills makes market orders fill half at once and the rest at Cross.
func (f *Fake) PartialFills(on bool) { f.mu.Lock(); f.partial = on; f.mu.Unlock() }

// OnOrder runs after an order is taken and before its answer is written.
func (f *Fake) OnOrder(hook func(Order)) { f.mu.Lock(); f.onOrder = hook; f.mu.Unlock() }

// Orders lists every order taken, oldest first.
func (f *Fake) Orders() []Order { f.mu.Lock(); defer f.mu.Unlock(); return venuefake.Copies(f.orders) }

// Cash is the account's cash.
func (f *Fake) Cash() decimal.Decimal { f.mu.Lock(); defer f.mu.Unlock(); return f.cash }

// Position is the quantity held of symbol (as positions report it: SPY,
// BTCUSD), negative when short.
func (f *Fake) Position(symbol string) decimal.Decimal {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pos[symbol]
}

// Cross fills every working order in full at its limit (or the price).
func (f *Fake) Cross() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, o := range f.orders {
		if working(o) {
			px := o.Limit
			switch o.Type {
			case "market":
				px = decimal.RequireFromString(f.assets[o.Symbol].Price)
			case "stop", "trailing_stop":
				px = o.Stop
			}
			f.fill(o, o.Qty.Sub(o.Filled), px)
		}
	}
}

// FillPart fills qty of a working order at its limit price.
func (f *Fake) FillPart(id, qty string) { f.FillPartAt(id, qty, "") }

// FillPartAt fills qty of a working order at price ("": its limit).
func (f *Fake) FillPartAt(id, qty, price string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if o := f.find(id); o != nil && working(o) {
		px := o.Limit
		if price != "" {
			px = decimal.RequireFromString(price)
		}
		f.fill(o, decimal.RequireFromString(qty), px)
	}
}

// SetPrice moves a symbol's last trade price: triggered stops fill at it
// (a stop_limit rests as its limit), trailing stops follow it, and
// resting limits it reaches fill at their limit.
func (f *Fake) SetPrice(symbol, price string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.assets[symbol]
	a.Price = price
	px := decimal.RequireFromString(price)
	for _, o := range f.orders {
		if o.Symbol == symbol && working(o) && o.Type != "market" {
			f.execute(o, px)
		}
	}
}

// DropStreams closes every trade_updates connection.
func (f *Fake) DropStreams() { f.streams.Drop() }

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

type orderReq struct {
	Symbol        string           `json:"symbol"`
	Qty           *decimal.Decimal `json:"qty"`
	Side          string           `json:"side"`
	Type          string           `json:"type"`
	TimeInForce   string           `json:"time_in_force"`
	LimitPrice    *decimal.Decimal `json:"limit_price"`
	StopPrice     *decimal.Decimal `json:"stop_price"`
	TrailPrice    *decimal.Decimal `json:"trail_price"`
	TrailPercent  *decimal.Decimal `json:"trail_percent"`
	Trail         *decimal.Decimal `json:"trail"` // a replace's new trail, in the order's own kind
	ClientOrderID string           `json:"client_order_id"`
	OrderClass    string           `json:"order_class"`
	TakeProfit    *struct {
		LimitPrice *decimal.Decimal `json:"limit_price"`
	} `json:"take_profit"`
	StopLoss *struct {
		StopPrice  *decimal.Decimal `json:"stop_price"`
		LimitPrice *decimal.Decimal `json:"limit_price"`
	} `json:"stop_loss"`
}

// place implements POST /v2/orders: market, limit, stop, stop_limit and
// trailing_stop orders, and order_class oco and bracket.
func (f *Fake) place(body []byte) (int, any, *Order) {
	var req orderReq
	if err := json.Unmarshal(body, &req); err != nil {
		return 422, apiErr(40010000, "invalid body: "+err.Error()), nil
	}
	a := f.assets[req.Symbol]
	if a == nil {
		return 422, apiErr(40010001, "asset "+req.Symbol+" not found"), nil
	}
	for _, o := range f.orders {
		if req.ClientOrderID != "" && o.ClientOrderID == req.ClientOrderID {
			return 422, apiErr(40010001, "client_order_id must be unique"), nil
		}
	}
	if req.Qty == nil || !req.Qty.IsPositive() {
		return 422, apiErr(40010001, "qty must be > 0"), nil
	}
	if !a.Fractionable && !req.Qty.IsInteger() {
		return 422, apiErr(40010001, "fractional orders are not supported for "+a.Symbol), nil
	}
	if a.Class == "us_equity" && req.Type == "market" && req.TimeInForce != "day" {
		return 422, apiErr(40010001, "fractional and market orders must be day orders"), nil
	}
	crypto := a.Class == "crypto"
	switch {
	case crypto && req.OrderClass != "" && req.OrderClass != "simple":
		return 422, apiErr(42210000, "crypto orders do not support order_class "+req.OrderClass), nil
	case crypto && (req.Type == "stop" || req.Type == "trailing_stop"):
		return 422, apiErr(42210000, "crypto orders only support market, limit and stop_limit types"), nil
	case req.OrderClass == "bracket" && req.Type == "trailing_stop":
		return 422, apiErr(42210000, "a bracket order cannot have a trailing_stop entry"), nil
	}
	price := decimal.RequireFromString(a.Price)
	o, msg := f.newOrder(req, a.Symbol, price)
	if msg != "" {
		return 422, apiErr(40010001, msg), nil
	}
	var children []*Order
	switch req.OrderClass {
	case "", "simple":
	case "oco", "bracket":
		if req.TakeProfit == nil || req.TakeProfit.LimitPrice == nil || req.StopLoss == nil || req.StopLoss.StopPrice == nil {
			return 422, apiErr(40010001, req.OrderClass+" orders require take_profit.limit_price and stop_loss.stop_price"), nil
		}
		if req.OrderClass == "oco" && req.Type != "limit" {
			return 422, apiErr(40010001, "oco orders must be limit orders"), nil
		}
		exit := "buy"
		if req.Side == "buy" && req.OrderClass == "bracket" {
			exit = "sell"
		} else if req.OrderClass == "oco" {
			exit = req.Side
		}
		status := "held"
		if req.OrderClass == "oco" {
			o.Limit, status = *req.TakeProfit.LimitPrice, "new"
		} else {
			tp := &Order{Type: "limit", Limit: *req.TakeProfit.LimitPrice}
			children = append(children, tp)
		}
		sl := &Order{Type: "stop", Stop: *req.StopLoss.StopPrice}
		if req.StopLoss.LimitPrice != nil {
			sl.Type, sl.Limit = "stop_limit", *req.StopLoss.LimitPrice
		}
		children = append(children, sl)
		o.Class = req.OrderClass
		for _, c := range children {
			f.seq++
			c.ID, c.ClientOrderID = fmt.Sprintf("61e69015-8549-4bfd-b9c3-%012d", f.seq), fmt.Sprintf("c0ffee00-0000-4000-8000-%012d", f.seq)
			c.Symbol, c.Side, c.TIF, c.Qty, c.Status, c.Created, c.Class, c.Parent = a.Symbol, exit, "gtc", o.Qty, status, o.Created, o.Class, o.ID
			o.Legs = append(o.Legs, c.ID)
		}
	default:
		return 422, apiErr(40010001, "order_class "+req.OrderClass+" is not supported"), nil
	}
	at := price
	if o.Limit.IsPositive() {
		at = o.Limit
	}
	if req.Side == "buy" && f.cash.LessThan(req.Qty.Mul(at)) {
		return 403, apiErr(40310000, "insufficient buying power"), nil
	}
	f.orders = append(f.orders, o)
	f.orders = append(f.orders, children...)
	f.report("new", o)
	f.execute(o, price)
	for _, c := range children {
		if working(c) {
			f.execute(c, price)
		}
	}
	return 200, f.orderJSON(o), o
}

// newOrder is one order of a request, or why the request is refused.
func (f *Fake) newOrder(req orderReq, symbol string, price decimal.Decimal) (*Order, string) {
	f.seq++
	o := &Order{ID: fmt.Sprintf("61e69015-8549-4bfd-b9c3-%012d", f.seq), ClientOrderID: req.ClientOrderID, Symbol: symbol, Side: req.Side,
		Type: req.Type, TIF: req.TimeInForce, Qty: *req.Qty, Status: "new", Created: time.Now().UTC()}
	need := func(p *decimal.Decimal, field string) (decimal.Decimal, string) {
		if p == nil || !p.IsPositive() {
			return decimal.Zero, field + " is required for " + req.Type + " orders"
		}
		return *p, ""
	}
	var msg string
	switch req.Type {
	case "market":
	case "limit":
		if req.OrderClass != "oco" {
			o.Limit, msg = need(req.LimitPrice, "limit_price")
		}
	case "stop":
		o.Stop, msg = need(req.StopPrice, "stop_price")
	case "stop_limit":
		if o.Stop, msg = need(req.StopPrice, "stop_price"); msg == "" {
			o.Limit, msg = need(req.LimitPrice, "limit_price")
		}
	case "trailing_stop":
		switch {
		case req.TrailPercent != nil && req.TrailPercent.IsPositive():
			o.TrailPercent = *req.TrailPercent
		case req.TrailPrice != nil && req.TrailPrice.IsPositive():
			o.TrailPrice = *req.TrailPrice
		default:
			msg = "trail_price or trail_percent is required for trailing_stop orders"
		}
		o.HWM = price
		o.Stop = trailStop(o)
	default:
		msg = "invalid order type " + req.Type
	}
	return o, msg
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

// --- trade_updates websocket ---

func (f *Fake) stream(w http.ResponseWriter, r *http.Request) {
	c, err := venuefake.Upgrade(w, r)
	if err != nil {
		return
	}
	var auth struct{ Action, Key, Secret string }
	if c.ReadJSON(&auth) != nil || auth.Action != "auth" || auth.Key != f.KeyID || auth.Secret != f.Secret {
		c.WriteJSON(map[string]any{"stream": "authorization", "data": map[string]string{"action": "authenticate", "status": "unauthorized"}}) //nolint:errcheck // test fake
		c.Close()
		return
	}
	c.WriteJSON(map[string]any{"stream": "authorization", "data": map[string]string{"action": "authenticate", "status": "authorized"}}) //nolint:errcheck // test fake
	var listen map[string]any
	if c.ReadJSON(&listen) != nil {
		c.Close()
		return
	}
	f.mu.Lock()
	c.WriteJSON(map[string]any{"stream": "listening", "data": map[string][]string{"streams": {"trade_updates"}}}) //nolint:errcheck // test fake
	f.streams.Add(c, struct{}{})
	f.mu.Unlock()
	f.streams.Listen(c)
}

// report sends a trade update to every stream (f.mu held), as binary
// frames like Alpaca's paper endpoint does.
func (f *Fake) report(event string, o *Order) { f.send(event, o, nil) }

// reportFill sends a fill or partial_fill update with the fill's own
// price and qty and the position after it ("Websocket Streaming",
// trade_updates: fill events).
func (f *Fake) reportFill(event string, o *Order, qty, price, position decimal.Decimal) {
	f.send(event, o, map[string]any{"price": price.String(), "qty": qty.String(), "position_qty": position.String()})
}

func (f *Fake) send(event string, o *Order, extra map[string]any) {
	d := map[string]any{"event": event, "at": time.Now().UTC(), "timestamp": time.Now().UTC(), "order": f.orderJSON(o)}
	for k, v := range extra {
		d[k] = v
	}
	data, _ := json.Marshal(map[string]any{"stream": "trade_updates", "data": d})
	f.streams.Broadcast(websocket.BinaryMessage, data)
}

// SetClosed closes the market until next (GET /v2/clock says is_open
// false until then); a zero next opens it again.
func (f *Fake) SetClosed(next time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if next.IsZero() {
		f.closed = nil
		return
	}
	f.closed = &next
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
