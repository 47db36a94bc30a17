// Package binancefake is an httptest server that speaks the parts of the
// Binance spot API the node's adapter uses, built from Binance's published
// documentation (developers.binance.com/docs/binance-spot-api-docs):
// "General API Information" (errors, 429 with Retry-After, signed
// endpoints), "Market Data endpoints" (exchangeInfo, ticker/price),
// "Trading endpoints" (POST/GET/DELETE /api/v3/order, order/cancelReplace,
// openOrders), "Account endpoints" (/api/v3/account, /api/v3/myTrades) and the WebSocket
// API's user data stream (userDataStream.subscribe.signature on
// /ws-api/v3, then executionReport events wrapped with their
// subscriptionId). The deprecated listen-key endpoints are not served.
//
// It keeps one account's balances and orders in memory, fills market
// orders at the symbol's price (optionally in two parts: PartialFills),
// charges each trade a commission when asked (Commission, in the asset
// received or in BNB: CommissionInBNB; listed in the FULL answer's fills,
// the executionReport's n and N, and myTrades),
// rests limit orders until Cross or a SetPrice that reaches them, triggers
// STOP_LOSS_LIMIT and STOP_LOSS (stopPrice, or trailingDelta in basis
// points) orders on SetPrice, takes an OCO as one order list (POST
// /api/v3/orderList/oco: aboveType/belowType, a LIMIT_MAKER and a
// STOP_LOSS(_LIMIT); when one leg executes the other expires, and a
// cancel of one leg cancels the list, as "New Order list - OCO" and
// "Cancel order" document), and injects faults on request: latency,
// a dropped response (the order is taken, the answer never sent), 429 and
// 5xx answers, stream drops and refused subscriptions, and a hook that runs after an order is taken
// and before it is answered (the crash test kills the node there).
//
// It is for tests only: it listens on loopback, checks every signature,
// and never prints a key.
package binancefake

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"wicket/node/venuecall/venuefault"
	"wicket/node/venuefake"
)

// Symbol is a listed spot symbol.
type Symbol struct {
	Name, Base, Quote         string
	Tick, Step, MinQty, MinNo string // filters
	Price                     string // last trade price
}

// Order is an order at the fake exchange.
type Order struct {
	ID            int64
	ClientOrderID string
	Symbol        string
	Side, Type    string
	TimeInForce   string
	Quantity      decimal.Decimal
	Price         decimal.Decimal
	Status        string
	Filled        decimal.Decimal
	Quote         decimal.Decimal // cumulative quote quantity
	Time          int64
	StopPrice     decimal.Decimal // STOP_LOSS(_LIMIT): the trigger; a trailing stop's current one
	TrailingDelta int64           // basis points; a trailing STOP_LOSS
	Best          decimal.Decimal // a trailing stop's best price since placement
	Triggered     bool            // a STOP_LOSS_LIMIT's stop traded: it works as a limit
	ListID        int64           // the order list it belongs to; -1: none
	// SelfTradePrevention is the order's selfTradePreventionMode as sent
	// ("" when none was).
	SelfTradePrevention string
}

// trade is one fill, as GET /api/v3/myTrades lists it.
type trade struct {
	id, orderID  int64
	symbol       string
	price, qty   decimal.Decimal
	buyer        bool
	commission   decimal.Decimal
	commissionIn string
	time         int64
}

// Fake is a running fake exchange.
type Fake struct {
	*httptest.Server
	venuefault.Faults
	APIKey, Secret string

	mu         sync.Mutex
	cancelAlls int // cancel-all requests that canceled something
	symbols    map[string]*Symbol
	balances   map[string]decimal.Decimal
	orders     []*Order
	nextID     int64
	streams    venuefake.Hub[int] // subscribed connections → subscriptionId
	subs       int                // subscriptions made
	refuse     *refusal
	rejectMsg  string
	trades     []trade
	partial    bool
	queued     bool // market orders wait, taken but not traded, until Cross
	onOrder    func(Order)
	unlinked   bool            // a fault: an executed oco leg leaves the other working
	rate       decimal.Decimal // commission per trade (Commission); zero: none
	bnbPrice   decimal.Decimal // BNB's price in the quote asset when commissions are paid in BNB
}

// refusal is how the fake answers a subscription while RefuseStreams is on.
type refusal struct {
	status, code int
	msg          string
}

