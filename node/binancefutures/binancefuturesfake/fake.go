// Package binancefuturesfake is an httptest server that speaks the parts
// of Binance's USDⓈ-M futures API the node's binance-futures adapter
// uses, built from Binance's published documentation
// (developers.binance.com/docs/derivatives/usds-margined-futures):
// "General Info" (signed endpoints, error answers), market data
// (exchangeInfo, premiumIndex), trade (POST/GET/DELETE/PUT
// /fapi/v1/order, openOrders, the Algo Order API's algoOrder and
// openAlgoOrders, forceOrders), account (v2 account and positionRisk,
// positionSide/dual, marginType, leverage, userTrades, income) and the listen-key user data
// stream (POST/PUT /fapi/v1/listenKey, /ws/<listenKey> carrying
// ORDER_TRADE_UPDATE and ALGO_UPDATE).
//
// It keeps one account in memory: a wallet balance in USDT, a one-way
// position per symbol (signed amount, entry price; realised P&L booked to
// the wallet; its liquidation price under the notional brackets of
// leverageBracket), orders and algo orders. Market orders fill at the price;
// limits rest until FillPart, Cross or a SetPrice that reaches them;
// SetPrice triggers algo orders (STOP_MARKET, STOP, TAKE_PROFIT,
// TRAILING_STOP_MARKET by callbackRate) into the order they place. A
// reduce-only order that would open or grow a position is refused
// (-2022), and a reduce-only algo order that would at its trigger is
// REJECTED; the margin type is not changed under a position (-4048).
// Liquidate closes a position as the venue's liquidation does. Faults
// (venuefault) drop answers, rate-limit and fail.
//
// It is for tests only: it listens on loopback, checks every signature,
// and never prints a key.
package binancefuturesfake

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/shopspring/decimal"

	"wicket/node/venuecall/venuefault"
)

// Symbol is a listed perpetual.
type Symbol struct {
	Name, Base, Quote         string
	Tick, Step, MinQty, MinNo string // filters
	Price                     string // last and mark price
	FundingRate               string
}

// Order is a plain order at the fake.
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
	Quote         decimal.Decimal
	ReduceOnly    bool
	Time          int64
}

// Algo is an algo (conditional) order at the fake.
type Algo struct {
	ID           int64
	ClientAlgoID string
	Symbol       string
	Side, Type   string
	Quantity     decimal.Decimal
	Trigger      decimal.Decimal
	Price        decimal.Decimal
	Callback     decimal.Decimal // percent
	Best         decimal.Decimal // a trailing stop's best price since placement
	Status       string
	Actual       int64 // the order it placed when it triggered
	Time         int64
}

// Position is one symbol's one-way position.
type Position struct {
	Amount, Entry decimal.Decimal
	Leverage      int
	MarginType    string // ISOLATED or CROSSED
}

// Fake is a running fake exchange.
type Fake struct {
	*httptest.Server
	venuefault.Faults
	APIKey, Secret string

	mu        sync.Mutex
	symbols   map[string]*Symbol
	wallet    decimal.Decimal
	positions map[string]*Position
	dual      bool
	orders    []*Order
	algos     []*Algo
	forced    []*Order
	income    []map[string]any
	trades    []futTrade      // the account's trades, oldest first (history.go)
	taker     decimal.Decimal // the commission rate of every trade, in USDT off the wallet (SetTakerCommission)
	nextID    int64
	keys      map[string]bool
	conns     map[*websocket.Conn]bool
	onOrder   func(Order)
}

// OnOrder runs hook after a plain order is taken (and filled, for a
// market order) and before its answer is written; nil removes it (the
// crash tests kill the node there).
func (f *Fake) OnOrder(hook func(Order)) { f.mu.Lock(); f.onOrder = hook; f.mu.Unlock() }

// New starts a fake with the symbols and a USDT wallet balance.
func New(apiKey, secret string, symbols []Symbol, wallet string) *Fake {
	f := &Fake{APIKey: apiKey, Secret: secret, symbols: map[string]*Symbol{}, wallet: decimal.RequireFromString(wallet),
		positions: map[string]*Position{}, nextID: 5000, keys: map[string]bool{}, conns: map[*websocket.Conn]bool{}}
	f.RateLimitBody = `{"code":-1003,"msg":"Too many requests; current limit of IP is 2400 requests per minute."}`
	for i := range symbols {
		s := symbols[i]
		f.symbols[s.Name] = &s
		f.positions[s.Name] = &Position{Leverage: 20, MarginType: "CROSSED"} // Binance's defaults
	}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	return f
}

// --- test controls ---

// SetHedgeMode puts the account in hedge (dual-side) mode, as a fresh
// account set so by hand would be.
func (f *Fake) SetHedgeMode(on bool) { f.mu.Lock(); f.dual = on; f.mu.Unlock() }

