// Package alpacafake is an httptest server that speaks the parts of
// Alpaca's APIs the node's adapter uses, built from Alpaca's published
// documentation (docs.alpaca.markets): Trading API "Account"
// (GET /v2/account), "Positions" (GET /v2/positions), "Assets"
// (GET /v2/assets/{symbol}), "Orders" (POST/GET/PATCH/DELETE /v2/orders,
// GET /v2/orders:by_client_order_id), errors as {"code","message"} with
// 403/404/422 and 429 with Retry-After, "Websocket Streaming" (auth,
// listen, trade_updates on /stream), and Market Data "Latest trades"
// (/v2/stocks/trades/latest, /v1beta3/crypto/us/latest/trades).
//
// It keeps one account in memory, fills market orders at the symbol's
// price (optionally half at once: PartialFills), rests limit orders until
// Cross, and injects faults through venuefault plus a hook that runs after
// an order is taken and before it is answered.
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
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/shopspring/decimal"

	"wicket/node/venuecall/venuefault"
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
	conns   map[*websocket.Conn]bool
	partial bool
	onOrder func(Order)
	seq     int
}

// New starts a fake with the assets and cash.
func New(keyID, secret string, assets []Asset, cash string) *Fake {
	f := &Fake{KeyID: keyID, Secret: secret, assets: map[string]*Asset{}, cash: decimal.RequireFromString(cash),
		pos: map[string]decimal.Decimal{}, avg: map[string]decimal.Decimal{}, conns: map[*websocket.Conn]bool{}}
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
func (f *Fake) Orders() []Order {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Order, len(f.orders))
	for i, o := range f.orders {
		out[i] = *o
	}
	return out
}

// Cash is the account's cash.
func (f *Fake) Cash() decimal.Decimal { f.mu.Lock(); defer f.mu.Unlock(); return f.cash }

// Cross fills every working order in full at its limit (or the price).
func (f *Fake) Cross() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, o := range f.orders {
		if working(o) {
			px := o.Limit
			if o.Type == "market" {
				px = decimal.RequireFromString(f.assets[o.Symbol].Price)
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

// DropStreams closes every trade_updates connection.
func (f *Fake) DropStreams() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.conns {
		c.Close()
		delete(f.conns, c)
	}
}

func working(o *Order) bool {
	return o.Status == "new" || o.Status == "accepted" || o.Status == "partially_filled"
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("APCA-API-KEY-ID") != f.KeyID || r.Header.Get("APCA-API-SECRET-KEY") != f.Secret {
		if r.URL.Path == "/stream" {
			f.stream(w, r)
			return
		}
		writeJSON(w, http.StatusUnauthorized, apiErr(40110000, "request is not authorized"))
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
		status, out = 200, f.open(r.URL.Query().Get("symbols"))
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
	case r.Method == "GET" && path == "/v2/stocks/trades/latest":
		status, out = 200, f.latest(r.URL.Query().Get("symbols"), false)
	case r.Method == "GET" && path == "/v1beta3/crypto/us/latest/trades":
		status, out = 200, f.latest(r.URL.Query().Get("symbols"), true)
	default:
		status, out = 404, apiErr(40410000, "endpoint not found: "+r.Method+" "+path)
	}
	f.mu.Unlock()
	if hook != nil && taken != nil {
		hook(*taken)
	}
	if f.Drop(w, r) {
		return
	}
	if status == http.StatusNoContent {
		w.WriteHeader(status)
		return
	}
	writeJSON(w, status, out)
}

func apiErr(code int, msg string) map[string]any { return map[string]any{"code": code, "message": msg} }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v) //nolint:errcheck // test fake
}

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
		"filled_qty": o.Filled.String(), "order_class": "", "order_type": o.Type, "type": o.Type, "side": o.Side, "time_in_force": o.TIF,
		"status": o.Status, "extended_hours": false, "legs": nil,
	}
	if o.Type == "limit" {
		m["limit_price"] = o.Limit.String()
	}
	if o.Filled.IsPositive() {
		m["filled_avg_price"] = o.Notional.DivRound(o.Filled, 8).String()
	}
	if o.ReplacedBy != "" {
		m["replaced_by"] = o.ReplacedBy
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
	ClientOrderID string           `json:"client_order_id"`
}