// New starts a fake with the symbols and balances (asset → amount).
func New(apiKey, secret string, symbols []Symbol, balances map[string]string) *Fake {
	f := &Fake{APIKey: apiKey, Secret: secret, symbols: map[string]*Symbol{}, balances: map[string]decimal.Decimal{},
		nextID: 1000}
	f.RateLimitBody = `{"code":-1003,"msg":"Too much request weight used; current limit is 6000 request weight per 1 MINUTE."}`
	for i := range symbols {
		s := symbols[i]
		f.symbols[s.Name] = &s
	}
	for a, v := range balances {
		f.balances[a] = decimal.RequireFromString(v)
	}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	return f
}

// match fills a resting order o at the last price px when px reaches it.
func (f *Fake) match(o *Order, px decimal.Decimal) {
	buy := o.Side == "BUY"
	reaches := venuefake.Reaches(buy, px, o.Price)
	switch o.Type {
	case "STOP_LOSS", "STOP_LOSS_LIMIT":
		if o.TrailingDelta > 0 && venuefake.Improves(buy, px, o.Best) {
			o.Best = px
			o.StopPrice = trailStop(o)
		}
		if !o.Triggered && venuefake.Through(buy, px, o.StopPrice) {
			o.Triggered = true
		}
		switch {
		case o.Triggered && o.Type == "STOP_LOSS":
			f.fill(o, o.Quantity.Sub(o.Filled), px)
		case o.Triggered && reaches:
			f.fill(o, o.Quantity.Sub(o.Filled), o.Price)
		}
	default:
		if reaches {
			f.fill(o, o.Quantity.Sub(o.Filled), o.Price)
		}
	}
}

// trailStop is a trailing stop's trigger, trailingDelta from its best.
func trailStop(o *Order) decimal.Decimal {
	return venuefake.Trail(o.Side == "BUY", o.Best, o.Best.Mul(decimal.New(o.TrailingDelta, -4)))
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	key := r.Method + " " + r.URL.Path
	if f.Before(w, r) { // a venue that is down refuses the WebSocket API's handshake too
		return
	}
	if r.URL.Path == "/ws-api/v3" {
		f.stream(w, r)
		return
	}
	check := venuefake.Signed
	if r.URL.Path == "/api/v3/exchangeInfo" || r.URL.Path == "/api/v3/ticker/price" {
		check = venuefake.Public
	}
	if _, ok := venuefake.BinanceRequest(w, r, f.APIKey, f.Secret, check); !ok {
		return
	}
	var status int
	var body any
	var hook func(Order)
	var taken *Order
	f.mu.Lock()
	switch key {
	case "GET /api/v3/exchangeInfo":
		status, body = f.exchangeInfo(r)
	case "GET /api/v3/ticker/price":
		status, body = f.prices(r)
	case "GET /api/v3/account":
		status, body = 200, f.account()
	case "POST /api/v3/order":
		status, body, taken = f.create(r.Form)
		hook = f.onOrder
	case "GET /api/v3/order":
		status, body = f.get(r.Form)
	case "DELETE /api/v3/order":
		status, body = f.cancel(r.Form)
	case "DELETE /api/v3/openOrders":
		status, body = f.cancelAll(r.Form)
	case "POST /api/v3/orderList/oco":
		status, body = f.orderListOCO(r.Form)
		if status == http.StatusOK {
			taken = f.orders[len(f.orders)-1] // the list's last leg
		}
		hook = f.onOrder
	case "POST /api/v3/order/cancelReplace":
		status, body = f.cancelReplace(r.Form)
	case "GET /api/v3/openOrders":
		status, body = f.open(r.Form)
	case "GET /api/v3/myTrades":
		status, body = f.myTrades(r.Form)
	default:
		status, body = 404, errBody(-1000, "unknown endpoint "+key)
	}
	f.mu.Unlock()
	venuefake.Answer(w, r, &f.Faults, hook, taken, status, body)
}

// errBody is Binance's error body.
var errBody = venuefake.BinanceError

