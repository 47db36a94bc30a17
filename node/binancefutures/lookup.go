package binancefutures

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/venuecall"

	"github.com/adshao/go-binance/v2/futures"
)

// Lookup reads one order by its venue id, else by client order id: an
// algo order (followed through its replacements to the newest, and to
// the order it triggered for its fills), else a plain order.
func (a *Adapter) Lookup(ctx context.Context, o node.VenueOrder) (node.VenueOrder, error) {
	cid, err := clientID(o.ClientOrderID)
	if o.VenueOrderID == "" && err != nil {
		return node.VenueOrder{}, &node.VenueError{Kind: node.ErrVenueNotFound, Venue: a.name, Message: err.Error()}
	}
	if id, ok := algoIDOf(o.VenueOrderID); ok {
		got, err := a.getAlgo(ctx, strconv.FormatInt(id, 10), "")
		if err != nil {
			return node.VenueOrder{}, err
		}
		return a.newestAlgo(ctx, got)
	}
	if o.VenueOrderID == "" && isAlgo(o) {
		return a.lookupAlgo(ctx, cid)
	}
	got, err := venuecall.Read(ctx, a.tr, func() (*futures.Order, error) {
		s := a.c.NewGetOrderService().Symbol(a.syms.Venue(o.Symbol))
		if id, perr := strconv.ParseInt(o.VenueOrderID, 10, 64); perr == nil {
			s = s.OrderID(id)
		} else {
			s = s.OrigClientOrderID(cid)
		}
		return s.Do(ctx)
	})
	if err = a.classify(err); errors.Is(err, node.ErrVenueNotFound) && o.VenueOrderID == "" && (o.Type == "" || o.Type == command.Limit) {
		return a.lookupAlgo(ctx, cid) // no type named, or a limit that may be an oco's take-profit: an algo order?
	}
	if err != nil {
		return node.VenueOrder{}, err
	}
	return a.withFee(ctx, a.fromOrder(got), got.Symbol, got.OrderID)
}

func (a *Adapter) lookupAlgo(ctx context.Context, cid string) (node.VenueOrder, error) {
	got, err := a.getAlgo(ctx, "", cid)
	if err != nil {
		return node.VenueOrder{}, err
	}
	return a.newestAlgo(ctx, got)
}

// newestAlgo follows a canceled algo order to its newest replacement.
func (a *Adapter) newestAlgo(ctx context.Context, got *algoOrder) (node.VenueOrder, error) {
	for got.AlgoStatus == "CANCELED" {
		next, err := replacementID(got.ClientAlgoID, replacementOf(got.ClientAlgoID)+1)
		if err != nil {
			break
		}
		n, err := a.getAlgo(ctx, "", next)
		if errors.Is(err, node.ErrVenueNotFound) {
			break
		}
		if err != nil {
			return node.VenueOrder{}, err
		}
		got = n
	}
	return a.algoState(ctx, got)
}

// getAlgo reads one algo order by its id or client id.
func (a *Adapter) getAlgo(ctx context.Context, algoID, cid string) (*algoOrder, error) {
	got, err := venuecall.Read(ctx, a.tr, func() (*algoOrder, error) {
		p := url.Values{}
		if algoID != "" {
			p.Set("algoId", algoID)
		} else {
			p.Set("clientAlgoId", cid)
		}
		var out algoOrder
		return &out, a.signed(ctx, http.MethodGet, pathAlgo, p, &out)
	})
	return got, a.classify(err)
}

// algoState is an algo order in the node's vocabulary, its symbol as the
// venue's list writes it: untriggered it is open and unfilled; triggered,
// its order's fills and state are its own.
func (a *Adapter) algoState(ctx context.Context, g *algoOrder) (node.VenueOrder, error) {
	out := node.VenueOrder{ClientOrderID: nodeID(g.ClientAlgoID), VenueOrderID: algoVenueID(g.AlgoID), Symbol: a.syms.Listed(g.Symbol), Side: sideOf(g.Side),
		Type: typeOf(g.OrderType), TimeInForce: command.GTC, Quantity: dec(g.Quantity), Updated: msTime(g.UpdateTime), State: node.VenueOpen}
	switch g.OrderType {
	case "STOP_MARKET":
		out.StopPrice = dec(g.TriggerPrice)
	case "STOP":
		out.StopPrice, out.Price = dec(g.TriggerPrice), dec(g.Price)
	case "TAKE_PROFIT":
		out.Price = dec(g.Price)
	case "TRAILING_STOP_MARKET":
		out.TrailPercent = dec(g.CallbackRate)
	}
	switch g.AlgoStatus {
	case "CANCELED", "EXPIRED":
		out.State, out.Reason = node.VenueCanceled, "algo order "+strings.ToLower(g.AlgoStatus)
	case "REJECTED":
		out.State, out.Reason = node.VenueRejected, "the venue refused the triggered order"
	}
	if g.ActualOrderID == 0 {
		if g.AlgoStatus == "FINISHED" {
			out.State = node.VenueCanceled
		}
		return out, nil
	}
	a.mu.Lock()
	a.actual[int64(g.ActualOrderID)] = algoRef{symbol: g.Symbol, clientAlgoID: g.ClientAlgoID}
	a.mu.Unlock()
	ord, err := venuecall.Read(ctx, a.tr, func() (*futures.Order, error) {
		return a.c.NewGetOrderService().Symbol(g.Symbol).OrderID(int64(g.ActualOrderID)).Do(ctx)
	})
	if err != nil {
		return node.VenueOrder{}, a.classify(err)
	}
	act, err := a.withFee(ctx, a.fromOrder(ord), ord.Symbol, ord.OrderID)
	if err != nil {
		return node.VenueOrder{}, err
	}
	out.Filled, out.AveragePrice, out.Notional, out.Updated = act.Filled, act.AveragePrice, act.Notional, act.Updated
	out.Fee, out.FeeAsset, out.AssetFee = act.Fee, act.FeeAsset, act.AssetFee
	if g.AlgoStatus == "FINISHED" || g.AlgoStatus == "TRIGGERED" {
		out.State = act.State
	}
	return out, nil
}