// place implements POST /v2/orders for market and limit orders.
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
	price := decimal.RequireFromString(a.Price)
	limit := decimal.Zero
	if req.Type == "limit" {
		if req.LimitPrice == nil {
			return 422, apiErr(40010001, "limit_price is required for limit orders"), nil
		}
		limit = *req.LimitPrice
	}
	at := price
	if req.Type == "limit" {
		at = limit
	}
	if req.Side == "buy" && f.cash.LessThan(req.Qty.Mul(at)) {
		return 403, apiErr(40310000, "insufficient buying power"), nil
	}
	f.seq++
	o := &Order{ID: fmt.Sprintf("61e69015-8549-4bfd-b9c3-%012d", f.seq), ClientOrderID: req.ClientOrderID, Symbol: a.Symbol, Side: req.Side,
		Type: req.Type, TIF: req.TimeInForce, Qty: *req.Qty, Limit: limit, Status: "new", Created: time.Now().UTC()}
	f.orders = append(f.orders, o)
	f.report("new", o)
	f.execute(o, price)
	return 200, f.orderJSON(o), o
}

func (f *Fake) execute(o *Order, price decimal.Decimal) {
	switch {
	case o.Type == "market" && f.partial:
		f.fill(o, o.Qty.Div(decimal.NewFromInt(2)).Truncate(4), price)
	case o.Type == "market":
		f.fill(o, o.Qty, price)
	case (o.Side == "buy" && price.LessThanOrEqual(o.Limit)) || (o.Side == "sell" && price.GreaterThanOrEqual(o.Limit)):
		f.fill(o, o.Qty, o.Limit)
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
	f.reportFill(event, o, qty, price, after)
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

func (f *Fake) open(symbols string) []map[string]any {
	want := map[string]bool{}
	for _, s := range strings.Split(symbols, ",") {
		if s != "" {
			want[s] = true
		}
	}
	out := []map[string]any{}
	for _, o := range f.orders {
		if working(o) && (len(want) == 0 || want[o.Symbol]) {
			out = append(out, f.orderJSON(o))
		}
	}
	return out
}

func (f *Fake) cancel(id string) (int, any) {
	o := f.find(id)
	if o == nil {
		return 404, apiErr(40410000, "order not found")
	}
	if !working(o) {
		return 422, apiErr(42210000, "order is already "+o.Status)
	}
	o.Status = "canceled"
	f.report("canceled", o)
	return http.StatusNoContent, nil
}

// replace implements PATCH /v2/orders/{id}: the old order becomes
// replaced and a new one takes its place.
func (f *Fake) replace(id string, body []byte) (int, any) {
	o := f.find(id)
	if o == nil {
		return 404, apiErr(40410000, "order not found")
	}
	if !working(o) || o.Type != "limit" {
		return 422, apiErr(42210000, "order is not replaceable")
	}
	var req orderReq
	if err := json.Unmarshal(body, &req); err != nil {
		return 422, apiErr(40010000, "invalid body")
	}
	f.seq++
	n := &Order{ID: fmt.Sprintf("61e69015-8549-4bfd-b9c3-%012d", f.seq), ClientOrderID: req.ClientOrderID, Symbol: o.Symbol, Side: o.Side,
		Type: o.Type, TIF: o.TIF, Qty: o.Qty, Limit: o.Limit, Status: "new", Created: time.Now().UTC()}
	if req.Qty != nil {
		n.Qty = *req.Qty
	}
	if req.LimitPrice != nil {
		n.Limit = *req.LimitPrice
	}
	o.Status, o.ReplacedBy = "replaced", n.ID
	f.orders = append(f.orders, n)
	f.report("replaced", o)
	f.report("new", n)
	f.execute(n, decimal.RequireFromString(f.assets[n.Symbol].Price))
	return 200, f.orderJSON(n)
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

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

func (f *Fake) stream(w http.ResponseWriter, r *http.Request) {
	c, err := upgrader.Upgrade(w, r, nil)
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
	f.conns[c] = true
	f.mu.Unlock()
	for {
		if _, _, err := c.ReadMessage(); err != nil {
			f.mu.Lock()
			delete(f.conns, c)
			f.mu.Unlock()
			c.Close()
			return
		}
	}
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
	for c := range f.conns {
		c.SetWriteDeadline(time.Now().Add(time.Second)) //nolint:errcheck // test fake
		if c.WriteMessage(websocket.BinaryMessage, data) != nil {
			c.Close()
			delete(f.conns, c)
		}
	}
}