// SetPosition sets a symbol's position outright (an account that already
// holds one), at leverage and margin type when given.
func (f *Fake) SetPosition(symbol, amount, entry string, leverage int, marginType string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.positions[symbol]
	p.Amount, p.Entry = decimal.RequireFromString(amount), decimal.RequireFromString(entry)
	if leverage > 0 {
		p.Leverage = leverage
	}
	if marginType != "" {
		p.MarginType = marginType
	}
}

// Position is a symbol's position.
func (f *Fake) Position(symbol string) Position {
	f.mu.Lock()
	defer f.mu.Unlock()
	return *f.positions[symbol]
}

// Wallet is the USDT wallet balance.
func (f *Fake) Wallet() decimal.Decimal { f.mu.Lock(); defer f.mu.Unlock(); return f.wallet }

// Orders lists the plain orders, oldest first.
func (f *Fake) Orders() []Order {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Order, len(f.orders))
	for i, o := range f.orders {
		out[i] = *o
	}
	return out
}

// Algos lists the algo orders, oldest first.
func (f *Fake) Algos() []Algo {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Algo, len(f.algos))
	for i, o := range f.algos {
		out[i] = *o
	}
	return out
}

// SetPrice moves a symbol's last and mark price, triggering the algo
// orders and filling the limits it reaches.
func (f *Fake) SetPrice(symbol, price string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.symbols[symbol]
	s.Price = price
	px := decimal.RequireFromString(price)
	for _, g := range f.algos {
		if g.Symbol == symbol && g.Status == "NEW" && f.reached(g, px) {
			f.trigger(g, px)
		}
	}
	for _, o := range f.orders {
		if o.Symbol == symbol && working(o) && o.Type == "LIMIT" &&
			((o.Side == "BUY" && px.LessThanOrEqual(o.Price)) || (o.Side == "SELL" && px.GreaterThanOrEqual(o.Price))) {
			f.fill(o, o.Quantity.Sub(o.Filled), o.Price)
		}
	}
}

// AddFunding books a funding payment (income type FUNDING_FEE) for a
// symbol into the wallet and the income history.
func (f *Fake) AddFunding(symbol, amount string, at time.Time) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	amt := decimal.RequireFromString(amount)
	f.wallet = f.wallet.Add(amt)
	f.income = append(f.income, map[string]any{"symbol": symbol, "incomeType": "FUNDING_FEE", "income": amt.String(), "asset": "USDT",
		"info": "FUNDING_FEE", "time": at.UnixMilli(), "tranId": f.nextID, "tradeId": ""})
	return f.nextID
}

// Liquidate closes symbol's position at price as the venue's liquidation
// engine does: a LIQUIDATION order under an autoclose- client id, filled
// for the whole position, listed by forceOrders and reported on the
// stream.
func (f *Fake) Liquidate(symbol, price string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.positions[symbol]
	if p.Amount.IsZero() {
		return
	}
	f.symbols[symbol].Price = price
	f.nextID++
	side := "SELL"
	if p.Amount.IsNegative() {
		side = "BUY"
	}
	o := &Order{ID: f.nextID, ClientOrderID: fmt.Sprintf("autoclose-%d", f.nextID), Symbol: symbol, Side: side, Type: "LIQUIDATION", TimeInForce: "IOC",
		Quantity: p.Amount.Abs(), Price: decimal.RequireFromString(price), Status: "NEW", ReduceOnly: true, Time: time.Now().UnixMilli()}
	f.orders = append(f.orders, o)
	f.forced = append(f.forced, o)
	f.fill(o, o.Quantity, o.Price)
}

// FillPart fills qty of a working plain order at its limit.
func (f *Fake) FillPart(orderID int64, qty string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, o := range f.orders {
		if o.ID == orderID && working(o) {
			f.fill(o, decimal.RequireFromString(qty), o.Price)
		}
	}
}

// Cross fills every working limit in full at its price.
func (f *Fake) Cross() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, o := range f.orders {
		if working(o) && o.Type == "LIMIT" {
			f.fill(o, o.Quantity.Sub(o.Filled), o.Price)
		}
	}
}

// DropStreams closes every user data stream connection.
func (f *Fake) DropStreams() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.conns {
		c.Close()
		delete(f.conns, c)
	}
}

// --- matching ---

func working(o *Order) bool { return o.Status == "NEW" || o.Status == "PARTIALLY_FILLED" }

