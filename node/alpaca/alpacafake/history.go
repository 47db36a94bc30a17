package alpacafake

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// activity is one account activity as GET /v2/account/activities lists
// it: a FILL (trade activity) or a FEE (non-trade activity).
type activity struct {
	id, kind, fillType string
	at                 time.Time
	orderID, symbol    string
	side               string
	qty, price, cumQty decimal.Decimal
	net                decimal.Decimal // a FEE's net_amount (negative: charged)
	status             string
}

// recordFill records a FILL activity of o's fill (f.mu held).
func (f *Fake) recordFill(o *Order, event string, qty, price decimal.Decimal) {
	at := time.Now().UTC()
	f.acts = append(f.acts, activity{id: fmt.Sprintf("%s::%08d", at.Format("20060102150405000"), len(f.acts)+1), kind: "FILL", fillType: event,
		at: at, orderID: o.ID, symbol: o.Symbol, side: o.Side, qty: qty, price: price, cumQty: o.Filled, status: o.Status})
}

// activities implements GET /v2/account/activities as the "Account
// Activities" page documents it: activity_types (comma-separated), after
// and until (timestamps; after is exclusive), date (one day), direction
// (asc or desc, default desc), page_size (default and at most 100) and
// page_token (the id of the last activity of the previous page).
func (f *Fake) activities(q url.Values) (int, any) {
	var types []string
	if v := q.Get("activity_types"); v != "" {
		types = strings.Split(v, ",")
	}
	parse := func(k string) (time.Time, bool) {
		v := q.Get(k)
		if v == "" {
			return time.Time{}, true
		}
		t, err := time.Parse(time.RFC3339Nano, v)
		return t, err == nil
	}
	after, ok1 := parse("after")
	until, ok2 := parse("until")
	day, ok3 := parse("date")
	if !ok1 || !ok2 || !ok3 {
		return 422, apiErr(40010001, "invalid date format")
	}
	if !day.IsZero() && (!after.IsZero() || !until.IsZero()) {
		return 422, apiErr(40010001, "date cannot be used with after or until")
	}
	size := 100
	if v := q.Get("page_size"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return 422, apiErr(40010001, "invalid page_size")
		}
		size = min(n, 100)
	}
	list := slices.Clone(f.acts)
	if q.Get("direction") != "asc" {
		slices.Reverse(list)
	}
	if tok := q.Get("page_token"); tok != "" {
		i := slices.IndexFunc(list, func(a activity) bool { return a.id == tok })
		if i < 0 {
			return 422, apiErr(40010001, "invalid page_token")
		}
		list = list[i+1:]
	}
	out := []map[string]any{}
	for _, a := range list {
		switch {
		case len(types) > 0 && !slices.Contains(types, a.kind),
			!after.IsZero() && !a.at.After(after),
			!until.IsZero() && a.at.After(until),
			!day.IsZero() && a.at.Format(time.DateOnly) != day.UTC().Format(time.DateOnly):
			continue
		}
		if len(out) == size {
			break
		}
		if a.kind == "FILL" {
			out = append(out, map[string]any{"id": a.id, "activity_type": "FILL", "transaction_time": a.at, "type": a.fillType,
				"price": a.price.String(), "qty": a.qty.String(), "side": a.side, "symbol": a.symbol, "leaves_qty": "0",
				"order_id": a.orderID, "cum_qty": a.cumQty.String(), "order_status": a.status})
			continue
		}
		out = append(out, map[string]any{"id": a.id, "activity_type": a.kind, "date": a.at.Format(time.DateOnly), "net_amount": a.net.String(),
			"description": "regulatory fee", "status": "executed"})
	}
	return 200, out
}

// ChargeFee records a FEE activity of amount (positive: charged) at.
func (f *Fake) ChargeFee(amount string, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.acts = append(f.acts, activity{id: fmt.Sprintf("%s::%08d", at.Format("20060102150405000"), len(f.acts)+1), kind: "FEE", at: at.UTC(),
		net: decimal.RequireFromString(amount).Neg()})
}

// AddFill records a FILL activity of an order the node never placed, at.
func (f *Fake) AddFill(symbol, side, qty, price string, at time.Time) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	id := fmt.Sprintf("61e69015-8549-4bfd-b9c3-%012d", f.seq)
	q := decimal.RequireFromString(qty)
	f.acts = append(f.acts, activity{id: fmt.Sprintf("%s::%08d", at.Format("20060102150405000"), len(f.acts)+1), kind: "FILL", fillType: "fill",
		at: at.UTC(), orderID: id, symbol: symbol, side: side, qty: q, price: decimal.RequireFromString(price), cumQty: q, status: "filled"})
	return id
}

// DateActivities moves every activity to the time at.
func (f *Fake) DateActivities(at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.acts {
		f.acts[i].at = at.UTC()
	}
}
