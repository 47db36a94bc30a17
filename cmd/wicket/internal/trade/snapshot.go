package trade

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"wicket/node"
)

// printTradeSnapshot writes the node's state as tables: trading state, venues
// with cash and equity, positions, open orders, marks, and the recent
// events when the snapshot carries them. A symbol the venue spells its own
// way shows both spellings: BTC-USD (BTCUSDT).
func printTradeSnapshot(w io.Writer, s *node.Snapshot) error {
	fmt.Fprintf(w, "trading state: %s (as of %s)\n", s.TradingState, s.Time.UTC().Format(time.RFC3339))

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	section := func(title string, header ...string) {
		tw.Flush()
		fmt.Fprintf(w, "\n%s\n", title)
		fmt.Fprintln(tw, strings.Join(header, "\t"))
	}
	row := func(cells ...string) { fmt.Fprintln(tw, strings.Join(cells, "\t")) }

	section("venues", "VENUE", "KIND", "CURRENCY", "CASH", "EQUITY", "UNREALIZED", "REALIZED", "FEES")
	for _, v := range s.Venues {
		row(v.Name, v.Kind, v.Currency, v.Cash.String(), v.Equity.String(), v.UnrealizedPnL.String(), v.RealizedPnL.String(), v.Fees.String())
	}

	printTradeRealVenues(section, row, s)

	if fees := assetFeeRows(s); len(fees) > 0 { // fees paid in another asset (node/feeasset.go)
		section("fees paid in other assets", "VENUE", "ASSET", "PAID", "VALUE", "NOTE")
		for _, r := range fees {
			row(r...)
		}
	}

	section("positions", "VENUE", "SYMBOL", "QUANTITY", "AVG PRICE", "MARK", "VALUE", "UNREALIZED", "REALIZED")
	n := 0
	for _, v := range s.Venues {
		for _, p := range v.Positions {
			row(v.Name, v.Both(p.Symbol), p.Quantity.String(), p.AveragePrice.String(), p.Mark.String(), p.MarketValue.String(), p.UnrealizedPnL.String(), p.RealizedPnL.String())
			n++
		}
	}
	if n == 0 {
		row("(none)")
	}

	if printed := tradeUnprotected(s); len(printed) > 0 {
		section("unprotected positions (not covered in full by a stop that can fire)", "VENUE", "SYMBOL", "QUANTITY", "COVERED", "REASON")
		for _, r := range printed {
			row(r...)
		}
	}

	section("open orders", "VENUE", "ORDER", "CLIENT ORDER ID", "SYMBOL", "SIDE", "TYPE", "QUANTITY", "FILLED", "PRICE", "STOP", "TIF", "CREATED")
	n = 0
	for _, v := range s.Venues {
		for _, o := range v.OpenOrders {
			price := "-"
			if !o.Price.IsZero() {
				price = o.Price.String()
			}
			row(v.Name, o.ID, tradeDash(o.ClientOrderID), v.Both(o.Symbol), string(o.Side), string(o.Type), o.Quantity.String(), o.Filled.String(),
				price, tradeStop(o), string(o.TimeInForce), o.Created.UTC().Format(time.RFC3339))
			n++
		}
	}
	if n == 0 {
		row("(none)")
	}

	if groups := tradeGroups(s); len(groups) > 0 {
		section("groups", "VENUE", "GROUP", "TYPE", "SYMBOL", "STATE", "LEGS")
		for _, g := range groups {
			row(g...)
		}
	}

	section("marks", "VENUE", "SYMBOL", "MARK")
	for _, v := range s.Venues {
		for _, sym := range tradeMarkSymbols(v) {
			row(v.Name, v.Both(sym), v.Marks[sym].String())
		}
	}

	if len(s.Events) > 0 {
		section("recent events", "SEQ", "TIME", "KIND", "VENUE", "DETAIL")
		for _, e := range s.Events {
			row(fmt.Sprint(e.Seq), e.Time.UTC().Format(time.RFC3339), string(e.Kind), tradeDash(e.Venue), tradeEventDetail(e))
		}
	}
	return tw.Flush()
}

