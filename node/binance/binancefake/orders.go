package binancefake

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// create implements POST /api/v3/order for MARKET, LIMIT (GTC/IOC),
// LIMIT_MAKER, STOP_LOSS (stopPrice or trailingDelta) and
// STOP_LOSS_LIMIT.
func (f *Fake) create(form url.Values) (int, any, *Order) {
	o, status, body := f.build(form, "", form.Get("quantity"))
	if o == nil {
		return status, body, nil
	}
	f.orders = append(f.orders, o)
	f.execute(o, decimal.RequireFromString(f.symbols[o.Symbol].Price))
	return 200, f.full(o), o
}

// build checks one order's parameters (those of an order list's leg are
// prefixed: "above", "below") and makes it, not yet listed, or answers
// why not.
func (f *Fake) build(form url.Values, leg, quantity string) (*Order, int, map[string]any) {
	get := func(k string) string {
		if leg == "" {
			return form.Get(k)
		}
		return form.Get(leg + strings.ToUpper(k[:1]) + k[1:])
	}
	if f.rejectMsg != "" {
		return nil, 400, errBody(-2010, f.rejectMsg)
	}
	s := f.symbols[form.Get("symbol")]
	if s == nil {
		return nil, 400, errBody(-1121, "Invalid symbol.")
	}
	cid := get("clientOrderId")
	if leg == "" {
		cid = form.Get("newClientOrderId")
	}
	for _, o := range f.orders {
		if o.ClientOrderID == cid && working(o) {
			return nil, 400, errBody(-2010, "Duplicate order sent.")
		}
	}
	qty, err := decimal.NewFromString(quantity)
	if err != nil || !qty.IsPositive() {
		return nil, 400, errBody(-1013, "Invalid quantity.")
	}
	step := decimal.RequireFromString(s.Step)
	if !qty.Mod(step).IsZero() || qty.LessThan(decimal.RequireFromString(s.MinQty)) {
		return nil, 400, errBody(-1013, "Filter failure: LOT_SIZE")
	}
	typ, tif := get("type"), get("timeInForce")
	last := decimal.RequireFromString(s.Price)
	tick := decimal.RequireFromString(s.Tick)
	priced := func(k string) (decimal.Decimal, map[string]any) {
		p, err := decimal.NewFromString(get(k))
		if err != nil || !p.IsPositive() {
			return p, errBody(-1102, fmt.Sprintf("Mandatory parameter '%s' was not sent, was empty/null, or malformed.", k))
		}
		if !p.Mod(tick).IsZero() {
			return p, errBody(-1013, "Filter failure: PRICE_FILTER")
		}
		return p, nil
	}
	price, stop := decimal.Zero, decimal.Zero
	var bad map[string]any
	var delta int64
	switch typ {
	case "MARKET":
	case "LIMIT", "LIMIT_MAKER":
		price, bad = priced("price")
	case "STOP_LOSS_LIMIT":
		if price, bad = priced("price"); bad == nil {
			stop, bad = priced("stopPrice")
		}
	case "STOP_LOSS":
		if d := get("trailingDelta"); d != "" {
			if delta, err = strconv.ParseInt(d, 10, 64); err != nil || delta < 10 || delta > 2000 {
				bad = errBody(-2010, "Invalid trailingDelta.")
			}
		} else {
			stop, bad = priced("stopPrice")
		}
	default:
		bad = errBody(-1116, "Invalid orderType.")
	}
	if bad != nil {
		return nil, 400, bad
	}
	if typ == "LIMIT_MAKER" && ((form.Get("side") == "BUY" && last.LessThanOrEqual(price)) || (form.Get("side") == "SELL" && last.GreaterThanOrEqual(price))) {
		return nil, 400, errBody(-2010, "Order would immediately match and take.")
	}
	if stop.IsPositive() && ((form.Get("side") == "SELL" && last.LessThanOrEqual(stop)) || (form.Get("side") == "BUY" && last.GreaterThanOrEqual(stop))) {
		return nil, 400, errBody(-2010, "Stop price would trigger immediately.")
	}
	at := price
	if typ == "MARKET" || typ == "STOP_LOSS" {
		at = last
	}
	if qty.Mul(at).LessThan(decimal.RequireFromString(s.MinNo)) {
		return nil, 400, errBody(-1013, "Filter failure: NOTIONAL")
	}
	if form.Get("side") == "BUY" && f.balances[s.Quote].LessThan(qty.Mul(at)) {
		return nil, 400, errBody(-2010, "Account has insufficient balance for requested action.")
	}
	if form.Get("side") == "SELL" && f.balances[s.Base].LessThan(qty) {
		return nil, 400, errBody(-2010, "Account has insufficient balance for requested action.")
	}
	if typ == "STOP_LOSS_LIMIT" && tif == "" {
		return nil, 400, errBody(-1102, "Mandatory parameter 'timeInForce' was not sent, was empty/null, or malformed.")
	}
	f.nextID++
	stp := form.Get("selfTradePreventionMode")
	switch stp {
	case "", "NONE", "EXPIRE_TAKER", "EXPIRE_MAKER", "EXPIRE_BOTH", "DECREMENT":
	default:
		return nil, 400, errBody(-1130, "Invalid data sent for a parameter.")
	}
	o := &Order{ID: f.nextID, ClientOrderID: cid, Symbol: s.Name, Side: form.Get("side"), Type: typ, TimeInForce: tif,
		Quantity: qty, Price: price, Status: "NEW", Time: time.Now().UnixMilli(), ListID: -1, StopPrice: stop, TrailingDelta: delta,
		SelfTradePrevention: stp}
	if delta > 0 {
		o.Best = last
		o.StopPrice = trailStop(o)
	}
	return o, 200, nil
}