func (f *Fake) listed(r *http.Request) []string {
	var names []string
	if s := r.Form.Get("symbols"); s != "" {
		json.Unmarshal([]byte(s), &names) //nolint:errcheck // an empty list answers everything
	}
	if s := r.Form.Get("symbol"); s != "" {
		names = []string{s}
	}
	if len(names) == 0 {
		for n := range f.symbols {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	return names
}

func (f *Fake) exchangeInfo(r *http.Request) (int, any) {
	var out []map[string]any
	for _, n := range f.listed(r) {
		s := f.symbols[n]
		if s == nil {
			return 400, errBody(-1121, "Invalid symbol.")
		}
		out = append(out, map[string]any{
			"symbol": s.Name, "status": "TRADING", "baseAsset": s.Base, "quoteAsset": s.Quote,
			"orderTypes": []string{"LIMIT", "MARKET"}, "isSpotTradingAllowed": true,
			"filters": []map[string]any{
				{"filterType": "PRICE_FILTER", "minPrice": s.Tick, "maxPrice": "1000000.00", "tickSize": s.Tick},
				{"filterType": "LOT_SIZE", "minQty": s.MinQty, "maxQty": "9000.00", "stepSize": s.Step},
				{"filterType": "NOTIONAL", "minNotional": s.MinNo, "applyMinToMarket": true, "maxNotional": "9000000.00", "applyMaxToMarket": false, "avgPriceMins": 5},
			},
		})
	}
	return 200, map[string]any{"timezone": "UTC", "serverTime": time.Now().UnixMilli(), "symbols": out}
}

func (f *Fake) prices(r *http.Request) (int, any) {
	var out []map[string]string
	for _, n := range f.listed(r) {
		if s := f.symbols[n]; s != nil {
			out = append(out, map[string]string{"symbol": s.Name, "price": s.Price})
		}
	}
	return 200, out
}

func (f *Fake) account() any {
	var bal []map[string]string
	assets := make([]string, 0, len(f.balances))
	for a := range f.balances {
		assets = append(assets, a)
	}
	sort.Strings(assets)
	for _, a := range assets {
		locked := decimal.Zero
		bal = append(bal, map[string]string{"asset": a, "free": f.balances[a].String(), "locked": locked.String()})
	}
	return map[string]any{"canTrade": true, "accountType": "SPOT", "balances": bal, "uid": 354937868, "permissions": []string{"SPOT"}}
}

func (f *Fake) newOrder(symbol, side, typ, tif, cid string, qty, price decimal.Decimal) *Order {
	f.nextID++
	o := &Order{ID: f.nextID, ClientOrderID: cid, Symbol: symbol, Side: side, Type: typ, TimeInForce: tif,
		Quantity: qty, Price: price, Status: "NEW", Time: time.Now().UnixMilli(), ListID: -1}
	f.orders = append(f.orders, o)
	return o
}

func (f *Fake) find(form url.Values) *Order {
	id, _ := strconv.ParseInt(form.Get("orderId"), 10, 64)
	cid := form.Get("origClientOrderId")
	for i := len(f.orders) - 1; i >= 0; i-- {
		o := f.orders[i]
		if o.Symbol == form.Get("symbol") && ((id != 0 && o.ID == id) || (id == 0 && cid != "" && o.ClientOrderID == cid)) {
			return o
		}
	}
	return nil
}

func working(o *Order) bool { return o.Status == "NEW" || o.Status == "PARTIALLY_FILLED" }

// execute fills what can fill now: a market order at the last price
// (half of it when partial fills are on), a marketable limit at its limit;
// an IOC's rest expires.
func (f *Fake) execute(o *Order, last decimal.Decimal) {
	switch {
	case o.Type == "MARKET" && f.queued: // traded at Cross
	case o.Type == "MARKET" && f.partial:
		half := o.Quantity.Div(decimal.NewFromInt(2)).Truncate(int32(-decimal.RequireFromString(f.symbols[o.Symbol].Step).Exponent()))
		f.fill(o, half, last)
	case o.Type == "MARKET":
		f.fill(o, o.Quantity, last)
	case o.Type == "STOP_LOSS" || o.Type == "STOP_LOSS_LIMIT": // rests until SetPrice trades through its stop
	case venuefake.Reaches(o.Side == "BUY", last, o.Price):
		f.fill(o, o.Quantity, o.Price)
	}
	if o.TimeInForce == "IOC" && working(o) {
		o.Status = "EXPIRED"
		f.report(o, "EXPIRED", decimal.Zero, decimal.Zero)
	} else if o.Filled.IsZero() {
		f.report(o, "NEW", decimal.Zero, decimal.Zero)
	}
}

func (f *Fake) fill(o *Order, qty, price decimal.Decimal) {
	if !qty.IsPositive() {
		return
	}
	s := f.symbols[o.Symbol]
	o.Filled = o.Filled.Add(qty)
	o.Quote = o.Quote.Add(qty.Mul(price))
	o.Status = "PARTIALLY_FILLED"
	if o.Filled.Equal(o.Quantity) {
		o.Status = "FILLED"
	}
	if o.Side == "BUY" {
		f.balances[s.Quote] = f.balances[s.Quote].Sub(qty.Mul(price))
		f.balances[s.Base] = f.balances[s.Base].Add(qty)
	} else {
		f.balances[s.Quote] = f.balances[s.Quote].Add(qty.Mul(price))
		f.balances[s.Base] = f.balances[s.Base].Sub(qty)
	}
	t := trade{id: int64(len(f.trades) + 1), orderID: o.ID, symbol: o.Symbol, price: price, qty: qty,
		buyer: o.Side == "BUY", commissionIn: s.Quote, time: time.Now().UnixMilli()}
	t.commission, t.commissionIn = f.charge(s, o.Side, qty, price)
	f.balances[t.commissionIn] = f.balances[t.commissionIn].Sub(t.commission)
	f.trades = append(f.trades, t)
	f.send(o, "TRADE", qty, price, &t)
	for _, x := range f.siblings(o) { // one leg of an oco executed: the other expires
		if working(x) && !f.unlinked {
			x.Status = "EXPIRED"
			f.report(x, "EXPIRED", decimal.Zero, decimal.Zero)
		}
	}
}

// myTrades implements GET /api/v3/myTrades for a symbol: the most recent
// limit (default 500, at most 1000) trades, oldest first, or those
// startTime, endTime, fromId or orderId select (history.go).
func (f *Fake) myTrades(form url.Values) (int, any) {
	if f.symbols[form.Get("symbol")] == nil {
		return 400, errBody(-1121, "Invalid symbol.")
	}
	limit := 500
	if l, err := strconv.Atoi(form.Get("limit")); err == nil && l > 0 {
		limit = min(l, 1000)
	}
	list, status, body := f.tradesFor(form, limit)
	if status != 0 {
		return status, body
	}
	out := []map[string]any{}
	for _, t := range list {
		out = append(out, map[string]any{"symbol": t.symbol, "id": t.id, "orderId": t.orderID, "orderListId": -1,
			"price": t.price.String(), "qty": t.qty.String(), "quoteQty": t.qty.Mul(t.price).String(),
			"commission": t.commission.String(), "commissionAsset": t.commissionIn, "time": t.time,
			"isBuyer": t.buyer, "isMaker": false, "isBestMatch": true})
	}
	return 200, out
}

// full is the FULL response of an order.
func (f *Fake) full(o *Order) map[string]any {
	m := orderJSON(o)
	m["transactTime"] = time.Now().UnixMilli()
	fills := []map[string]any{}
	for _, t := range f.trades { // "Trading endpoints", New order: each trade with its commission
		if t.orderID == o.ID {
			fills = append(fills, map[string]any{"price": t.price.String(), "qty": t.qty.String(), "commission": t.commission.String(),
				"commissionAsset": t.commissionIn, "tradeId": t.id})
		}
	}
	m["fills"] = fills
	return m
}

func orderJSON(o *Order) map[string]any {
	return map[string]any{
		"symbol": o.Symbol, "orderId": o.ID, "orderListId": o.ListID, "clientOrderId": o.ClientOrderID, "price": o.Price.StringFixed(2),
		"stopPrice": o.StopPrice.StringFixed(2), "trailingDelta": o.TrailingDelta,
		"origQty": o.Quantity.String(), "executedQty": o.Filled.String(), "cummulativeQuoteQty": o.Quote.String(),
		"status": o.Status, "timeInForce": o.TimeInForce, "type": o.Type, "side": o.Side, "time": o.Time, "updateTime": time.Now().UnixMilli(),
		"isWorking": working(o), "origQuoteOrderQty": "0.00000000",
	}
}

func (f *Fake) get(form url.Values) (int, any) {
	o := f.find(form)
	if o == nil {
		return 400, errBody(-2013, "Order does not exist.")
	}
	return 200, orderJSON(o)
}

func (f *Fake) cancel(form url.Values) (int, any) {
	o := f.find(form)
	if o == nil || !working(o) {
		return 400, errBody(-2011, "Unknown order sent.")
	}
	o.Status = "CANCELED"
	f.report(o, "CANCELED", decimal.Zero, decimal.Zero)
	for _, x := range f.siblings(o) { // canceling a leg cancels its whole list
		if working(x) {
			x.Status = "CANCELED"
			f.report(x, "CANCELED", decimal.Zero, decimal.Zero)
		}
	}
	m := orderJSON(o)
	m["origClientOrderId"] = o.ClientOrderID
	m["clientOrderId"] = "cancel" + strconv.FormatInt(o.ID, 10)
	m["transactTime"] = time.Now().UnixMilli()
	return 200, m
}

func (f *Fake) cancelReplace(form url.Values) (int, any) {
	if form.Get("cancelReplaceMode") != "STOP_ON_FAILURE" {
		return 400, errBody(-1102, "Mandatory parameter 'cancelReplaceMode' was not sent.")
	}
	old := f.find(url.Values{"symbol": {form.Get("symbol")}, "orderId": {form.Get("cancelOrderId")}, "origClientOrderId": {form.Get("cancelOrigClientOrderId")}})
	if old == nil || !working(old) {
		return 400, map[string]any{"code": -2022, "msg": "Order cancel-replace failed.",
			"data": map[string]any{"cancelResult": "FAILURE", "newOrderResult": "NOT_ATTEMPTED", "cancelResponse": errBody(-2011, "Unknown order sent."), "newOrderResponse": nil}}
	}
	old.Status = "CANCELED"
	f.report(old, "CANCELED", decimal.Zero, decimal.Zero)
	cancelResp := orderJSON(old)
	cancelResp["origClientOrderId"] = old.ClientOrderID
	status, body, _ := f.create(form) // the new order of the request's own type
	if status != 200 {
		return 400, map[string]any{"code": -2021, "msg": "Order cancel-replace partially failed.",
			"data": map[string]any{"cancelResult": "SUCCESS", "newOrderResult": "FAILURE", "cancelResponse": cancelResp, "newOrderResponse": body}}
	}
	return 200, map[string]any{"cancelResult": "SUCCESS", "newOrderResult": "SUCCESS", "cancelResponse": cancelResp, "newOrderResponse": body}
}

func (f *Fake) open(form url.Values) (int, any) {
	out := []map[string]any{}
	for _, o := range f.orders {
		if working(o) && (form.Get("symbol") == "" || o.Symbol == form.Get("symbol")) {
			out = append(out, orderJSON(o))
		}
	}
	return 200, out
}

// cancelAll implements DELETE /api/v3/openOrders: every working order of
// the symbol canceled, answered as DELETE /api/v3/order answers each (an
// order list's legs as one list report); -2011 when none is open.
func (f *Fake) cancelAll(form url.Values) (int, any) {
	if f.symbols[form.Get("symbol")] == nil {
		return 400, errBody(-1121, "Invalid symbol.")
	}
	var out []any
	lists := map[int64][]any{}
	for _, o := range f.orders {
		if o.Symbol != form.Get("symbol") || !working(o) {
			continue
		}
		o.Status = "CANCELED"
		f.report(o, "CANCELED", decimal.Zero, decimal.Zero)
		m := orderJSON(o)
		m["origClientOrderId"] = o.ClientOrderID
		m["clientOrderId"] = "cancelall" + strconv.FormatInt(o.ID, 10)
		m["transactTime"] = time.Now().UnixMilli()
		if o.ListID < 0 {
			m["orderListId"] = -1
			out = append(out, m)
			continue
		}
		lists[o.ListID] = append(lists[o.ListID], m)
	}
	for id, reports := range lists {
		out = append(out, map[string]any{"orderListId": id, "contingencyType": "OCO", "listStatusType": "ALL_DONE",
			"listOrderStatus": "ALL_DONE", "transactionTime": time.Now().UnixMilli(), "symbol": form.Get("symbol"), "orderReports": reports})
	}
	if len(out) == 0 {
		return 400, errBody(-2011, "Unknown order sent.")
	}
	f.cancelAlls++
	return 200, out
}