// OpenOrders lists the open orders and algo orders of the symbols; an
// order an algo order triggered is listed as that algo order.
func (a *Adapter) OpenOrders(ctx context.Context, symbols []string) ([]node.VenueOrder, error) {
	var out []node.VenueOrder
	for _, sym := range a.syms.Venues(symbols) {
		algos, err := venuecall.Read(ctx, a.tr, func() ([]algoOrder, error) {
			p := url.Values{}
			p.Set("symbol", sym)
			var raw json.RawMessage
			if err := a.signed(ctx, http.MethodGet, pathOpenAlgo, p, &raw); err != nil {
				return nil, err
			}
			return algoList(raw)
		})
		if err != nil {
			return nil, a.classify(err)
		}
		triggered := map[int64]bool{}
		for i := range algos {
			vo, err := a.algoState(ctx, &algos[i])
			if err != nil {
				return nil, err
			}
			triggered[int64(algos[i].ActualOrderID)] = true
			if vo.State == node.VenueOpen {
				out = append(out, vo)
			}
		}
		list, err := venuecall.Read(ctx, a.tr, func() ([]*futures.Order, error) { return a.c.NewListOpenOrdersService().Symbol(sym).Do(ctx) })
		if err != nil {
			return nil, a.classify(err)
		}
		for _, o := range list {
			if !triggered[o.OrderID] {
				vo, err := a.withFee(ctx, a.fromOrder(o), o.Symbol, o.OrderID)
				if err != nil {
					return nil, err
				}
				out = append(out, vo)
			}
		}
	}
	return out, nil
}

// fromOrder maps a plain order, its symbol as the venue's list writes it.
func (a *Adapter) fromOrder(o *futures.Order) node.VenueOrder {
	out := node.VenueOrder{ClientOrderID: nodeID(o.ClientOrderID), VenueOrderID: strconv.FormatInt(o.OrderID, 10), Symbol: a.syms.Listed(o.Symbol),
		Side: sideOf(string(o.Side)), Type: typeOf(string(o.Type)), TimeInForce: tifOf(string(o.TimeInForce)), Quantity: dec(o.OrigQuantity),
		Price: dec(o.Price), State: stateOf(string(o.Status)), Filled: dec(o.ExecutedQuantity), Updated: msTime(o.UpdateTime), StopPrice: dec(o.StopPrice)}
	out.Notional = dec(o.CumQuote)
	switch {
	case dec(o.AvgPrice).IsPositive():
		out.AveragePrice = dec(o.AvgPrice)
	case out.Filled.IsPositive():
		out.AveragePrice = out.Notional.DivRound(out.Filled, 10)
	}
	if out.Notional.IsZero() {
		out.Notional = out.Filled.Mul(out.AveragePrice)
	}
	return out
}

// algoList reads a list of algo orders: a JSON array, or an object whose
// one array field holds them (the answer's wrapping is not the adapter's
// business).
func algoList(raw json.RawMessage) ([]algoOrder, error) {
	var list []algoOrder
	if err := json.Unmarshal(raw, &list); err == nil {
		return list, nil
	}
	var wrapped map[string]json.RawMessage
	if err := json.Unmarshal(raw, &wrapped); err != nil {
		return nil, fmt.Errorf("open algo orders: an answer that is neither a list nor an object: %w", err)
	}
	for _, v := range wrapped {
		if err := json.Unmarshal(v, &list); err == nil && len(v) > 0 && v[0] == '[' {
			return list, nil
		}
	}
	return nil, nil
}