func (f *Fake) reached(g *Algo, px decimal.Decimal) bool {
	sell := g.Side == "SELL"
	switch g.Type {
	case "STOP_MARKET", "STOP":
		return (sell && px.LessThanOrEqual(g.Trigger)) || (!sell && px.GreaterThanOrEqual(g.Trigger))
	case "TAKE_PROFIT":
		return (sell && px.GreaterThanOrEqual(g.Trigger)) || (!sell && px.LessThanOrEqual(g.Trigger))
	case "TRAILING_STOP_MARKET":
		if g.Best.IsZero() || (sell && px.GreaterThan(g.Best)) || (!sell && px.LessThan(g.Best)) {
			g.Best = px
		}
		back := g.Best.Mul(g.Callback).Div(decimal.NewFromInt(100))
		return (sell && px.LessThanOrEqual(g.Best.Sub(back))) || (!sell && px.GreaterThanOrEqual(g.Best.Add(back)))
	}
	return false
}

// trigger places an algo order's order (f.mu held): a market order for
// the _MARKET types, a limit at its price for STOP and TAKE_PROFIT, both
// reduce-only; a reduce-only order that would open is REJECTED.
func (f *Fake) trigger(g *Algo, px decimal.Decimal) {
	if f.wouldOpen(g.Symbol, g.Side, g.Quantity) {
		g.Status = "REJECTED"
		f.algoEvent(g)
		return
	}
	f.nextID++
	o := &Order{ID: f.nextID, ClientOrderID: fmt.Sprintf("algo%d", g.ID), Symbol: g.Symbol, Side: g.Side, Type: "MARKET", TimeInForce: "GTC",
		Quantity: g.Quantity, Status: "NEW", ReduceOnly: true, Time: time.Now().UnixMilli()}
	if g.Type == "STOP" || g.Type == "TAKE_PROFIT" {
		o.Type, o.Price = "LIMIT", g.Price
	}
	f.orders = append(f.orders, o)
	g.Status, g.Actual = "TRIGGERED", o.ID
	f.algoEvent(g)
	f.report(o, "NEW", decimal.Zero, decimal.Zero)
	switch {
	case o.Type == "MARKET":
		f.fill(o, o.Quantity, px)
	case (o.Side == "SELL" && px.GreaterThanOrEqual(o.Price)) || (o.Side == "BUY" && px.LessThanOrEqual(o.Price)):
		f.fill(o, o.Quantity, o.Price)
	}
}

// wouldOpen reports whether a reduce-only order of side and qty would
// open or grow symbol's position.
func (f *Fake) wouldOpen(symbol, side string, qty decimal.Decimal) bool {
	amt := f.positions[symbol].Amount
	return amt.IsZero() || (side == "BUY") == amt.IsPositive() || qty.GreaterThan(amt.Abs())
}

// fill fills qty of o at price (f.mu held): the position and wallet move,
// the stream hears of it, and an algo whose order it is finishes.
func (f *Fake) fill(o *Order, qty, price decimal.Decimal) {
	if !qty.IsPositive() {
		return
	}
	o.Filled, o.Quote = o.Filled.Add(qty), o.Quote.Add(qty.Mul(price))
	o.Status = "PARTIALLY_FILLED"
	if o.Filled.GreaterThanOrEqual(o.Quantity) {
		o.Status = "FILLED"
	}
	signed := qty
	if o.Side == "SELL" {
		signed = qty.Neg()
	}
	p := f.positions[o.Symbol]
	switch {
	case p.Amount.IsZero() || p.Amount.IsPositive() == signed.IsPositive():
		total := p.Amount.Add(signed)
		p.Entry = p.Entry.Mul(p.Amount.Abs()).Add(price.Mul(qty)).Div(total.Abs())
		p.Amount = total
	default:
		closing := decimal.Min(qty, p.Amount.Abs())
		pnl := price.Sub(p.Entry).Mul(closing)
		if p.Amount.IsNegative() {
			pnl = pnl.Neg()
		}
		f.wallet = f.wallet.Add(pnl)
		rest := qty.Sub(closing)
		p.Amount = p.Amount.Add(signed)
		if p.Amount.IsZero() {
			p.Entry = decimal.Zero
		} else if rest.IsPositive() {
			p.Entry = price
		}
	}
	t := f.recordTrade(o, qty, price)
	f.report(o, "TRADE", qty, price, t)
	for _, g := range f.algos {
		if g.Actual == o.ID && o.Status == "FILLED" {
			g.Status = "FINISHED"
			f.algoEvent(g)
		}
	}
}