// tradeMarkSymbols lists a venue's marked symbols: its listed symbols first, in
// their order, then any other marked symbol sorted.
func tradeMarkSymbols(v node.Venue) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range v.Symbols {
		if _, ok := v.Marks[s]; ok && !seen[s] {
			out = append(out, s)
			seen[s] = true
		}
	}
	var rest []string
	for s := range v.Marks {
		if !seen[s] {
			rest = append(rest, s)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

func tradeEventDetail(e node.Event) string {
	var parts []string
	add := func(s string) {
		if s != "" {
			parts = append(parts, s)
		}
	}
	add(e.OrderID)
	add(e.ClientOrderID)
	add(string(e.Side))
	if !e.Quantity.IsZero() {
		add(e.Quantity.String())
	}
	add(e.Symbol)
	if !e.Price.IsZero() {
		add("@ " + e.Price.String())
	}
	if !e.Fee.IsZero() {
		add("fee " + e.Fee.String())
	}
	if e.FeeAsset != "" { // a fee paid in another asset, and its worth then (node/feeasset.go)
		add("fee " + e.AssetFee.String() + " " + e.FeeAsset + " (worth " + e.FeeValue.String() + ")")
	}
	if !e.Cash.IsZero() {
		add("cash " + e.Cash.String())
	}
	add(string(e.State))
	if e.Note != "" {
		add("(" + e.Note + ")")
	}
	return tradeDash(strings.Join(parts, " "))
}

func tradeDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// printTradeRealVenues adds, when the node has real venues, their
// environment (live is real money), arming, connection and mark source,
// the orders pending at them, and the orders there the node did not place.
func printTradeRealVenues(section func(string, ...string), row func(...string), s *node.Snapshot) {
	var real []node.Venue
	for _, v := range s.Venues {
		if v.Kind != "paper" {
			real = append(real, v)
		}
	}
	if len(real) == 0 {
		return
	}
	section("real venues", "VENUE", "KIND", "ENVIRONMENT", "ARMED UNTIL", "CONNECTION", "ACCOUNT", "MARK SOURCE")
	for _, v := range real {
		env, until := v.Environment, "disarmed"
		if env == "live" {
			env = "LIVE (real money)"
		}
		if v.Armed {
			until = v.ArmedUntil.UTC().Format(time.RFC3339)
		}
		row(v.Name, v.Kind, env, until, v.Connection, tradeDash(v.Account), v.MarkSource)
	}
	var pending, external []node.Order
	for _, v := range real {
		for _, o := range v.OpenOrders {
			if o.Status == node.OrderPending {
				pending = append(pending, o)
			}
		}
		external = append(external, v.ExternalOrders...)
	}
	if len(pending) > 0 {
		section("pending at the venue (answer lost; reconciled by client order id, never resent)", "VENUE", "ORDER", "CLIENT ORDER ID", "SYMBOL", "SIDE", "QUANTITY")
		for _, o := range pending {
			row(o.Venue, o.ID, o.ClientOrderID, o.Symbol, string(o.Side), o.Quantity.String())
		}
	}
	if len(external) > 0 {
		section("external orders (not placed by this node; untouched unless named)", "VENUE", "VENUE ORDER", "CLIENT ORDER ID", "SYMBOL", "SIDE", "QUANTITY", "PRICE")
		for _, o := range external {
			row(o.Venue, o.VenueOrderID, o.ClientOrderID, o.Symbol, string(o.Side), o.Quantity.String(), o.Price.String())
		}
	}
}

// tradeUnprotected lists the positions the snapshot marks unprotected, as
// table rows.
func tradeUnprotected(s *node.Snapshot) [][]string {
	var out [][]string
	for _, v := range s.Venues {
		for _, p := range v.Positions {
			if p.Unprotected {
				out = append(out, []string{v.Name, v.Both(p.Symbol), p.Quantity.String(), p.Covered.String(), p.UnprotectedReason})
			}
		}
	}
	return out
}

// tradeStop is an open order's trigger as the table shows it: a stop's
// price, a trailing stop's current stop and its trail, "-" for none.
func tradeStop(o node.Order) string {
	var parts []string
	if o.StopPrice.IsPositive() {
		parts = append(parts, o.StopPrice.String())
	}
	switch {
	case o.TrailPercent.IsPositive():
		parts = append(parts, "(trail "+o.TrailPercent.String()+"%)")
	case o.TrailAmount.IsPositive():
		parts = append(parts, "(trail "+o.TrailAmount.String()+")")
	}
	if o.Triggered {
		parts = append(parts, "triggered")
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

// tradeGroups lists the compound orders with a working leg, as table
// rows: each leg as name=order id (status, inactive).
func tradeGroups(s *node.Snapshot) [][]string {
	var out [][]string
	for _, v := range s.Venues {
		for _, g := range v.Groups {
			var legs []string
			for _, l := range g.Legs {
				st := string(l.Status)
				if l.Inactive {
					st += ", inactive"
				}
				legs = append(legs, fmt.Sprintf("%s=%s (%s)", l.Leg, l.OrderID, st))
			}
			out = append(out, []string{v.Name, g.ID, string(g.Type), g.Symbol, string(g.State), strings.Join(legs, " ")})
		}
	}
	return out
}

// assetFeeRows are the venues' fees paid in another asset (BNB), each in
// its own and at its worth in the venue's currency.
func assetFeeRows(s *node.Snapshot) [][]string {
	var out [][]string
	for _, v := range s.Venues {
		for _, f := range v.AssetFees {
			out = append(out, []string{v.Name, f.Asset, f.Paid.String(), f.Value.String() + " " + v.Currency, f.Note})
		}
	}
	return out
}
