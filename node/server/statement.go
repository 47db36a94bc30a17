package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"wicket/node"
	"wicket/node/alert"
	"wicket/node/journal"
)

// The daily statement: the node's fills, fees and funding of one UTC day
// at one venue, held against the venue's own history (a real venue's
// adapter reads it: Binance's myTrades, Alpaca's account activities),
// every difference named with both figures. Fills are compared order by
// order, through the venue's order ids the journal recorded (order_acked,
// order_modified): the node derives a fill from an order's cumulative
// change, so one node fill may be several venue trades. The node runs it
// for each venue after each UTC day and, on a mismatch, records an audit
// entry (action "statement"), which alerts.

// historian is what an adapter offers to be reconciled.
type historian interface {
	History(ctx context.Context, from, to time.Time) (node.VenueHistory, error)
}

// errNoHistory is an adapter that reads no trade history.
var errNoHistory = errors.New("this venue's adapter reads no trade history")

// History reads the adapter's history, scrubbed; errNoHistory when it
// reads none.
func (x scrubbedExchange) History(ctx context.Context, from, to time.Time) (node.VenueHistory, error) {
	h, ok := x.ex.(historian)
	if !ok {
		return node.VenueHistory{}, errNoHistory
	}
	out, err := h.History(ctx, from, to)
	return out, x.sc.Error(err)
}

// statementGrace is how long after midnight UTC the day is stated, so
// the venues' records of its last seconds are in.
const statementGrace = 10 * time.Minute

// priceTolerance is the relative difference of average prices the
// statement forgives (a node fill's price is derived from cumulative
// figures, to 10 decimals).
var priceTolerance = decimal.New(1, -6)

// ParseDay reads a YYYY-MM-DD day as its UTC midnight.
func ParseDay(s string) (time.Time, error) {
	d, err := time.ParseInLocation(time.DateOnly, s, time.UTC)
	if err != nil {
		return time.Time{}, fmt.Errorf("day %q is not YYYY-MM-DD (a UTC day, for example 2026-12-02)", s)
	}
	return d, nil
}

// nodeOrder is one node order's fills of the day, with the venue order
// ids it had.
type nodeOrder struct {
	id, clientID, symbol string
	side                 string
	venueIDs             []string
	qty, notional, fee   decimal.Decimal
	other                map[string]decimal.Decimal // fees in other assets (BNB), by asset
	fills                int
}

// venueOrder is the venue's trades of the day for one order of its own.
type venueOrder struct {
	id, symbol, side   string
	qty, notional, fee decimal.Decimal
	other              map[string]decimal.Decimal // fees in other assets (BNB), by asset
	trades             int
}

// nodeDay reads venue's fills in [from, to) from the journal, and the
// venue order ids of every order the journal knows.
func (s *Server) nodeDay(venue string, from, to time.Time) (map[string]*nodeOrder, map[string]string, decimal.Decimal, error) {
	orders := map[string]*nodeOrder{}
	funding := decimal.Zero
	byVenueID := map[string]string{} // venue order id → node order id
	err := s.j.Replay(func(ev node.Event) error {
		if ev.Venue != "" && ev.Venue != venue {
			return nil
		}
		switch ev.Kind {
		case node.EventAccepted:
			if ev.Order != nil && ev.Order.Venue == venue && ev.Order.VenueOrderID != "" {
				byVenueID[ev.Order.VenueOrderID] = ev.Order.ID
			}
		case node.EventAcked, node.EventModified:
			if ev.VenueOrderID != "" && ev.OrderID != "" {
				byVenueID[ev.VenueOrderID] = ev.OrderID
			}
		case node.EventFunding:
			if ev.Venue == venue && !ev.Time.Before(from) && ev.Time.Before(to) {
				funding = funding.Add(ev.Cash)
			}
		case node.EventFilled:
			if ev.Venue != venue || ev.Time.Before(from) || !ev.Time.Before(to) {
				return nil
			}
			o := orders[ev.OrderID]
			if o == nil {
				o = &nodeOrder{id: ev.OrderID, clientID: ev.ClientOrderID, symbol: ev.Symbol, side: string(ev.Side)}
				orders[ev.OrderID] = o
			}
			o.qty = o.qty.Add(ev.Quantity)
			o.notional = o.notional.Add(ev.Quantity.Mul(ev.Price))
			o.fee = o.fee.Add(ev.Fee)
			if ev.FeeAsset != "" {
				o.other = addAsset(o.other, ev.FeeAsset, ev.AssetFee)
			}
			o.fills++
		}
		return nil
	})
	if err != nil {
		return nil, nil, decimal.Zero, err
	}
	for vid, oid := range byVenueID {
		if o := orders[oid]; o != nil {
			o.venueIDs = append(o.venueIDs, vid)
		}
	}
	return orders, byVenueID, funding, nil
}

