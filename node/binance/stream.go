package binance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	bn "github.com/adshao/go-binance/v2"
	"github.com/adshao/go-binance/v2/common"
	bnws "github.com/adshao/go-binance/v2/common/websocket"
	"github.com/google/uuid"
	"github.com/gorilla/websocket"

	"wicket/node"
	"wicket/node/venuecall"
)

// Stream runs the user data stream through Binance's WebSocket API (spot
// "WebSocket API", User Data Stream requests): one connection to
// <ws-api base>, a signed userDataStream.subscribe.signature request, and
// each executionReport event of the subscription delivered as the order's
// new state. This replaces the deprecated listen-key stream (REST
// /api/v3/userDataStream, go-binance's WsUserDataServe); the request is
// built and signed by go-binance as its WsUserDataServeSignature does, but
// on the adapter's own endpoint and dialer, so that a refusal is returned
// with its reason instead of read as an event. It returns when ctx ends,
// the venue refuses or ends the subscription, or the connection drops;
// the node then resyncs over REST.
func (a *Adapter) Stream(ctx context.Context, updates func(node.VenueUpdate)) error {
	conn, refused, err := venuecall.DialStream(ctx, a.wsAPI)
	if err != nil {
		return fmt.Errorf("user data stream: %w%s", err, refused)
	}
	defer conn.Close()
	defer venuecall.Watch(ctx, conn, 0, nil)()
	id := uuid.NewString()
	req, err := bnws.CreateRequest(bnws.NewRequestData(id, a.apiKey, a.apiSecret, 0, common.KeyTypeHmac),
		bnws.UserDataStreamSubscribeSignatureSpotWsApiMethod, map[string]any{})
	if err != nil {
		return fmt.Errorf("user data stream: %w", err)
	}
	conn.SetReadDeadline(time.Now().Add(15 * time.Second)) //nolint:errcheck // a failed deadline fails the read
	if err := conn.WriteMessage(websocket.TextMessage, req); err != nil {
		return fmt.Errorf("user data stream: subscribing: %w", err)
	}
	if err := subscribed(conn, id); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	conn.SetReadDeadline(time.Time{}) //nolint:errcheck // as above
	updates(node.VenueUpdate{Connected: true})
	for {
		_, msg, err := conn.ReadMessage()
		if err != nil {
			return venuecall.Dropped(ctx, "user data stream", err)
		}
		var frame struct {
			ID    *string         `json:"id"`
			Event json.RawMessage `json:"event"`
		}
		if json.Unmarshal(msg, &frame) != nil || frame.ID != nil || len(frame.Event) == 0 {
			continue // an answer to no request of ours, or not an event
		}
		var head struct { // E is named so that Go's case-insensitive matching does not read it as e
			Event string `json:"e"`
			Time  int64  `json:"E"`
		}
		if json.Unmarshal(frame.Event, &head) != nil {
			continue
		}
		switch bn.UserDataEventType(head.Event) {
		case bn.UserDataEventTypeExecutionReport:
			var u bn.WsOrderUpdate
			if err := json.Unmarshal(frame.Event, &u); err != nil {
				continue
			}
			if u.ExecutionType == "TRADE" { // n and N are this trade's commission
				a.bookTrade(u.Id, u.Symbol, u.TradeId, dec(u.LatestVolume), dec(u.LatestPrice), dec(u.FeeCost), u.FeeAsset)
			}
			if err := a.coverFees(ctx, u.Symbol, u.Id, dec(u.FilledVolume)); err != nil {
				updates(node.VenueUpdate{Resync: true}) // its fees unread: the node reads the order again
				continue
			}
			vo, known := a.fromUpdate(u)
			if !known {
				updates(node.VenueUpdate{Resync: true})
				continue
			}
			updates(node.VenueUpdate{Order: &vo})
		case "eventStreamTerminated":
			return errors.New("user data stream: binance ended the subscription (eventStreamTerminated)")
		}
	}
}

// wsAnswer is the WebSocket API's answer to a request.
type wsAnswer struct {
	ID     string `json:"id"`
	Status int    `json:"status"`
	Error  *struct {
		Code int    `json:"code"`
		Msg  string `json:"msg"`
	} `json:"error"`
}

// subscribed reads until the answer to request id: status 200 subscribes;
// any other is a refusal, returned with its status, code and message.
func subscribed(conn *websocket.Conn, id string) error {
	for range 64 { // events of an earlier subscription may come first
		_, msg, err := conn.ReadMessage()
		if err != nil {
			return fmt.Errorf("user data stream: waiting for the subscription's answer: %w", err)
		}
		var ans wsAnswer
		if json.Unmarshal(msg, &ans) != nil || ans.ID != id {
			continue
		}
		if ans.Status == http.StatusOK {
			return nil
		}
		why := "no reason given"
		if ans.Error != nil {
			why = "code " + strconv.Itoa(ans.Error.Code) + ": " + ans.Error.Msg
		}
		return fmt.Errorf("user data stream: binance refused the subscription (status %d, %s)", ans.Status, why)
	}
	return errors.New("user data stream: no answer to the subscription")
}

// fromUpdate maps an executionReport. Its z (cumulative filled) and Z
// (cumulative quote) carry the incarnation's whole progress, and the
// fills of earlier incarnations are added, so a missed message loses
// nothing; its fee is the commissions booked for the order (n and N
// each trade, myTrades for any trade a missed message told). A cancel's report carries the original client id in C. A
// report of a replacement this process did not make is not known: the
// node resyncs instead.
func (a *Adapter) fromUpdate(u bn.WsOrderUpdate) (node.VenueOrder, bool) {
	cid := u.ClientOrderId
	if u.OrigCustomOrderId != "" {
		cid = u.OrigCustomOrderId
	}
	if _, repl := replacementOf(cid); repl && !a.knows(u.Id) {
		return node.VenueOrder{}, false
	}
	out := node.VenueOrder{ClientOrderID: NodeID(cid), VenueOrderID: strconv.FormatInt(u.Id, 10), Symbol: u.Symbol,
		Side: sideOf(bn.SideType(u.Side)), Type: typeOf(bn.OrderType(u.Type)), TimeInForce: tifOf(u.TimeInForce),
		Quantity: dec(u.Volume), Price: dec(u.Price), State: stateOf(bn.OrderStatusType(u.Status)), Filled: dec(u.FilledVolume),
		Reason: u.RejectReason, Updated: msTime(u.TransactionTime)}
	if out.Reason == "NONE" {
		out.Reason = ""
	}
	out.AveragePrice, out.Notional = avg(u.FilledQuoteVolume, out.Filled), dec(u.FilledQuoteVolume)
	if u.ExecutionType == "TRADE" { // the report of one fill: l and L are its own quantity and price
		out.LastQuantity, out.LastPrice = dec(u.LatestVolume), dec(u.LatestPrice)
	}
	return a.cumulative(out, u.Id), true
}