// --- HTTP ---

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	if f.Before(w, r) {
		return
	}
	if key, ok := strings.CutPrefix(r.URL.Path, "/ws/"); ok {
		f.stream(w, r, key)
		return
	}
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
	form := r.URL.Query()
	bodyVals, err := url.ParseQuery(string(raw))
	if err != nil {
		apiError(w, http.StatusBadRequest, -1100, "Illegal characters found in parameter")
		return
	}
	for k, v := range bodyVals {
		form[k] = v
	}
	public := r.URL.Path == "/fapi/v1/exchangeInfo" || r.URL.Path == "/fapi/v1/premiumIndex"
	if !public && r.Header.Get("X-MBX-APIKEY") != f.APIKey {
		apiError(w, http.StatusUnauthorized, -2015, "Invalid API-key, IP, or permissions for action.")
		return
	}
	if !public && r.URL.Path != "/fapi/v1/listenKey" && !f.signed(r, string(raw)) {
		apiError(w, http.StatusBadRequest, -1022, "Signature for this request is not valid.")
		return
	}
	key := r.Method + " " + r.URL.Path
	f.mu.Lock()
	status, body := f.route(key, form)
	hook := f.onOrder
	var taken Order
	if key == "POST /fapi/v1/order" && status == 200 {
		taken = *f.orders[len(f.orders)-1]
	}
	f.mu.Unlock()
	if hook != nil && taken.ID != 0 {
		hook(taken)
	}
	if f.Drop(w, r) {
		return
	}
	writeJSON(w, status, body)
}

func (f *Fake) route(key string, form url.Values) (int, any) {
	switch key {
	case "GET /fapi/v1/exchangeInfo":
		return 200, f.exchangeInfo()
	case "GET /fapi/v1/premiumIndex":
		return 200, f.premiumIndex()
	case "GET /fapi/v1/positionSide/dual":
		return 200, map[string]any{"dualSidePosition": f.dual}
	case "POST /fapi/v1/positionSide/dual":
		want := form.Get("dualSidePosition") == "true"
		if want == f.dual {
			return 400, errBody(-4059, "No need to change position side.")
		}
		for _, p := range f.positions {
			if !p.Amount.IsZero() {
				return 400, errBody(-4068, "Position side cannot be changed if there exists position.")
			}
		}
		f.dual = want
		return 200, map[string]any{"code": 200, "msg": "success"}
	case "GET /fapi/v2/positionRisk":
		return 200, f.positionRisk()
	case "POST /fapi/v1/marginType":
		p, ok := f.positions[form.Get("symbol")]
		switch {
		case !ok:
			return 400, errBody(-1121, "Invalid symbol.")
		case p.MarginType == form.Get("marginType"):
			return 400, errBody(-4046, "No need to change margin type.")
		case !p.Amount.IsZero():
			return 400, errBody(-4048, "Margin type cannot be changed if there exists position.")
		}
		p.MarginType = form.Get("marginType")
		return 200, map[string]any{"code": 200, "msg": "success"}
	case "POST /fapi/v1/leverage":
		p, ok := f.positions[form.Get("symbol")]
		lev, err := strconv.Atoi(form.Get("leverage"))
		if !ok || err != nil || lev < 1 || lev > 125 {
			return 400, errBody(-4028, "Leverage is not valid.")
		}
		p.Leverage = lev
		return 200, map[string]any{"leverage": lev, "maxNotionalValue": "1000000", "symbol": form.Get("symbol")}
	case "GET /fapi/v2/account":
		return 200, f.account()
	case "POST /fapi/v1/order":
		return f.create(form)
	case "GET /fapi/v1/order":
		if o := f.find(form); o != nil {
			return 200, orderJSON(o)
		}
		return 400, errBody(-2013, "Order does not exist.")
	case "DELETE /fapi/v1/order":
		o := f.find(form)
		if o == nil || !working(o) {
			return 400, errBody(-2011, "Unknown order sent.")
		}
		o.Status = "CANCELED"
		f.report(o, "CANCELED", decimal.Zero, decimal.Zero)
		return 200, orderJSON(o)
	case "PUT /fapi/v1/order":
		return f.modify(form)
	case "GET /fapi/v1/openOrders":
		out := []any{}
		for _, o := range f.orders {
			if o.Symbol == form.Get("symbol") && working(o) {
				out = append(out, orderJSON(o))
			}
		}
		return 200, out
	case "POST /fapi/v1/algoOrder":
		return f.createAlgo(form)
	case "GET /fapi/v1/algoOrder":
		if g := f.findAlgo(form); g != nil {
			return 200, algoJSON(g)
		}
		return 400, errBody(-2013, "Order does not exist.")
	case "DELETE /fapi/v1/algoOrder":
		g := f.findAlgo(form)
		if g == nil || g.Status != "NEW" {
			return 400, errBody(-2011, "Unknown order sent.")
		}
		g.Status = "CANCELED"
		f.algoEvent(g)
		return 200, map[string]any{"algoId": g.ID, "clientAlgoId": g.ClientAlgoID, "code": "200", "msg": "success"}
	case "GET /fapi/v1/openAlgoOrders":
		out := []any{}
		for _, g := range f.algos {
			if (form.Get("symbol") == "" || g.Symbol == form.Get("symbol")) && (g.Status == "NEW" || g.Status == "TRIGGERED") {
				out = append(out, algoJSON(g))
			}
		}
		return 200, out
	case "GET /fapi/v1/forceOrders":
		out := []any{}
		start, _ := strconv.ParseInt(form.Get("startTime"), 10, 64)
		for _, o := range f.forced {
			if (form.Get("symbol") == "" || o.Symbol == form.Get("symbol")) && o.Time >= start {
				out = append(out, orderJSON(o))
			}
		}
		return 200, out
	case "GET /fapi/v1/leverageBracket":
		var out []any
		for _, sym := range f.sorted() {
			if form.Get("symbol") == "" || sym.Name == form.Get("symbol") {
				var bs []any
				for i, b := range brackets {
					bs = append(bs, map[string]any{"bracket": i + 1, "initialLeverage": b.lev, "notionalCap": json.Number(b.cap.String()),
						"notionalFloor": json.Number(b.floor.String()), "maintMarginRatio": json.Number(b.mmr.String()), "cum": json.Number(b.cum.String())})
				}
				out = append(out, map[string]any{"symbol": sym.Name, "brackets": bs})
			}
		}
		return 200, out
	case "GET /fapi/v1/userTrades":
		return f.userTrades(form)
	case "GET /fapi/v1/income":
		return 200, f.incomes(form)
	case "POST /fapi/v1/listenKey", "PUT /fapi/v1/listenKey":
		f.nextID++
		k := fmt.Sprintf("lk%d", f.nextID)
		f.keys[k] = true
		return 200, map[string]any{"listenKey": k}
	}
	return 404, errBody(-1000, "unknown endpoint "+key)
}

