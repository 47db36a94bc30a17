package binancefutures

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/adshao/go-binance/v2/futures"
	"github.com/shopspring/decimal"

	"wicket/node"
	"wicket/node/binance"
	"wicket/node/command"
)

// Algo Order API paths (USDⓈ-M "New Algo Order", "Query Algo Order",
// "Cancel Algo Order", "Current All Algo Open Orders").
const (
	pathAlgo     = "/fapi/v1/algoOrder"
	pathOpenAlgo = "/fapi/v1/openAlgoOrders"
)

// algoOrder is an algo order as the Algo Order API answers it.
type algoOrder struct {
	AlgoID        int64   `json:"algoId"`
	ClientAlgoID  string  `json:"clientAlgoId"`
	AlgoType      string  `json:"algoType"`
	OrderType     string  `json:"orderType"`
	Symbol        string  `json:"symbol"`
	Side          string  `json:"side"`
	TimeInForce   string  `json:"timeInForce"`
	Quantity      string  `json:"quantity"`
	AlgoStatus    string  `json:"algoStatus"`
	TriggerPrice  string  `json:"triggerPrice"`
	Price         string  `json:"price"`
	ReduceOnly    bool    `json:"reduceOnly"`
	CallbackRate  string  `json:"callbackRate"`
	UpdateTime    int64   `json:"updateTime"`
	ActualOrderID flexInt `json:"actualOrderId"`
}

// flexInt reads an id Binance writes as a number or a string.
type flexInt int64

func (f *flexInt) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		*f = 0
		return nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	*f = flexInt(n)
	return err
}

// algoPrefix marks an algo order's venue id, beside a plain order's.
const algoPrefix = "a"

func algoVenueID(id int64) string { return algoPrefix + strconv.FormatInt(id, 10) }

