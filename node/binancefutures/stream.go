package binancefutures

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"wicket/node"
)

// keepaliveEvery is how often the listen key is extended (Binance:
// valid 60 minutes, extend about every 60; a half keeps a margin).
const keepaliveEvery = 30 * time.Minute

// Stream runs the user data stream (USDⓈ-M "User Data Streams"): a
// listen key from POST /fapi/v1/listenKey, one connection to
// <ws base>/<listenKey>, kept alive with PUT /fapi/v1/listenKey. Each
// ORDER_TRADE_UPDATE of an order is delivered as its new state; each
// ALGO_UPDATE as the algo order read back over REST (with the fills of
// the order it triggered); an order update the adapter cannot put in
// context (a triggered algo's order it has not seen, a liquidation) asks
// the node to resync. A liquidation is remembered, so the account read
// that follows reports the position closed with why. It returns when ctx
// ends, the listen key expires or the connection drops; the node then
// polls over REST until a new stream is up.
func (a *Adapter) Stream(ctx context.Context, updates func(node.VenueUpdate)) error {
	key, err := a.c.NewStartUserStreamService().Do(ctx)
	if err != nil {
		return fmt.Errorf("user data stream: listen key: %w", a.classify(err))
	}
	dialer := websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	conn, resp, err := dialer.DialContext(ctx, a.wsBase+"/"+key, http.Header{})
	if err != nil {
		return fmt.Errorf("user data stream: %w", err)
	}
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	defer conn.Close()
	conn.SetReadLimit(1 << 20)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		t := time.NewTicker(keepaliveEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				conn.Close() // unblocks the read
				return
			case <-stop:
				return
			case <-t.C:
				if err := a.c.NewKeepaliveUserStreamService().ListenKey(key).Do(ctx); err != nil {
					conn.Close() // a key that cannot be kept alive ends the stream; the node resyncs
					return
				}
			}
		}
	}()
	updates(node.VenueUpdate{Connected: true})
	for {
		_, msg, err := conn.ReadMessage()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("user data stream dropped: %w", err)
		}
		var ev event
		if json.Unmarshal(msg, &ev) != nil {
			continue
		}
		switch ev.Type {
		case "listenKeyExpired":
			return fmt.Errorf("user data stream: the listen key expired")
		case "ORDER_TRADE_UPDATE":
			a.orderUpdate(ctx, ev.Order, updates)
		case "ALGO_UPDATE":
			var o struct {
				ClientAlgoID string `json:"caid"`
				AlgoID       int64  `json:"aid"`
			}
			if json.Unmarshal(ev.Raw, &o) != nil {
				continue
			}
			vo, err := a.Lookup(ctx, node.VenueOrder{VenueOrderID: algoVenueID(o.AlgoID), ClientOrderID: nodeID(o.ClientAlgoID)})
			if err != nil {
				updates(node.VenueUpdate{Resync: true})
				continue
			}
			updates(node.VenueUpdate{Order: &vo})
		}
	}
}

// event is one user data stream message.
type event struct {
	Type  string          `json:"e"`
	Time  int64           `json:"E"`
	Order orderEvent      `json:"-"`
	Raw   json.RawMessage `json:"o"`
}

func (e *event) UnmarshalJSON(b []byte) error {
	type plain event
	if err := json.Unmarshal(b, (*plain)(e)); err != nil {
		return err
	}
	if e.Type == "ORDER_TRADE_UPDATE" {
		return json.Unmarshal(e.Raw, &e.Order)
	}
	return nil
}

// orderEvent is ORDER_TRADE_UPDATE's order.
type orderEvent struct {
	Symbol        string `json:"s"`
	ClientOrderID string `json:"c"`
	Side          string `json:"S"`
	Type          string `json:"o"`
	OrigType      string `json:"ot"`
	TimeInForce   string `json:"f"`
	Quantity      string `json:"q"`
	Price         string `json:"p"`
	AveragePrice  string `json:"ap"`
	StopPrice     string `json:"sp"`
	Exec          string `json:"x"`
	Status        string `json:"X"`
	OrderID       int64  `json:"i"`
	LastQty       string `json:"l"`
	Filled        string `json:"z"`
	LastPrice     string `json:"L"`
	Time          int64  `json:"T"`
	// Commission and CommissionAsset are a TRADE's commission, TradeID
	// its trade's id.
	Commission      string `json:"n"`
	CommissionAsset string `json:"N"`
	TradeID         int64  `json:"t"`
}

