package alpacafake

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/shopspring/decimal"
)

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
