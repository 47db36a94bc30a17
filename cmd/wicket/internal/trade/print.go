package trade

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"wicket/node"
	"wicket/node/command"
)

// tradeCommandValues lists a command's set fields in the verb's display order,
// with the values exactly as they travel (the wire JSON).
func tradeCommandValues(c command.Command) [][2]string {
	sp, ok := command.Lookup(c.Verb)
	if !ok {
		return nil
	}
	var wire map[string]string
	if err := json.Unmarshal([]byte(c.String()), &wire); err != nil {
		return nil
	}
	var out [][2]string
	for _, f := range sp.Fields {
		if v, set := wire[f.Name]; set {
			out = append(out, [2]string{f.Name, v})
		}
	}
	return out
}

// tradeBoth is sym with the venue's own spelling after it when the
// previewed venue spells it another way: BTC-USD (BTCUSDT).
func tradeBoth(p tradePreview, sym string) string {
	for _, v := range p.Venues {
		if sp, ok := v.Spellings[sym]; ok && v.Name == p.Command.Venue {
			return sp.Canonical + " (" + sp.Venue + ")"
		}
	}
	return sym
}

// printTradePreview writes the resolved command, the guardrail's checks with
// their numbers, and the node's dry-run verdict.
func printTradePreview(w io.Writer, p tradePreview) {
	if a := p.Attention(); a != "" {
		fmt.Fprintf(w, "%s\n", a)
	}
	fmt.Fprintf(w, "preview: %s\n", p.Command.Verb)
	vals := tradeCommandValues(p.Command)
	if len(vals) == 0 {
		fmt.Fprintf(w, "  (no fields)\n")
	}
	for _, kv := range vals {
		if kv[0] == "symbol" {
			kv[1] = tradeBoth(p, kv[1])
		}
		fmt.Fprintf(w, "  %-16s %s\n", kv[0], kv[1])
	}
	if p.Reason != "" {
		fmt.Fprintf(w, "  %-16s %s\n", "reason", p.Reason)
	}
	if p.Command.Verb == command.SubmitOrder && p.Command.Type.Compound() {
		legs := p.Command.Legs()
		fmt.Fprintf(w, "legs: %d orders, one command, confirmed together\n", len(legs))
		for _, l := range legs {
			fmt.Fprintf(w, "  %-12s %s\n", l.Name, tradeDescribeLeg(l))
		}
	}
	failed := len(p.Guardrail.Failed())
	switch failed {
	case 0:
		fmt.Fprintf(w, "guardrail: all checks passed\n")
	case 1:
		fmt.Fprintf(w, "guardrail: 1 check failed\n")
	default:
		fmt.Fprintf(w, "guardrail: %d checks failed\n", failed)
	}
	for _, ch := range p.Guardrail.Checks {
		mark := "ok"
		if !ch.OK {
			mark = "FAIL"
		}
		name := ch.Name
		if ch.Leg != "" {
			name = ch.Leg + "/" + ch.Name
		}
		fmt.Fprintf(w, "  %-4s  %-18s %s\n", mark, name, ch.Detail)
	}
	switch v := p.DryRun; {
	case v == nil:
		fmt.Fprintf(w, "node dry run: not available\n")
	case v.WouldAccept:
		fmt.Fprintf(w, "node dry run: would accept (trading state %s)\n", v.TradingState)
	default:
		fmt.Fprintf(w, "node dry run: would reject: %s%s\n", v.Reason, tradeCodeSuffix(v.Code))
		if v.ExistingOrder != nil {
			fmt.Fprintf(w, "  existing order: %s\n", tradeDescribeOrder(*v.ExistingOrder))
		}
	}
	for _, n := range p.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	// A failed guardrail carries its own note; a dry run that rejects
	// what the guardrail passed gets this line.
	if failed == 0 && p.DryRun != nil && !p.DryRun.WouldAccept {
		fmt.Fprintf(w, "warning: the node is expected to reject this command as it stands\n")
	}
}

// printTradeOutcome writes what came of a send, one line, plus the existing
// order of a duplicate.
func printTradeOutcome(w io.Writer, o tradeOutcome) {
	var ids []string
	if o.Ticket != "" {
		ids = append(ids, "ticket "+o.Ticket)
	}
	if o.ClientOrderID != "" {
		ids = append(ids, "client_order_id "+o.ClientOrderID)
	}
	head := o.Status
	if len(ids) > 0 {
		head += " (" + strings.Join(ids, ", ") + ")"
	}
	switch o.Status {
	case string(node.Accepted):
		detail := o.Detail
		if detail == "" && o.OrderID != "" {
			detail = "order " + o.OrderID
		}
		if detail == "" {
			detail = "done"
		}
		fmt.Fprintf(w, "%s: %s\n", head, detail)
	case string(node.Rejected):
		fmt.Fprintf(w, "%s: %s%s\n", head, o.Reason, tradeCodeSuffix(o.Code))
		if o.ExistingOrder != nil {
			fmt.Fprintf(w, "  existing order: %s\n", tradeDescribeOrder(*o.ExistingOrder))
		}
	default:
		fmt.Fprintf(w, "%s: %s\n", head, o.Advice)
	}
}

func tradeCodeSuffix(code string) string {
	if code == "" {
		return ""
	}
	return " [" + code + "]"
}

// tradeDescribeOrder is one order on one line.
func tradeDescribeOrder(o node.Order) string {
	s := fmt.Sprintf("%s %s %s %s %s %s", o.ID, o.Status, o.Type, o.Side, o.Quantity, o.Symbol)
	if !o.Price.IsZero() {
		s += " @ " + o.Price.String()
	}
	if o.ClientOrderID != "" {
		s += " (" + o.ClientOrderID + ")"
	}
	return s
}

// tradeDescribeLeg is one leg of a compound command on one line: what it
// places, at which prices, under which client order id, and when it works.
func tradeDescribeLeg(l command.Leg) string {
	c := l.Command
	s := fmt.Sprintf("%s %s %s %s", c.Type, c.Side, c.Quantity, c.Symbol)
	if !c.StopPrice.IsZero() {
		s += " stop " + c.StopPrice.String()
	}
	switch {
	case !c.LimitPrice.IsZero():
		s += " limit " + c.LimitPrice.String()
	case !c.Price.IsZero():
		s += " @ " + c.Price.String()
	}
	if c.ClientOrderID != "" {
		s += " (" + c.ClientOrderID + ")"
	}
	if l.Exit {
		s += ", inactive until the entry fills, then sized to its fill"
	}
	return s
}