// orderListOCO implements POST /api/v3/orderList/oco: one list of an
// above and a below leg, one a LIMIT_MAKER and the other a STOP_LOSS or
// STOP_LOSS_LIMIT, on the side's correct sides of the last price.
func (f *Fake) orderListOCO(form url.Values) (int, any) {
	above, status, body := f.build(form, "above", form.Get("quantity"))
	if above == nil {
		return status, body
	}
	below, status, body := f.build(form, "below", form.Get("quantity"))
	if below == nil {
		return status, body
	}
	isStop := func(t string) bool { return t == "STOP_LOSS" || t == "STOP_LOSS_LIMIT" }
	limit, stop := above, below
	if form.Get("side") == "BUY" {
		limit, stop = below, above
	}
	if limit.Type != "LIMIT_MAKER" || !isStop(stop.Type) {
		return 400, errBody(-1167, "Unsupported order combination.")
	}
	if form.Get("side") == "SELL" && !(above.Price.GreaterThan(below.StopPrice)) || form.Get("side") == "BUY" && !(below.Price.LessThan(above.StopPrice)) {
		return 400, errBody(-1167, "The relationship of the prices for the orders is not correct.")
	}
	f.nextID++
	list := f.nextID
	last := decimal.RequireFromString(f.symbols[above.Symbol].Price)
	for _, o := range []*Order{above, below} {
		o.ListID = list
		f.orders = append(f.orders, o)
		f.report(o, "NEW", decimal.Zero, decimal.Zero)
	}
	for _, o := range []*Order{above, below} {
		if working(o) {
			f.match(o, last)
		}
	}
	now := time.Now().UnixMilli()
	return 200, map[string]any{"orderListId": list, "contingencyType": "OCO", "listStatusType": "EXEC_STARTED", "listOrderStatus": "EXECUTING",
		"listClientOrderId": form.Get("listClientOrderId"), "transactionTime": now, "symbol": above.Symbol,
		"orders": []map[string]any{
			{"symbol": above.Symbol, "orderId": above.ID, "clientOrderId": above.ClientOrderID},
			{"symbol": below.Symbol, "orderId": below.ID, "clientOrderId": below.ClientOrderID}},
		"orderReports": []map[string]any{f.full(above), f.full(below)}}
}

// siblings are the other orders of o's list.
func (f *Fake) siblings(o *Order) []*Order {
	var out []*Order
	if o.ListID < 0 {
		return out
	}
	for _, x := range f.orders {
		if x.ListID == o.ListID && x != o {
			out = append(out, x)
		}
	}
	return out
}
