package binance

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/guardrail"

	bn "github.com/adshao/go-binance/v2"

	"github.com/shopspring/decimal"
)

// Submit places an order (newOrderRespType FULL, so fills come back):
// market, limit, a stop_limit as STOP_LOSS_LIMIT (stopPrice, price), a
// trailing stop by percent as STOP_LOSS with trailingDelta (in basis
// points, active from placement). A plain stop is held by the node
// (Holds), never sent.
func (a *Adapter) Submit(ctx context.Context, r node.OrderRequest) (node.VenueOrder, error) {
	r.Symbol = a.syms.Venue(r.Symbol) // BTC-USD travels as BTCUSDT; the answer is named back in cumulative

	cid, err := ClientID(r.ClientOrderID)
	if err != nil {
		return node.VenueOrder{}, &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name, Message: err.Error()}
	}
	s := a.c.NewCreateOrderService().Symbol(r.Symbol).Side(side(r.Side)).Quantity(r.Quantity.String()).
		NewClientOrderID(cid).NewOrderRespType(bn.NewOrderRespTypeFULL).
		SelfTradePreventionMode(bn.SelfTradePreventionMode(guardrail.SelfTradeMode)) // the node's self-trade check leaves it to the venue
	switch r.Type {
	case command.Limit:
		s = s.Type(bn.OrderTypeLimit).Price(r.Price.String()).TimeInForce(tif(r.TimeInForce))
	case command.Market:
		s = s.Type(bn.OrderTypeMarket)
	case command.StopLimit:
		s = s.Type(bn.OrderTypeStopLossLimit).StopPrice(r.StopPrice.String()).Price(r.Price.String()).TimeInForce(bn.TimeInForceTypeGTC)
	case command.TrailingStop:
		bips, ok := a.trailingDelta(r.Symbol, r.TrailPercent)
		if !ok {
			return node.VenueOrder{}, &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name, Message: a.trailingHint(r.Symbol) + "; nothing was sent"}
		}
		s = s.Type(bn.OrderTypeStopLoss).TrailingDelta(strconv.FormatInt(bips, 10))
	default:
		return node.VenueOrder{}, &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name,
			Message: fmt.Sprintf("binance spot takes no %s order from the node (the node holds it); nothing was sent", r.Type)}
	}
	res, err := s.Do(ctx)
	if err != nil {
		return node.VenueOrder{}, a.classify(err)
	}
	a.bookFills(res) // the FULL answer's fills carry each trade's commission
	return a.cumulative(fromCreate(res), res.OrderID), nil
}

// trailingDelta is a trailing percent in Binance's basis points, when it
// is a whole number of them within the symbol's bounds.
func (a *Adapter) trailingDelta(symbol string, percent decimal.Decimal) (int64, bool) {
	bips := percent.Shift(2)
	lo, hi := a.trailingBounds(symbol)
	if !percent.IsPositive() || !bips.IsInteger() || bips.IntPart() < lo || bips.IntPart() > hi {
		return 0, false
	}
	return bips.IntPart(), true
}

func (a *Adapter) trailingBounds(symbol string) (lo, hi int64) {
	lo, hi = minTrailingBips, maxTrailingBips
	a.mu.Lock()
	defer a.mu.Unlock()
	if s := a.symbols[a.syms.Venue(symbol)]; s != nil {
		if f := s.TrailingDeltaFilter(); f != nil && f.MinTrailingBelowDelta > 0 {
			lo, hi = int64(max(f.MinTrailingBelowDelta, f.MinTrailingAboveDelta)), int64(min(f.MaxTrailingBelowDelta, f.MaxTrailingAboveDelta))
		}
	}
	return lo, hi
}

func (a *Adapter) trailingHint(symbol string) string {
	lo, hi := a.trailingBounds(symbol)
	return fmt.Sprintf("binance holds a trailing stop by trailingDelta, a percent of the best price in steps of 0.01 from %s to %s on %s: give trail_percent in that range (trail_amount is not a binance form)",
		decimal.New(lo, -2), decimal.New(hi, -2), symbol)
}

