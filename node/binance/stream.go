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
	"github.com/gorilla/websocket"

	"wicket/node"
)

// Stream runs the user data stream (Binance spot "User Data Streams"): a
// listen key from POST /api/v3/userDataStream, a websocket on
// <ws base>/<listen key>, a PUT keep-alive every KeepAlive, and each
// executionReport delivered as the order's new state. It returns when ctx
// ends or the stream drops; the node then resyncs over REST.
func (a *Adapter) Stream(ctx context.Context, updates func(node.VenueUpdate)) error {
	key, err := a.c.NewStartUserStreamService().Do(ctx)
	if err != nil {
		return fmt.Errorf("listen key: %w", a.classify(err))
	}
	dialer := websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	conn, resp, err := dialer.DialContext(ctx, a.wsBase+"/"+key, http.Header{})
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		return fmt.Errorf("user data stream: %w", err)
	}
	defer conn.Close()
	conn.SetReadLimit(1 << 20)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		t := time.NewTicker(a.keepAlive)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				conn.Close() // unblocks the read
				return
			case <-stop:
				return
			case <-t.C:
				kctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				kerr := a.c.NewKeepaliveUserStreamService().ListenKey(key).Do(kctx)
				cancel()
				if kerr != nil {
					conn.Close() // an expired key ends the stream; the node reconnects with a new one
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
		var head struct { // E is named so that Go's case-insensitive matching does not read it as e
			Event string `json:"e"`
			Time  int64  `json:"E"`
		}
		if json.Unmarshal(msg, &head) != nil {
			continue
		}
		switch bn.UserDataEventType(head.Event) {
		case bn.UserDataEventTypeExecutionReport:
			var u bn.WsOrderUpdate
			if err := json.Unmarshal(msg, &u); err != nil {
				continue
			}
			vo, known := a.fromUpdate(u)
			if !known {
				updates(node.VenueUpdate{Resync: true})
				continue
			}
			updates(node.VenueUpdate{Order: &vo})
		case "listenKeyExpired":
			return errors.New("listen key expired")
		}
	}
}

// fromUpdate maps an executionReport. Its z (cumulative filled) and Z
// (cumulative quote) carry the incarnation's whole progress, and the
// fills of earlier incarnations are added, so a missed message loses
// nothing. A cancel's report carries the original client id in C. A
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
	out.AveragePrice = avg(u.FilledQuoteVolume, out.Filled)
	return a.cumulative(out, u.Id), true
}