// Statement reconciles venue's day (its UTC midnight) as of now.
func (s *Server) Statement(ctx context.Context, venue string, day time.Time) (node.Statement, error) {
	vc, ok := s.cfg.Project.Venue(venue)
	if !ok {
		return node.Statement{}, node.Errorf(node.KindNotFound, "no_venue", "no venue %q; the node's venues are %s", venue, strings.Join(s.cfg.Project.VenueNames(), ", "))
	}
	from := time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, time.UTC)
	to := from.AddDate(0, 0, 1)
	st := node.Statement{Day: from.Format(time.DateOnly), Venue: venue, Kind: vc.Kind, Mismatches: []node.Mismatch{},
		NodeFees: decimal.Zero, VenueFees: decimal.Zero, NodeFunding: decimal.Zero, VenueFunding: decimal.Zero}
	if now := s.cfg.Now(); now.Before(to) {
		st.Note = "the day is not over yet (it ends " + to.Format(time.RFC3339) + "): this is the statement so far"
	}
	orders, byVenueID, funding, err := s.nodeDay(venue, from, to)
	if err != nil {
		return node.Statement{}, err
	}
	st.NodeFunding = funding
	for _, o := range orders {
		st.NodeFills += o.fills
		st.NodeFees = st.NodeFees.Add(o.fee)
	}
	var hist node.VenueHistory
	h, reads := s.cfg.Exchanges[venue].(historian)
	if reads && vc.Real() {
		hist, err = h.History(ctx, from, to)
	}
	if !reads || !vc.Real() || errors.Is(err, errNoHistory) {
		st.Funding = "none: a paper venue keeps no funding"
		st.Note = strings.TrimPrefix(st.Note+"; ", "; ") + "paper venue: its only record is the node's own journal, so there is no independent history to compare; the node's fills and fees are shown"
		if vc.Real() {
			st.Note, st.Funding = "this venue's adapter reads no trade history; the node's fills and fees are shown", "not compared"
		}
		return st, nil
	}
	if err != nil {
		return node.Statement{}, fmt.Errorf("venue %s: reading its trade history for %s: %w", venue, st.Day, err)
	}
	st.Independent = true
	venues := map[string]*venueOrder{}
	for _, t := range hist.Trades {
		v := venues[t.VenueOrderID]
		if v == nil {
			v = &venueOrder{id: t.VenueOrderID, symbol: t.Symbol, side: string(t.Side)}
			venues[t.VenueOrderID] = v
		}
		v.qty = v.qty.Add(t.Quantity)
		v.notional = v.notional.Add(t.Quantity.Mul(t.Price))
		v.trades++
		if t.FeeAsset != "" { // kept in its asset, as the node's journal keeps it
			v.other = addAsset(v.other, t.FeeAsset, t.Fee)
			continue
		}
		v.fee = v.fee.Add(t.Fee)
		st.VenueFees = st.VenueFees.Add(t.Fee)
	}
	st.VenueFills = len(hist.Trades)
	st.VenueFees = st.VenueFees.Add(hist.OtherFees)
	st.Mismatches = compareDay(orders, venues, byVenueID)
	if hist.OtherFees.IsPositive() { // the node books fees only with fills
		st.Mismatches = append(st.Mismatches, node.Mismatch{What: "other_fees", Node: "0", Venue: hist.OtherFees.String(),
			Text: fmt.Sprintf("the venue charged %s in fees apart from trades (regulatory or crypto fees); the node has no record of them", hist.OtherFees)})
	}
	st.Funding = "none: a spot account pays no funding"
	if hist.FundingKnown {
		st.VenueFunding = hist.Funding
		st.Funding = "matches: " + funding.String()
		if !funding.Equal(hist.Funding) {
			st.Funding = "differs"
			st.Mismatches = append(st.Mismatches, node.Mismatch{What: "funding", Node: funding.String(), Venue: hist.Funding.String(),
				Text: fmt.Sprintf("the node booked funding of %s for the day, the venue %s", funding, hist.Funding)})
		}
	}
	return st, nil
}