func algoIDOf(venueID string) (int64, bool) {
	s, ok := strings.CutPrefix(venueID, algoPrefix)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// conditional reports whether the order travels as an algo order.
func conditional(t command.OrderType) bool { return t.Protective() }

// isAlgo reports whether an order the node names is an algo order at the
// venue: by its venue id, else by its type or a take-profit leg's id.
func isAlgo(o node.VenueOrder) bool {
	if o.VenueOrderID != "" {
		_, ok := algoIDOf(o.VenueOrderID)
		return ok
	}
	return conditional(o.Type) || strings.HasSuffix(o.ClientOrderID, node.TakeProfitLegSuffix) || strings.HasSuffix(o.ClientOrderID, node.StopLegSuffix)
}

// signed sends one signed request for an endpoint the library does not
// serve, once (binance.Signer: the futures API signs the same way).
func (a *Adapter) signed(ctx context.Context, method, path string, p url.Values, out any) error {
	return binance.Signer{BaseURL: a.c.BaseURL, HTTP: a.c.HTTPClient, Key: a.apiKey, Secret: a.apiSecret, Now: a.now, Offset: a.c.TimeOffset}.
		Do(ctx, method, path, p, false, out)
}

// Submit places an order: market and limit as orders (reduceOnly when an
// exit), stop, stop_limit and trailing_stop as algo orders (reduceOnly).
func (a *Adapter) Submit(ctx context.Context, r node.OrderRequest) (node.VenueOrder, error) {
	cid, err := clientID(r.ClientOrderID)
	if err != nil {
		return node.VenueOrder{}, a.refused(err.Error())
	}
	if conditional(r.Type) {
		return a.submitAlgo(ctx, r, cid, false)
	}
	s := a.c.NewCreateOrderService().Symbol(a.syms.Venue(r.Symbol)).Side(side(r.Side)).Quantity(r.Quantity.String()).
		NewClientOrderID(cid).NewOrderResponseType(futures.NewOrderRespTypeRESULT)
	if isExit(r) {
		s = s.ReduceOnly(true)
	}
	switch r.Type {
	case command.Limit:
		s = s.Type(futures.OrderTypeLimit).Price(r.Price.String()).TimeInForce(tif(r.TimeInForce))
	case command.Market:
		s = s.Type(futures.OrderTypeMarket)
	default:
		return node.VenueOrder{}, a.refused(fmt.Sprintf("binance-futures takes no %s order from the node; nothing was sent", r.Type))
	}
	res, err := s.Do(ctx)
	if err != nil {
		return node.VenueOrder{}, a.classify(err)
	}
	vo := a.fromOrder(&futures.Order{Symbol: res.Symbol, OrderID: res.OrderID, ClientOrderID: res.ClientOrderID, Price: res.Price,
		OrigQuantity: res.OrigQuantity, ExecutedQuantity: res.ExecutedQuantity, CumQuote: res.CumQuote, Status: res.Status,
		TimeInForce: res.TimeInForce, Type: res.Type, Side: res.Side, StopPrice: res.StopPrice, UpdateTime: res.UpdateTime, AvgPrice: res.AvgPrice})
	vo, _ = a.withFee(ctx, vo, res.Symbol, res.OrderID) // the order stands; a trades read that failed is made again at the next read
	return vo, nil
}

// Binance's callbackRate bounds (USDⓈ-M "New Algo Order": 0.1 to 10,
// where 1 is 1 %), in steps of 0.1.
var (
	minCallback  = decimal.RequireFromString("0.1")
	maxCallback  = decimal.NewFromInt(10)
	callbackStep = decimal.RequireFromString("0.1")
)

func callbackOK(pct decimal.Decimal) bool {
	return pct.GreaterThanOrEqual(minCallback) && pct.LessThanOrEqual(maxCallback) && pct.Mod(callbackStep).IsZero()
}

// submitAlgo places one conditional order (POST /fapi/v1/algoOrder):
// stop as STOP_MARKET, stop_limit as STOP, trailing_stop as
// TRAILING_STOP_MARKET, and (takeProfit) a limit exit as TAKE_PROFIT
// triggered at its own price; every one reduceOnly, triggered by the mark
// price (the node's marks), under the client id cid.
func (a *Adapter) submitAlgo(ctx context.Context, r node.OrderRequest, cid string, takeProfit bool) (node.VenueOrder, error) {
	p := url.Values{}
	p.Set("algoType", "CONDITIONAL")
	p.Set("symbol", a.syms.Venue(r.Symbol))
	p.Set("side", string(side(r.Side)))
	p.Set("quantity", r.Quantity.String())
	p.Set("reduceOnly", "true")
	p.Set("workingType", "MARK_PRICE")
	p.Set("clientAlgoId", cid)
	p.Set("newOrderRespType", "RESULT")
	switch {
	case takeProfit:
		p.Set("type", "TAKE_PROFIT")
		p.Set("triggerPrice", r.Price.String())
		p.Set("price", r.Price.String())
		p.Set("timeInForce", "GTC")
	case r.Type == command.Stop:
		p.Set("type", "STOP_MARKET")
		p.Set("triggerPrice", r.StopPrice.String())
	case r.Type == command.StopLimit:
		p.Set("type", "STOP")
		p.Set("triggerPrice", r.StopPrice.String())
		p.Set("price", r.Price.String())
		p.Set("timeInForce", "GTC")
	case r.Type == command.TrailingStop:
		if !callbackOK(r.TrailPercent) || r.TrailAmount.IsPositive() {
			return node.VenueOrder{}, a.refused(trailingHint + "; nothing was sent")
		}
		p.Set("type", "TRAILING_STOP_MARKET")
		p.Set("callbackRate", r.TrailPercent.String())
	default:
		return node.VenueOrder{}, a.refused(fmt.Sprintf("binance-futures holds no %s as an algo order; nothing was sent", r.Type))
	}
	var res algoOrder
	if err := a.signed(ctx, http.MethodPost, pathAlgo, p, &res); err != nil {
		return node.VenueOrder{}, a.classify(err)
	}
	return a.algoState(ctx, &res)
}

const trailingHint = "binance-futures holds a trailing stop by callbackRate, a percent from 0.1 to 10 in steps of 0.1: give trail_percent in that range (a trail_amount the node holds itself)"

// Holds says what Binance USDⓈ-M holds natively: market, limit, stop,
// stop_limit and a trailing stop by a callbackRate percent; an oco as its
// two legs (TAKE_PROFIT and STOP_MARKET or STOP, reduce-only; the node
// cancels the survivor when one fills); a bracket's entry now and its
// exits once it has filled (HoldAfterEntry), as such an oco. A trailing
// stop by amount, or by a percent callbackRate cannot carry, the node
// holds and fires as a reduce-only market order.
func (a *Adapter) Holds(g node.GroupRequest) ([]node.Hold, error) {
	if g.Class == node.GroupBracket {
		if len(g.Legs) != 3 {
			return nil, fmt.Errorf("a bracket is an entry and two exits, not %d legs", len(g.Legs))
		}
		entry, tp, sl := g.Legs[0], g.Legs[1], g.Legs[2]
		switch {
		case entry.Type != command.Market && entry.Type != command.Limit:
			return nil, fmt.Errorf("binance-futures takes a bracket's entry as a market or limit order, not %s", entry.Type)
		case tp.Type != command.Limit || (sl.Type != command.Stop && sl.Type != command.StopLimit):
			return nil, errors.New("binance-futures places a bracket's exits as a take-profit limit (TAKE_PROFIT) and a stop-loss stop_price, optionally with limit_price (STOP_MARKET or STOP), both reduce-only")
		}
		for _, l := range g.Legs {
			if _, err := clientID(l.ClientOrderID); l.ClientOrderID != "" && err != nil {
				return nil, fmt.Errorf("bracket leg %s: %w", l.ClientOrderID, err)
			}
		}
		return []node.Hold{node.HoldVenue, node.HoldAfterEntry, node.HoldAfterEntry}, nil
	}
	out := make([]node.Hold, len(g.Legs))
	for i, l := range g.Legs {
		out[i] = node.HoldVenue
		if l.Type != command.TrailingStop || callbackOK(l.TrailPercent) && !l.TrailAmount.IsPositive() {
			continue
		}
		if g.Class != "" {
			return nil, errors.New(trailingHint)
		}
		out[i] = node.HoldNode
		if _, err := clientID(l.ClientOrderID + node.FireSuffix); l.ClientOrderID != "" && err != nil {
			return nil, fmt.Errorf("the node holds this trailing stop and fires it under client order id %s, which cannot travel to binance (%v): give a shorter client_order_id or let the node mint one", l.ClientOrderID+node.FireSuffix, err)
		}
	}
	return out, nil
}

// SubmitGroup places an oco's two legs, each reduce-only: the limit as
// TAKE_PROFIT, the stop as STOP_MARKET or STOP. Binance takes them as two
// requests: when the second fails after the first was placed, the answer
// is unknown, so the node reads both back by client order id.
func (a *Adapter) SubmitGroup(ctx context.Context, g node.GroupRequest) ([]node.VenueOrder, error) {
	if g.Class != node.GroupOCO || len(g.Legs) != 2 {
		return nil, a.refused(fmt.Sprintf("binance-futures takes an oco as its two legs, not a %q group of %d legs; nothing was sent", g.Class, len(g.Legs)))
	}
	tp, stop := g.Legs[0], g.Legs[1]
	tpID, err := clientID(tp.ClientOrderID)
	if err != nil {
		return nil, a.refused(err.Error())
	}
	stopID, err := clientID(stop.ClientOrderID)
	if err != nil {
		return nil, a.refused(err.Error())
	}
	first, err := a.submitAlgo(ctx, tp, tpID, true)
	if err != nil {
		return nil, err
	}
	second, err := a.submitAlgo(ctx, stop, stopID, false)
	if err != nil {
		return nil, &node.VenueError{Kind: node.ErrVenueUnknown, Venue: a.name,
			Message: fmt.Sprintf("the take-profit %s was placed, the stop %s was not sent through (%v); the node reads both back by client order id", tp.ClientOrderID, stop.ClientOrderID, err)}
	}
	return []node.VenueOrder{first, second}, nil
}

// Cancel cancels one order or algo order.
func (a *Adapter) Cancel(ctx context.Context, o node.VenueOrder) (node.VenueOrder, error) {
	if isAlgo(o) {
		return a.cancelAlgo(ctx, o)
	}
	s := a.c.NewCancelOrderService().Symbol(a.syms.Venue(o.Symbol))
	if id, err := strconv.ParseInt(o.VenueOrderID, 10, 64); err == nil {
		s = s.OrderID(id)
	} else {
		cid, err := clientID(o.ClientOrderID)
		if err != nil {
			return node.VenueOrder{}, &node.VenueError{Kind: node.ErrVenueNotFound, Venue: a.name, Message: err.Error()}
		}
		s = s.OrigClientOrderID(cid)
	}
	res, err := s.Do(ctx)
	if err != nil {
		return node.VenueOrder{}, a.classify(err)
	}
	vo := a.fromOrder(&futures.Order{Symbol: res.Symbol, OrderID: res.OrderID, ClientOrderID: res.ClientOrderID, Price: res.Price,
		OrigQuantity: res.OrigQuantity, ExecutedQuantity: res.ExecutedQuantity, CumQuote: res.CumQuote, Status: res.Status,
		TimeInForce: res.TimeInForce, Type: res.Type, Side: res.Side, StopPrice: res.StopPrice, UpdateTime: res.UpdateTime})
	vo, _ = a.withFee(ctx, vo, res.Symbol, res.OrderID) // canceled either way; the fee is read again at the next read
	return vo, nil
}

// cancelAlgo cancels an algo order (DELETE /fapi/v1/algoOrder) and reads
// it back.
func (a *Adapter) cancelAlgo(ctx context.Context, o node.VenueOrder) (node.VenueOrder, error) {
	p := url.Values{}
	if id, ok := algoIDOf(o.VenueOrderID); ok {
		p.Set("algoId", strconv.FormatInt(id, 10))
	} else {
		cur, err := a.Lookup(ctx, o)
		if err != nil {
			return node.VenueOrder{}, err
		}
		id, _ := algoIDOf(cur.VenueOrderID)
		p.Set("algoId", strconv.FormatInt(id, 10))
	}
	var res struct {
		AlgoID int64 `json:"algoId"`
	}
	if err := a.signed(ctx, http.MethodDelete, pathAlgo, p, &res); err != nil {
		return node.VenueOrder{}, a.classify(err)
	}
	got, err := a.getAlgo(ctx, p.Get("algoId"), "")
	if err != nil {
		return node.VenueOrder{}, err
	}
	return a.algoState(ctx, got)
}

// Replace modifies a limit in place (PUT /fapi/v1/order: the same order,
// its fills kept, a new quantity and price) and replaces a conditional
// order that has not triggered by cancel-then-new, under the next
// replacement client id (the node's id with .1, .2, ...).
func (a *Adapter) Replace(ctx context.Context, o node.VenueOrder, r node.Replacement) (node.VenueOrder, error) {
	qty, price, stop, trail := or(r.Quantity, o.Quantity), or(r.Price, o.Price), or(r.StopPrice, o.StopPrice), or(r.TrailPercent, o.TrailPercent)
	if isAlgo(o) {
		return a.replaceAlgo(ctx, o, qty, price, stop, trail, r.TrailAmount)
	}
	if o.Type != command.Limit {
		return node.VenueOrder{}, a.refused(fmt.Sprintf("binance-futures modifies limit orders in place and replaces stop types, not a %s; nothing was sent", o.Type))
	}
	if !qty.GreaterThan(o.Filled) {
		return node.VenueOrder{}, a.refused(fmt.Sprintf("new quantity %s is not above the filled %s", qty, o.Filled))
	}
	id, err := strconv.ParseInt(o.VenueOrderID, 10, 64)
	if err != nil { // the node names it by client id only: read its id first
		cur, err := a.Lookup(ctx, o)
		if err != nil {
			return node.VenueOrder{}, err
		}
		id, _ = strconv.ParseInt(cur.VenueOrderID, 10, 64)
	}
	res, err := a.c.NewModifyOrderService().Symbol(a.syms.Venue(o.Symbol)).OrderID(id).Side(side(o.Side)).Quantity(qty.String()).Price(price.String()).Do(ctx)
	if err != nil {
		return node.VenueOrder{}, a.classify(err)
	}
	out := a.fromOrder(&futures.Order{Symbol: res.Symbol, OrderID: res.OrderID, ClientOrderID: res.ClientOrderID, Price: res.Price,
		OrigQuantity: res.OriginalQuantity, ExecutedQuantity: res.ExecutedQuantity, Status: res.Status, TimeInForce: res.TimeInForce,
		Type: res.Type, Side: res.Side, StopPrice: res.StopPrice, UpdateTime: res.UpdateTime, AvgPrice: res.AveragePrice})
	out, _ = a.withFee(ctx, out, res.Symbol, res.OrderID) // modified either way; the fee is read again at the next read
	out.ClientOrderID = o.ClientOrderID
	return out, nil
}

func or(d, def decimal.Decimal) decimal.Decimal {
	if d.IsZero() {
		return def
	}
	return d
}

// replaceAlgo cancels an untriggered algo order and places its
// replacement; a lost cancel is unknown (nothing new was sent), a refused
// replacement says the old one is canceled.
func (a *Adapter) replaceAlgo(ctx context.Context, o node.VenueOrder, qty, price, stop, trail, trailAmount decimal.Decimal) (node.VenueOrder, error) {
	cur, err := a.Lookup(ctx, o)
	if err != nil {
		return node.VenueOrder{}, err
	}
	if cur.State != node.VenueOpen || cur.Filled.IsPositive() {
		return node.VenueOrder{}, a.refused("the order has triggered or ended at binance-futures; it can no longer be replaced (cancel it instead)")
	}
	if trailAmount.IsPositive() || (cur.Type == command.TrailingStop && !callbackOK(trail)) {
		return node.VenueOrder{}, a.refused(trailingHint + "; nothing was sent")
	}
	id, _ := algoIDOf(cur.VenueOrderID)
	live, err := a.getAlgo(ctx, strconv.FormatInt(id, 10), "")
	if err != nil {
		return node.VenueOrder{}, err
	}
	base, err := clientID(o.ClientOrderID)
	if err != nil {
		return node.VenueOrder{}, a.refused(err.Error())
	}
	next, err := replacementID(base, replacementOf(live.ClientAlgoID)+1)
	if err != nil {
		return node.VenueOrder{}, a.refused(err.Error())
	}
	if _, err := a.cancelAlgo(ctx, cur); err != nil {
		return node.VenueOrder{}, err
	}
	req := node.OrderRequest{ClientOrderID: o.ClientOrderID, Symbol: o.Symbol, Side: o.Side, Type: cur.Type, Quantity: qty, Price: price, StopPrice: stop, TrailPercent: trail}
	out, err := a.submitAlgo(ctx, req, next, live.OrderType == "TAKE_PROFIT")
	if err != nil {
		if errors.Is(err, node.ErrVenueRejected) {
			return node.VenueOrder{}, a.refused(fmt.Sprintf("the old order was canceled and its replacement refused: %v", err))
		}
		return node.VenueOrder{}, err
	}
	out.ClientOrderID = o.ClientOrderID
	return out, nil
}

// wk<32 hex> with a replacement's .<n>.
var venueMintRE = regexp.MustCompile(`^(wk[0-9a-f]{32}(?:-[stf])?)(?:\.([0-9a-z]))?$`)

func replacementOf(venueID string) int {
	m := venueMintRE.FindStringSubmatch(venueID)
	if m == nil || m[2] == "" {
		return 0
	}
	n, _ := strconv.ParseInt(m[2], 36, 64)
	return int(n)
}

func replacementID(venueID string, n int) (string, error) {
	m := venueMintRE.FindStringSubmatch(venueID)
	if m == nil || n > 35 {
		return "", fmt.Errorf("order %s cannot be replaced again at binance-futures; cancel it and submit a new one", venueID)
	}
	return m[1] + "." + strconv.FormatInt(int64(n), 36), nil
}