// orderUpdate delivers one order's update: its own state, its algo
// order's when it is a triggered algo's, or a resync when it is neither
// the node's nor known (a liquidation is remembered first).
func (a *Adapter) orderUpdate(ctx context.Context, o orderEvent, updates func(node.VenueUpdate)) {
	a.mu.Lock()
	ref, fromAlgo := a.actual[o.OrderID]
	a.mu.Unlock()
	switch {
	case fromAlgo:
		if o.Exec == "TRADE" {
			a.fees.Book(o.OrderID, a.trade(o.TradeID, dec(o.LastQty), dec(o.Commission), o.CommissionAsset))
		}
		vo, err := a.lookupAlgo(ctx, ref.clientAlgoID)
		if err != nil {
			updates(node.VenueUpdate{Resync: true})
			return
		}
		if dec(o.LastQty).IsPositive() {
			vo.LastQuantity, vo.LastPrice = dec(o.LastQty), dec(o.LastPrice)
		}
		updates(node.VenueUpdate{Order: &vo})
		return
	case conditionalTypes[o.OrigType] && venueMintRE.MatchString(o.ClientOrderID):
		// An order an algo order of the node's placed, under its id: the
		// algo order is what the node follows.
		vo, err := a.lookupAlgo(ctx, o.ClientOrderID)
		if err != nil {
			updates(node.VenueUpdate{Resync: true})
			return
		}
		updates(node.VenueUpdate{Order: &vo})
		return
	case o.Type == "LIQUIDATION" || strings.HasPrefix(o.ClientOrderID, "autoclose-"):
		if o.Status == "FILLED" {
			a.mu.Lock()
			a.liquid[o.OrderID] = true
			a.closed[o.Symbol] = closure{fmt.Sprintf("liquidated by binance: liquidation order %d %s %s %s at %s (%s)", o.OrderID, strings.ToLower(o.Side), o.Filled, a.syms.Listed(o.Symbol),
				o.AveragePrice, msTime(o.Time).Format(time.RFC3339)), a.now()}
			a.mu.Unlock()
		}
		updates(node.VenueUpdate{Resync: true})
		return
	case !venueMintRE.MatchString(o.ClientOrderID):
		// Not minted by the node: an order a triggered algo placed that
		// this process has not seen trigger, or one placed by hand. Reading
		// the orders back puts either in context.
		updates(node.VenueUpdate{Resync: true})
		return
	}
	vo := node.VenueOrder{ClientOrderID: nodeID(o.ClientOrderID), VenueOrderID: strconv.FormatInt(o.OrderID, 10), Symbol: a.syms.Listed(o.Symbol),
		Side: sideOf(o.Side), Type: typeOf(o.Type), TimeInForce: tifOf(o.TimeInForce), Quantity: dec(o.Quantity), Price: dec(o.Price),
		StopPrice: dec(o.StopPrice), State: stateOf(o.Status), Filled: dec(o.Filled), AveragePrice: dec(o.AveragePrice), Updated: msTime(o.Time)}
	vo.Notional = vo.Filled.Mul(vo.AveragePrice)
	if o.Exec == "TRADE" {
		vo.LastQuantity, vo.LastPrice = dec(o.LastQty), dec(o.LastPrice)
		a.fees.Book(o.OrderID, a.trade(o.TradeID, dec(o.LastQty), dec(o.Commission), o.CommissionAsset))
	}
	vo, err := a.withFee(ctx, vo, o.Symbol, o.OrderID)
	if err != nil {
		updates(node.VenueUpdate{Resync: true}) // its fees unread: the node reads the order again
		return
	}
	updates(node.VenueUpdate{Order: &vo})
}

// conditionalTypes are the order types Binance holds as algo orders.
var conditionalTypes = map[string]bool{"STOP": true, "STOP_MARKET": true, "TAKE_PROFIT": true, "TAKE_PROFIT_MARKET": true, "TRAILING_STOP_MARKET": true}