// compareDay names every difference between the node's orders' fills and
// the venue's trades, order by order, sorted by order.
func compareDay(orders map[string]*nodeOrder, venues map[string]*venueOrder, byVenueID map[string]string) []node.Mismatch {
	out := []node.Mismatch{}
	matched := map[string]bool{} // venue order ids compared
	ids := make([]string, 0, len(orders))
	for id := range orders {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		o := orders[id]
		v := &venueOrder{qty: decimal.Zero, notional: decimal.Zero, fee: decimal.Zero}
		found := false
		for _, vid := range o.venueIDs {
			if vo := venues[vid]; vo != nil {
				found = true
				matched[vid] = true
				v.id = vid
				v.qty, v.notional, v.fee, v.trades = v.qty.Add(vo.qty), v.notional.Add(vo.notional), v.fee.Add(vo.fee), v.trades+vo.trades
				for a, f := range vo.other {
					v.other = addAsset(v.other, a, f)
				}
				v.side = vo.side
			}
		}
		m := node.Mismatch{Order: o.id, ClientOrderID: o.clientID, VenueOrderID: strings.Join(o.venueIDs, ","), Symbol: o.symbol}
		if !found {
			m.What, m.Node, m.Venue = "missing_at_venue", o.qty.String()+" @ "+avg(o.notional, o.qty).String(), ""
			m.Text = fmt.Sprintf("order %s (%s %s %s): the node recorded %d fill(s) of %s at %s; the venue's history has no trade of it that day",
				o.id, o.side, o.qty, o.symbol, o.fills, o.qty, avg(o.notional, o.qty))
			out = append(out, m)
			continue
		}
		if !o.qty.Equal(v.qty) {
			mm := m
			mm.What, mm.Node, mm.Venue = "quantity", o.qty.String(), v.qty.String()
			mm.Text = fmt.Sprintf("order %s (%s): the node filled %s, the venue traded %s", o.id, o.symbol, o.qty, v.qty)
			out = append(out, mm)
		}
		if np, vp := avg(o.notional, o.qty), avg(v.notional, v.qty); vp.IsPositive() && np.Sub(vp).Abs().GreaterThan(vp.Mul(priceTolerance)) {
			mm := m
			mm.What, mm.Node, mm.Venue = "price", np.String(), vp.String()
			mm.Text = fmt.Sprintf("order %s (%s): the node's average fill price is %s, the venue's %s", o.id, o.symbol, np, vp)
			out = append(out, mm)
		}
		if v.side != "" && o.side != "" && v.side != o.side {
			mm := m
			mm.What, mm.Node, mm.Venue = "side", o.side, v.side
			mm.Text = fmt.Sprintf("order %s (%s): the node recorded a %s, the venue a %s", o.id, o.symbol, o.side, v.side)
			out = append(out, mm)
		}
		if !o.fee.Equal(v.fee) {
			mm := m
			mm.What, mm.Node, mm.Venue = "fee", o.fee.String(), v.fee.String()
			mm.Text = fmt.Sprintf("order %s (%s): the node booked a fee of %s, the venue charged %s", o.id, o.symbol, o.fee, v.fee)
			out = append(out, mm)
		}
		out = append(out, assetFeeMismatches(m, o, v)...)
	}
	vids := make([]string, 0, len(venues))
	for vid := range venues {
		if !matched[vid] {
			vids = append(vids, vid)
		}
	}
	slices.Sort(vids)
	for _, vid := range vids {
		v := venues[vid]
		m := node.Mismatch{What: "missing_in_node", VenueOrderID: vid, Symbol: v.symbol, Order: byVenueID[vid], Node: "", Venue: v.qty.String() + " @ " + avg(v.notional, v.qty).String()}
		who := "an order the node never placed"
		if m.Order != "" {
			who = "the node's order " + m.Order + ", which has no fill that day in the node's journal"
		}
		m.Text = fmt.Sprintf("venue order %s (%s %s %s): the venue traded %s at %s in %d trade(s); it is %s", vid, v.side, v.qty, v.symbol, v.qty, avg(v.notional, v.qty), v.trades, who)
		out = append(out, m)
	}
	return out
}