func (f *Fake) exchangeInfo() any {
	var list []any
	for _, s := range f.sorted() {
		list = append(list, map[string]any{"symbol": s.Name, "pair": s.Name, "contractType": "PERPETUAL", "status": "TRADING",
			"baseAsset": s.Base, "quoteAsset": s.Quote, "marginAsset": s.Quote, "pricePrecision": 2, "quantityPrecision": 3,
			"filters": []map[string]any{
				{"filterType": "PRICE_FILTER", "tickSize": s.Tick, "minPrice": "0.1", "maxPrice": "1000000"},
				{"filterType": "LOT_SIZE", "stepSize": s.Step, "minQty": s.MinQty, "maxQty": "1000"},
				{"filterType": "MARKET_LOT_SIZE", "stepSize": s.Step, "minQty": s.MinQty, "maxQty": "1000"},
				{"filterType": "MIN_NOTIONAL", "notional": s.MinNo},
			}})
	}
	return map[string]any{"timezone": "UTC", "serverTime": time.Now().UnixMilli(), "symbols": list}
}

func (f *Fake) sorted() []*Symbol {
	var out []*Symbol
	for _, s := range f.symbols {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (f *Fake) premiumIndex() any {
	var out []any
	for _, s := range f.sorted() {
		rate := s.FundingRate
		if rate == "" {
			rate = "0.0001"
		}
		out = append(out, map[string]any{"symbol": s.Name, "markPrice": s.Price, "indexPrice": s.Price, "lastFundingRate": rate,
			"nextFundingTime": time.Now().Add(time.Hour).UnixMilli(), "interestRate": "0.0001", "time": time.Now().UnixMilli()})
	}
	return out
}

// risk is one symbol's position figures (f.mu held): notional at the
// mark, unrealised P&L, isolated margin, and the liquidation price under a
// flat 0.5 % maintenance margin rate.
func (f *Fake) risk(name string) map[string]any {
	s, p := f.symbols[name], f.positions[name]
	mark := decimal.RequireFromString(s.Price)
	upnl := mark.Sub(p.Entry).Mul(p.Amount)
	notional := p.Amount.Mul(mark)
	margin := decimal.Zero
	liq := decimal.Zero
	if !p.Amount.IsZero() {
		margin = p.Entry.Mul(p.Amount.Abs()).Div(decimal.NewFromInt(int64(p.Leverage))).Round(8)
		mmr, cum := bracketOf(notional.Abs())
		// Isolated, the margin as the wallet: long (entry − (margin + cum)/qty) / (1 − mmr),
		// short (entry + (margin + cum)/qty) / (1 + mmr).
		per := margin.Add(cum).Div(p.Amount.Abs())
		if p.Amount.IsPositive() {
			liq = p.Entry.Sub(per).Div(decimal.NewFromInt(1).Sub(mmr)).Round(2)
		} else {
			liq = p.Entry.Add(per).Div(decimal.NewFromInt(1).Add(mmr)).Round(2)
		}
	}
	mt := "cross"
	if p.MarginType == "ISOLATED" {
		mt = "isolated"
	}
	return map[string]any{"symbol": name, "positionAmt": p.Amount.String(), "entryPrice": p.Entry.String(), "breakEvenPrice": p.Entry.String(),
		"markPrice": s.Price, "unRealizedProfit": upnl.String(), "liquidationPrice": liq.String(), "leverage": strconv.Itoa(p.Leverage),
		"maxNotionalValue": "1000000", "marginType": mt, "isolatedMargin": margin.String(), "isAutoAddMargin": "false", "positionSide": "BOTH",
		"notional": notional.String(), "isolatedWallet": margin.String(), "updateTime": time.Now().UnixMilli()}
}

// brackets are every symbol's notional brackets (the shape of Binance's
// BTCUSDT table, trimmed): the maintenance margin rate and amount rise
// with the notional, the leverage allowed falls.
var brackets = []struct {
	lev                  int
	floor, cap, mmr, cum decimal.Decimal
}{
	{125, decimal.Zero, decimal.NewFromInt(50000), decimal.RequireFromString("0.004"), decimal.Zero},
	{100, decimal.NewFromInt(50000), decimal.NewFromInt(600000), decimal.RequireFromString("0.005"), decimal.NewFromInt(50)},
	{75, decimal.NewFromInt(600000), decimal.NewFromInt(3000000), decimal.RequireFromString("0.0065"), decimal.NewFromInt(950)},
	{50, decimal.NewFromInt(3000000), decimal.NewFromInt(1000000000), decimal.RequireFromString("0.01"), decimal.NewFromInt(11450)},
}

// bracketOf is the bracket of a notional.
func bracketOf(notional decimal.Decimal) (mmr, cum decimal.Decimal) {
	for _, b := range brackets {
		if notional.LessThan(b.cap) {
			return b.mmr, b.cum
		}
	}
	last := brackets[len(brackets)-1]
	return last.mmr, last.cum
}

func (f *Fake) positionRisk() any {
	var out []any
	for _, s := range f.sorted() {
		out = append(out, f.risk(s.Name))
	}
	return out
}

func (f *Fake) account() any {
	used, upnl := decimal.Zero, decimal.Zero
	for _, s := range f.sorted() {
		r := f.risk(s.Name)
		used = used.Add(decimal.RequireFromString(r["isolatedMargin"].(string)))
		upnl = upnl.Add(decimal.RequireFromString(r["unRealizedProfit"].(string)))
	}
	avail := f.wallet.Add(upnl).Sub(used)
	return map[string]any{"totalWalletBalance": f.wallet.String(), "availableBalance": avail.String(), "totalUnrealizedProfit": upnl.String(),
		"canTrade": true, "assets": []any{map[string]any{"asset": "USDT", "walletBalance": f.wallet.String(), "availableBalance": avail.String(),
			"unrealizedProfit": upnl.String(), "marginBalance": f.wallet.Add(upnl).String()}}, "positions": []any{}}
}

func (f *Fake) incomes(form url.Values) any {
	out := []any{}
	start, _ := strconv.ParseInt(form.Get("startTime"), 10, 64)
	for _, in := range f.income {
		if (form.Get("incomeType") == "" || in["incomeType"] == form.Get("incomeType")) && in["time"].(int64) >= start &&
			(form.Get("symbol") == "" || in["symbol"] == form.Get("symbol")) {
			out = append(out, in)
		}
	}
	return out
}

func (f *Fake) find(form url.Values) *Order {
	id, _ := strconv.ParseInt(form.Get("orderId"), 10, 64)
	for _, o := range f.orders {
		if o.Symbol == form.Get("symbol") && ((id != 0 && o.ID == id) || (id == 0 && o.ClientOrderID == form.Get("origClientOrderId"))) {
			return o
		}
	}
	return nil
}

func (f *Fake) findAlgo(form url.Values) *Algo {
	id, _ := strconv.ParseInt(form.Get("algoId"), 10, 64)
	for _, g := range f.algos {
		if (id != 0 && g.ID == id) || (id == 0 && g.ClientAlgoID == form.Get("clientAlgoId")) {
			return g
		}
	}
	return nil
}

func (f *Fake) create(form url.Values) (int, any) {
	sym, ok := f.symbols[form.Get("symbol")]
	if !ok {
		return 400, errBody(-1121, "Invalid symbol.")
	}
	typ := form.Get("type")
	if typ != "MARKET" && typ != "LIMIT" {
		return 400, errBody(-4120, "Order type not supported for this endpoint. Please use the Algo Order API endpoints instead.")
	}
	qty, err := decimal.NewFromString(form.Get("quantity"))
	if err != nil || !qty.IsPositive() {
		return 400, errBody(-1102, "Mandatory parameter 'quantity' was not sent, was empty/null, or malformed.")
	}
	cid := form.Get("newClientOrderId")
	for _, o := range f.orders {
		if o.ClientOrderID == cid && working(o) {
			return 400, errBody(-4015, "Client order id is not valid.")
		}
	}
	side := form.Get("side")
	reduce := form.Get("reduceOnly") == "true"
	if reduce && f.wouldOpen(sym.Name, side, qty) {
		return 400, errBody(-2022, "ReduceOnly Order is rejected.")
	}
	f.nextID++
	o := &Order{ID: f.nextID, ClientOrderID: cid, Symbol: sym.Name, Side: side, Type: typ, TimeInForce: "GTC", Quantity: qty, Status: "NEW",
		ReduceOnly: reduce, Time: time.Now().UnixMilli()}
	if typ == "LIMIT" {
		o.Price, _ = decimal.NewFromString(form.Get("price"))
		o.TimeInForce = form.Get("timeInForce")
	}
	f.orders = append(f.orders, o)
	f.report(o, "NEW", decimal.Zero, decimal.Zero)
	px := decimal.RequireFromString(sym.Price)
	switch {
	case typ == "MARKET":
		f.fill(o, qty, px)
	case (side == "BUY" && px.LessThanOrEqual(o.Price)) || (side == "SELL" && px.GreaterThanOrEqual(o.Price)):
		f.fill(o, qty, o.Price)
	}
	if o.TimeInForce == "IOC" && working(o) {
		o.Status = "EXPIRED"
		f.report(o, "EXPIRED", decimal.Zero, decimal.Zero)
	}
	return 200, orderJSON(o)
}

func (f *Fake) modify(form url.Values) (int, any) {
	o := f.find(form)
	if o == nil || !working(o) {
		return 400, errBody(-2013, "Order does not exist.")
	}
	if o.Type != "LIMIT" {
		return 400, errBody(-4000, "Only limit orders can be modified.")
	}
	qty, err1 := decimal.NewFromString(form.Get("quantity"))
	price, err2 := decimal.NewFromString(form.Get("price"))
	if err1 != nil || err2 != nil || !qty.GreaterThan(o.Filled) {
		return 400, errBody(-4005, "Quantity greater than max quantity or not above the executed quantity.")
	}
	o.Quantity, o.Price = qty, price
	f.report(o, "AMENDMENT", decimal.Zero, decimal.Zero)
	return 200, orderJSON(o)
}

func (f *Fake) createAlgo(form url.Values) (int, any) {
	sym, ok := f.symbols[form.Get("symbol")]
	if !ok {
		return 400, errBody(-1121, "Invalid symbol.")
	}
	if form.Get("algoType") != "CONDITIONAL" {
		return 400, errBody(-1116, "Invalid algoType.")
	}
	qty, err := decimal.NewFromString(form.Get("quantity"))
	if err != nil || !qty.IsPositive() {
		return 400, errBody(-1102, "Mandatory parameter 'quantity' was not sent, was empty/null, or malformed.")
	}
	cid := form.Get("clientAlgoId")
	for _, g := range f.algos {
		if g.ClientAlgoID == cid {
			return 400, errBody(-4015, "Client order id is not valid.")
		}
	}
	f.nextID++
	g := &Algo{ID: f.nextID, ClientAlgoID: cid, Symbol: sym.Name, Side: form.Get("side"), Type: form.Get("type"), Quantity: qty, Status: "NEW", Time: time.Now().UnixMilli()}
	g.Trigger, _ = decimal.NewFromString(form.Get("triggerPrice"))
	g.Price, _ = decimal.NewFromString(form.Get("price"))
	g.Callback, _ = decimal.NewFromString(form.Get("callbackRate"))
	switch g.Type {
	case "STOP_MARKET", "STOP", "TAKE_PROFIT":
		if !g.Trigger.IsPositive() {
			return 400, errBody(-1102, "Mandatory parameter 'triggerPrice' was not sent, was empty/null, or malformed.")
		}
	case "TRAILING_STOP_MARKET":
		if g.Callback.LessThan(decimal.RequireFromString("0.1")) || g.Callback.GreaterThan(decimal.NewFromInt(10)) {
			return 400, errBody(-2007, "Invalid callBack rate.")
		}
		g.Best = decimal.RequireFromString(sym.Price)
	default:
		return 400, errBody(-1116, "Invalid orderType.")
	}
	f.algos = append(f.algos, g)
	f.algoEvent(g)
	return 200, algoJSON(g)
}

func orderJSON(o *Order) map[string]any {
	avg := "0"
	if o.Filled.IsPositive() {
		avg = o.Quote.Div(o.Filled).String()
	}
	return map[string]any{"symbol": o.Symbol, "orderId": o.ID, "clientOrderId": o.ClientOrderID, "price": o.Price.String(), "avgPrice": avg,
		"origQty": o.Quantity.String(), "executedQty": o.Filled.String(), "cumQty": o.Filled.String(), "cumQuote": o.Quote.String(),
		"status": o.Status, "timeInForce": o.TimeInForce, "type": o.Type, "origType": o.Type, "side": o.Side, "reduceOnly": o.ReduceOnly,
		"positionSide": "BOTH", "stopPrice": "0", "workingType": "CONTRACT_PRICE", "time": o.Time, "updateTime": time.Now().UnixMilli()}
}

func algoJSON(g *Algo) map[string]any {
	m := map[string]any{"algoId": g.ID, "clientAlgoId": g.ClientAlgoID, "algoType": "CONDITIONAL", "orderType": g.Type, "symbol": g.Symbol,
		"side": g.Side, "positionSide": "BOTH", "timeInForce": "GTC", "quantity": g.Quantity.String(), "algoStatus": g.Status,
		"triggerPrice": g.Trigger.String(), "price": g.Price.String(), "workingType": "MARK_PRICE", "reduceOnly": true,
		"callbackRate": g.Callback.String(), "createTime": g.Time, "updateTime": time.Now().UnixMilli(), "actualOrderId": ""}
	if g.Actual != 0 {
		m["actualOrderId"] = strconv.FormatInt(g.Actual, 10)
	}
	return m
}

// --- signatures ---

func (f *Fake) signed(r *http.Request, body string) bool {
	q := r.URL.RawQuery
	i := strings.Index(q, "&signature=")
	sig := ""
	if i >= 0 {
		sig, q = q[i+len("&signature="):], q[:i]
	} else if strings.HasPrefix(q, "signature=") {
		sig, q = q[len("signature="):], ""
	}
	m := hmac.New(sha256.New, []byte(f.Secret))
	m.Write([]byte(q + body))
	return sig != "" && hmac.Equal([]byte(sig), []byte(hex.EncodeToString(m.Sum(nil))))
}

func apiError(w http.ResponseWriter, status int, code int, msg string) {
	writeJSON(w, status, errBody(code, msg))
}

func errBody(code int, msg string) map[string]any { return map[string]any{"code": code, "msg": msg} }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v) //nolint:errcheck // test fake
}