// Holds says what Binance spot holds natively: market, limit, stop_limit
// (STOP_LOSS_LIMIT), a trailing stop by a percent trailingDelta carries,
// and an oco (orderList/oco). A plain stop (stop-market), and a trailing
// stop by amount or by a percent trailingDelta cannot carry, are held by
// the node, which trails it on the marks and fires a market order when
// the mark trades through it. A bracket's entry (market or limit) is
// Binance's own; its exits are held by Binance too, but only as an
// orderList/oco placed once the entry has filled (HoldAfterEntry): the
// node sends that list then, for what filled.
func (a *Adapter) Holds(g node.GroupRequest) ([]node.Hold, error) {
	if g.Class == node.GroupBracket {
		return a.bracketHolds(g)
	}
	out := make([]node.Hold, len(g.Legs))
	for i, l := range g.Legs {
		out[i] = node.HoldVenue
		switch l.Type {
		case command.Stop:
			if g.Class != "" {
				break
			}
			out[i] = node.HoldNode
			if _, err := ClientID(l.ClientOrderID + node.FireSuffix); l.ClientOrderID != "" && err != nil {
				return nil, fmt.Errorf("the node holds this stop and fires it under client order id %s, which cannot travel to binance (%v): give a shorter client_order_id or let the node mint one", l.ClientOrderID+node.FireSuffix, err)
			}
		case command.TrailingStop:
			if _, ok := a.trailingDelta(l.Symbol, l.TrailPercent); ok && g.Class == "" {
				break
			}
			if g.Class != "" {
				return nil, errors.New(a.trailingHint(l.Symbol))
			}
			out[i] = node.HoldNode // trailingDelta cannot carry it: the node trails it
			if _, err := ClientID(l.ClientOrderID + node.FireSuffix); l.ClientOrderID != "" && err != nil {
				return nil, fmt.Errorf("the node holds this trailing stop and fires it under client order id %s, which cannot travel to binance (%v): give a shorter client_order_id or let the node mint one", l.ClientOrderID+node.FireSuffix, err)
			}
		}
	}
	return out, nil
}

// bracketHolds is Holds for a bracket: the entry now, its take-profit
// limit and stop-loss (a stop or stop_limit) as one orderList/oco once the
// entry fills, each leg under a client order id Binance carries.
func (a *Adapter) bracketHolds(g node.GroupRequest) ([]node.Hold, error) {
	if len(g.Legs) != 3 {
		return nil, fmt.Errorf("a bracket is an entry and two exits, not %d legs", len(g.Legs))
	}
	entry, tp, sl := g.Legs[0], g.Legs[1], g.Legs[2]
	switch {
	case entry.Type != command.Market && entry.Type != command.Limit:
		return nil, fmt.Errorf("binance spot takes a bracket's entry as a market or limit order, not %s", entry.Type)
	case tp.Type != command.Limit || (sl.Type != command.Stop && sl.Type != command.StopLimit):
		return nil, errors.New("binance spot places a bracket's exits as one orderList/oco: a take-profit limit (LIMIT_MAKER) and a stop-loss stop_price, optionally with limit_price (STOP_LOSS or STOP_LOSS_LIMIT)")
	}
	for _, l := range g.Legs {
		if _, err := ClientID(l.ClientOrderID); l.ClientOrderID != "" && err != nil {
			return nil, fmt.Errorf("bracket leg %s: %w", l.ClientOrderID, err)
		}
	}
	return []node.Hold{node.HoldVenue, node.HoldAfterEntry, node.HoldAfterEntry}, nil
}

// SubmitGroup places an oco as one orderList (POST /api/v3/orderList/oco,
// spot API "New Order list - OCO"): the limit leg is a LIMIT_MAKER, the
// stop leg a STOP_LOSS_LIMIT (with its limit) or STOP_LOSS; for a sell the
// limit is the above leg, for a buy the below one. Each leg travels under
// its own client order id (ClientID), the list under the group's. The
// answer lists the legs in the request's order.
func (a *Adapter) SubmitGroup(ctx context.Context, g node.GroupRequest) ([]node.VenueOrder, error) {
	if g.Class != node.GroupOCO || len(g.Legs) != 2 {
		return nil, &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name, Message: fmt.Sprintf("binance spot takes an oco as one order list, not a %q group of %d legs; nothing was sent", g.Class, len(g.Legs))}
	}
	lim, stop := g.Legs[0], g.Legs[1]
	limID, err := ClientID(lim.ClientOrderID)
	if err != nil {
		return nil, &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name, Message: err.Error()}
	}
	stopID, err := ClientID(stop.ClientOrderID)
	if err != nil {
		return nil, &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name, Message: err.Error()}
	}
	limitLeg, stopLeg := "above", "below"
	if lim.Side == command.Buy {
		limitLeg, stopLeg = "below", "above"
	}
	p := url.Values{}
	p.Set("symbol", a.syms.Venue(lim.Symbol))
	p.Set("side", string(side(lim.Side)))
	p.Set("quantity", lim.Quantity.String())
	p.Set("listClientOrderId", limID)
	p.Set("newOrderRespType", "FULL")
	p.Set(limitLeg+"Type", string(bn.OrderTypeLimitMaker))
	p.Set(limitLeg+"Price", lim.Price.String())
	p.Set(limitLeg+"ClientOrderId", limID)
	p.Set(stopLeg+"ClientOrderId", stopID)
	p.Set(stopLeg+"StopPrice", stop.StopPrice.String())
	if stop.Type == command.StopLimit {
		p.Set(stopLeg+"Type", string(bn.OrderTypeStopLossLimit))
		p.Set(stopLeg+"Price", stop.Price.String())
		p.Set(stopLeg+"TimeInForce", string(bn.TimeInForceTypeGTC))
	} else {
		p.Set(stopLeg+"Type", string(bn.OrderTypeStopLoss))
	}
	var res orderListResponse
	if err := a.signedPost(ctx, "/api/v3/orderList/oco", p, &res); err != nil {
		return nil, a.classify(err)
	}
	out := make([]node.VenueOrder, 0, 2)
	for _, want := range []string{limID, stopID} {
		i := slices.IndexFunc(res.OrderReports, func(r orderReport) bool { return r.ClientOrderID == want })
		if i < 0 {
			return nil, &node.VenueError{Kind: node.ErrVenueUnknown, Venue: a.name,
				Message: fmt.Sprintf("binance answered order list %d without leg %s; the node reads the legs back by client order id", res.OrderListID, want)}
		}
		out = append(out, a.cumulative(res.OrderReports[i].venueOrder(), res.OrderReports[i].OrderID))
	}
	return out, nil
}