// addAsset adds fee f in asset a to m (made when nil).
func addAsset(m map[string]decimal.Decimal, a string, f decimal.Decimal) map[string]decimal.Decimal {
	if m == nil {
		m = map[string]decimal.Decimal{}
	}
	m[a] = m[a].Add(f)
	return m
}

// assetFeeMismatches names each other asset (BNB) whose fees the node
// booked for order o other than the venue charged, asset by asset.
func assetFeeMismatches(m node.Mismatch, o *nodeOrder, v *venueOrder) []node.Mismatch {
	var assets []string
	for a := range o.other {
		assets = append(assets, a)
	}
	for a := range v.other {
		if _, ok := o.other[a]; !ok {
			assets = append(assets, a)
		}
	}
	slices.Sort(assets)
	var out []node.Mismatch
	for _, a := range assets {
		nf, vf := o.other[a], v.other[a]
		if nf.Equal(vf) {
			continue
		}
		mm := m
		mm.What, mm.Node, mm.Venue = "fee", nf.String()+" "+a, vf.String()+" "+a
		mm.Text = fmt.Sprintf("order %s (%s): the node booked a fee of %s %s, the venue charged %s %s", o.id, o.symbol, nf, a, vf, a)
		out = append(out, mm)
	}
	return out
}

func avg(notional, qty decimal.Decimal) decimal.Decimal {
	if qty.IsZero() {
		return decimal.Zero
	}
	return notional.DivRound(qty, 8)
}

// statementGet serves GET /v1/statement?day=YYYY-MM-DD[&venue=NAME]: the
// statement of each venue (or the one named), as {"statements": [...]}.
func (s *Server) statementGet(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	day, err := ParseDay(q.Get("day"))
	if err != nil {
		writeError(w, node.Errorf(node.KindBadRequest, "bad_day", "%v", err))
		return
	}
	names := s.cfg.Project.VenueNames()
	if v := q.Get("venue"); v != "" {
		names = []string{v}
	}
	out := []node.Statement{}
	for _, name := range names {
		st, err := s.Statement(r.Context(), name, day)
		if err != nil {
			if ne, ok := err.(*node.Error); ok {
				writeError(w, ne)
				return
			}
			writeError(w, node.Errorf(node.KindUnavailable, "venue_history", "%v", err))
			return
		}
		out = append(out, st)
	}
	writeJSON(w, http.StatusOK, map[string]any{"statements": out})
}