// --- the user data stream ---

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

func (f *Fake) stream(w http.ResponseWriter, r *http.Request, key string) {
	f.mu.Lock()
	known := f.keys[key]
	f.mu.Unlock()
	if !known {
		apiError(w, http.StatusBadRequest, -1125, "This listenKey does not exist.")
		return
	}
	// The lock is held from before the handshake's answer until the
	// connection is registered, so an event made after the client has seen
	// its stream open (Liquidate, a fill) always reaches it.
	f.mu.Lock()
	c, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		f.mu.Unlock()
		return
	}
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

// report sends an ORDER_TRADE_UPDATE (f.mu held).
func (f *Fake) report(o *Order, exec string, lastQty, lastPrice decimal.Decimal, trade ...futTrade) {
	commission, tradeID := decimal.Zero, int64(0)
	if len(trade) > 0 {
		commission, tradeID = trade[0].commission, trade[0].id
	}
	avg := decimal.Zero
	if o.Filled.IsPositive() {
		avg = o.Quote.Div(o.Filled)
	}
	now := time.Now().UnixMilli()
	f.broadcast(map[string]any{"e": "ORDER_TRADE_UPDATE", "E": now, "T": now, "o": map[string]any{
		"s": o.Symbol, "c": o.ClientOrderID, "S": o.Side, "o": o.Type, "f": o.TimeInForce, "q": o.Quantity.String(), "p": o.Price.String(),
		"ap": avg.String(), "sp": "0", "x": exec, "X": o.Status, "i": o.ID, "l": lastQty.String(), "z": o.Filled.String(), "L": lastPrice.String(),
		"n": commission.String(), "N": "USDT", "T": now, "t": tradeID, "R": o.ReduceOnly, "ps": "BOTH", "ot": o.Type}})
}

// algoEvent sends an ALGO_UPDATE (f.mu held).
func (f *Fake) algoEvent(g *Algo) {
	now := time.Now().UnixMilli()
	f.broadcast(map[string]any{"e": "ALGO_UPDATE", "E": now, "T": now, "o": map[string]any{
		"caid": g.ClientAlgoID, "aid": g.ID, "at": "CONDITIONAL", "o": g.Type, "s": g.Symbol, "S": g.Side, "q": g.Quantity.String(),
		"X": g.Status, "tp": g.Trigger.String(), "p": g.Price.String()}})
}

func (f *Fake) broadcast(ev map[string]any) {
	data, _ := json.Marshal(ev)
	for c := range f.conns {
		c.SetWriteDeadline(time.Now().Add(time.Second)) //nolint:errcheck // test fake
		if c.WriteMessage(websocket.TextMessage, data) != nil {
			c.Close()
			delete(f.conns, c)
		}
	}
}