// orderListResponse is orderList/oco's FULL answer.
type orderListResponse struct {
	OrderListID       int64         `json:"orderListId"`
	ContingencyType   string        `json:"contingencyType"`
	ListStatusType    string        `json:"listStatusType"`
	ListClientOrderID string        `json:"listClientOrderId"`
	OrderReports      []orderReport `json:"orderReports"`
}

type orderReport struct {
	Symbol                   string             `json:"symbol"`
	OrderID                  int64              `json:"orderId"`
	ClientOrderID            string             `json:"clientOrderId"`
	TransactTime             int64              `json:"transactTime"`
	Price                    string             `json:"price"`
	OrigQuantity             string             `json:"origQty"`
	ExecutedQuantity         string             `json:"executedQty"`
	CummulativeQuoteQuantity string             `json:"cummulativeQuoteQty"`
	Status                   bn.OrderStatusType `json:"status"`
	TimeInForce              bn.TimeInForceType `json:"timeInForce"`
	Type                     bn.OrderType       `json:"type"`
	Side                     bn.SideType        `json:"side"`
	StopPrice                string             `json:"stopPrice"`
}

func (r orderReport) venueOrder() node.VenueOrder {
	return fromOrder(&bn.Order{Symbol: r.Symbol, OrderID: r.OrderID, ClientOrderID: r.ClientOrderID, Price: r.Price, OrigQuantity: r.OrigQuantity,
		ExecutedQuantity: r.ExecutedQuantity, CummulativeQuoteQuantity: r.CummulativeQuoteQuantity, Status: r.Status, TimeInForce: r.TimeInForce,
		Type: r.Type, Side: r.Side, StopPrice: r.StopPrice, UpdateTime: r.TransactTime})
}

// signedPost sends one signed form POST for an endpoint the library does
// not serve, once (Signer).
func (a *Adapter) signedPost(ctx context.Context, path string, p url.Values, out any) error {
	return Signer{BaseURL: a.c.BaseURL, HTTP: a.c.HTTPClient, Key: a.apiKey, Secret: a.apiSecret, Now: a.now, Offset: a.c.TimeOffset}.
		Do(ctx, http.MethodPost, path, p, true, out)
}

// Cancel cancels one order.
func (a *Adapter) Cancel(ctx context.Context, o node.VenueOrder) (node.VenueOrder, error) {
	s := a.c.NewCancelOrderService().Symbol(a.syms.Venue(o.Symbol))
	if id, err := strconv.ParseInt(o.VenueOrderID, 10, 64); err == nil {
		s = s.OrderID(id)
	} else {
		cid, err := ClientID(o.ClientOrderID)
		if err != nil {
			return node.VenueOrder{}, &node.VenueError{Kind: node.ErrVenueNotFound, Venue: a.name, Message: err.Error()}
		}
		s = s.OrigClientOrderID(cid)
	}
	res, err := s.Do(ctx)
	if err != nil {
		return node.VenueOrder{}, a.classify(err)
	}
	// Fills the node has not heard of yet come with their commissions; the
	// cancel stands whatever this read says (the next read covers them).
	_ = a.coverFees(ctx, res.Symbol, res.OrderID, dec(res.ExecutedQuantity))
	return a.fromCancel(res), nil // cancel_all.go
}