// startStatements runs each real venue's statement after each UTC day:
// at every StatementTicks tick (default: every 5 minutes), the day before
// the one now (less statementGrace) is stated once per venue. A mismatch
// is recorded in the audit trail, which alerts.
func (s *Server) startStatements() {
	ticks := s.cfg.StatementTicks
	var stop func()
	if ticks == nil {
		t := time.NewTicker(5 * time.Minute)
		ticks, stop = t.C, t.Stop
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if stop != nil {
			defer stop()
		}
		done := map[string]bool{} // venue/day stated
		for {
			select {
			case <-s.bg.Done():
				return
			case <-ticks:
			}
			day := s.cfg.Now().UTC().Add(-statementGrace).AddDate(0, 0, -1)
			for _, vc := range s.cfg.Project.Venues {
				key := vc.Name + "/" + day.Format(time.DateOnly)
				if !vc.Real() || done[key] {
					continue
				}
				if err := s.runStatement(vc.Name, day); err != nil {
					s.log.Warn("daily statement not made; it is tried again at the next tick", "venue", vc.Name, "day", day.Format(time.DateOnly), "err", err)
					continue
				}
				done[key] = true
			}
		}
	}()
}

// runStatement states venue's day and, on a mismatch, records it in the
// audit trail (which raises the alert).
func (s *Server) runStatement(venue string, day time.Time) error {
	ctx, cancel := context.WithTimeout(s.bg, 4*s.cfg.VenueTimeout)
	defer cancel()
	st, err := s.Statement(ctx, venue, day)
	if err != nil {
		return err
	}
	if len(st.Mismatches) == 0 {
		s.log.Info("daily statement matches the venue", "venue", venue, "day", st.Day, "fills", st.NodeFills, "venue_fills", st.VenueFills)
		return nil
	}
	if done, err := s.stated(venue, st.Day, day); err != nil || done {
		return err // recorded before this start: not again
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s%d mismatch(es) against the venue's history: ", statementNote(st.Day), len(st.Mismatches))
	for i, m := range st.Mismatches {
		if i == 3 {
			fmt.Fprintf(&b, "; and %d more (wicket node statement --day %s --venue %s)", len(st.Mismatches)-3, st.Day, venue)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(m.Text)
	}
	var cerr error
	derr := s.do(ctx, func() {
		now := s.cfg.Now()
		entry := node.AuditEntry{Time: now, Ticket: s.cfg.NewID(), KeyID: node.KeyNode,
			Arming:  &node.ArmingChange{Action: alert.StatementAction, Venue: venue, Environment: s.environment(venue), Note: b.String()},
			Outcome: node.Outcome{Status: node.Accepted, Time: now, Detail: b.String()}}
		cerr = s.commit(&journal.Batch{Audit: []node.AuditEntry{entry}})
	})
	if derr != nil {
		return derr
	}
	return cerr
}

// statementNote starts the note of a statement entry.
func statementNote(day string) string { return "statement of " + day + ": " }

// stated reports whether the audit trail holds venue's statement entry
// for day (recorded after the day ended, by an earlier start).
func (s *Server) stated(venue, dayName string, day time.Time) (bool, error) {
	q := node.AuditQuery{Since: day.AddDate(0, 0, 1), Limit: journal.MaxAuditLimit}
	for {
		page, err := s.j.Audit(q)
		if err != nil {
			return false, err
		}
		for _, e := range page.Entries {
			if e.Arming != nil && e.Arming.Action == alert.StatementAction && e.Arming.Venue == venue && strings.HasPrefix(e.Arming.Note, statementNote(dayName)) {
				return true, nil
			}
		}
		if !page.More {
			return false, nil
		}
		q.Since, q.After = time.Time{}, page.Next
	}
}

// environment is venue's environment as wicket.toml sets it.
func (s *Server) environment(venue string) string {
	if vc, ok := s.cfg.Project.Venue(venue); ok {
		return vc.Environment
	}
	return ""
}