// Replace is Binance's cancel-replace (STOP_ON_FAILURE): the open order is
// canceled and a new one for the rest placed, of the same type, under the
// next replacement client id — a LIMIT at its new price, a
// STOP_LOSS_LIMIT at its new stopPrice and price, a trailing STOP_LOSS at
// its new trailingDelta. The answer counts the old order's fills.
func (a *Adapter) Replace(ctx context.Context, o node.VenueOrder, r node.Replacement) (node.VenueOrder, error) {
	qty, price, stop, trail := r.Quantity, r.Price, r.StopPrice, r.TrailPercent
	if qty.IsZero() {
		qty = o.Quantity
	}
	if price.IsZero() {
		price = o.Price
	}
	if stop.IsZero() {
		stop = o.StopPrice
	}
	if trail.IsZero() {
		trail = o.TrailPercent
	}
	var bips int64
	switch o.Type {
	case command.Limit, command.StopLimit:
	case command.TrailingStop:
		var ok bool
		if bips, ok = a.trailingDelta(o.Symbol, trail); !ok || r.TrailAmount.IsPositive() {
			return node.VenueOrder{}, &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name, Message: a.trailingHint(o.Symbol) + "; nothing was sent"}
		}
	default:
		return node.VenueOrder{}, &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name,
			Message: fmt.Sprintf("binance cancel-replaces limit, stop_limit and trailing_stop orders, not %s; nothing was sent", o.Type)}
	}
	rest := qty.Sub(o.Filled)
	if !rest.IsPositive() {
		return node.VenueOrder{}, &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name,
			Message: fmt.Sprintf("new quantity %s is not above the filled %s", qty, o.Filled)}
	}
	cur, err := a.Lookup(ctx, o) // the live incarnation, and the fills so far
	if err != nil {
		return node.VenueOrder{}, err
	}
	if cur.State != node.VenueOpen {
		return node.VenueOrder{}, &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name, Message: "the order is no longer open at binance"}
	}
	venueCID, err := ClientID(o.ClientOrderID)
	if err != nil {
		return node.VenueOrder{}, &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name, Message: err.Error()}
	}
	oid, _ := strconv.ParseInt(cur.VenueOrderID, 10, 64)
	live, err := a.get(ctx, o.Symbol, cur.VenueOrderID, "")
	if err != nil {
		return node.VenueOrder{}, err
	}
	n, _ := replacementOf(live.ClientOrderID)
	next, err := replacementID(venueCID, n+1)
	if err != nil {
		return node.VenueOrder{}, &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name, Message: err.Error()}
	}
	rest = qty.Sub(cur.Filled)
	if !rest.IsPositive() {
		return node.VenueOrder{}, &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name,
			Message: fmt.Sprintf("new quantity %s is not above the filled %s", qty, cur.Filled)}
	}
	svc := a.c.NewCancelReplaceOrderService().Symbol(a.syms.Venue(o.Symbol)).Side(side(o.Side)).
		CancelReplaceMode(bn.CancelReplaceModeStopOnFailure).CancelOrderID(oid).NewClientOrderID(next).
		Quantity(rest.String()).NewOrderRespType(bn.NewOrderRespTypeFULL)
	switch o.Type {
	case command.Limit:
		svc = svc.Type(bn.OrderTypeLimit).Price(price.String()).TimeInForce(tif(o.TimeInForce))
	case command.StopLimit:
		svc = svc.Type(bn.OrderTypeStopLossLimit).StopPrice(stop.String()).Price(price.String()).TimeInForce(bn.TimeInForceTypeGTC)
	case command.TrailingStop:
		svc = svc.Type(bn.OrderTypeStopLoss).TrailingDelta(strconv.FormatInt(bips, 10))
	}
	res, err := svc.Do(ctx)
	if err != nil {
		return node.VenueOrder{}, a.classify(err)
	}
	if res.NewOrderResponse == nil || res.NewOrderResult != "SUCCESS" {
		return node.VenueOrder{}, &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name,
			Message: fmt.Sprintf("cancel-replace: cancel %s, new order %s", res.CancelResult, res.NewOrderResult)}
	}
	a.mu.Lock()
	before := a.prior[oid]
	a.mu.Unlock()
	if res.CancelResponse != nil {
		// the replaced incarnation's commissions: a fill since the lookup
		// is read (best effort: the replace is done whatever the read says)
		_ = a.coverFees(ctx, a.syms.Venue(o.Symbol), oid, dec(res.CancelResponse.ExecutedQuantity))
		asset, other := a.otherFeeOf(oid)
		before = before.add(fills{dec(res.CancelResponse.ExecutedQuantity), dec(res.CancelResponse.CummulativeQuoteQuantity), a.feeOf(oid), asset, other})
	} else {
		before = before.add(a.own(live))
	}
	a.bookFills(res.NewOrderResponse)
	a.setPrior(res.NewOrderResponse.OrderID, before)
	out := a.cumulative(fromCreate(res.NewOrderResponse), res.NewOrderResponse.OrderID)
	out.ClientOrderID = o.ClientOrderID
	return out, nil
}

// Binance's trailingDelta bounds without a TRAILING_DELTA filter (spot
// API "Trailing Stop FAQ": 10 to 2000 basis points).
const minTrailingBips, maxTrailingBips = 10, 2000
