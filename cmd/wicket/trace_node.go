package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"wicket/cmd/wicket/internal/trade"
	"wicket/internal/project"
	"wicket/node"
	"wicket/node/command"
	"wicket/trace"
)

// traceNodeFlag is `--node HOST:PORT`: join confirmed writes with that
// node's audit trail.
func traceNodeFlag() cli.Flag {
	return &cli.StringFlag{Name: "node", Usage: "join a confirmed write with the audit trail of the node at `HOST:PORT` " +
		"(keys from the environment, then the project's settings/secrets.env)"}
}

// nodeAudit is the trace commands' view of a node: its audit entries by
// client order id.
type nodeAudit struct{ c *node.Client }

var _ traceAudit = nodeAudit{}

// Audit returns, for each client order id the node knows, the JSON array of
// its audit entries (every command that named the order, oldest first:
// key id, reason, command and outcome).
func (a nodeAudit) Audit(ctx context.Context, ids []string) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	for _, id := range ids {
		var entries []node.AuditEntry
		for q := (node.AuditQuery{ClientOrderID: id, Limit: 1000}); ; {
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			page, err := a.c.Audit(cctx, q)
			cancel()
			if err != nil {
				return nil, err
			}
			entries = append(entries, page.Entries...)
			if !page.More {
				break
			}
			q.After = page.Next
		}
		if len(entries) == 0 {
			continue
		}
		raw, err := json.Marshal(entries)
		if err != nil {
			return nil, err
		}
		out[id] = raw
	}
	return out, nil
}

// traceNodeAudit connects to the node at addr for reads, with the keys that
// loadSecrets resolves for the project projectFlag names (environment first), or from the
// environment alone when no project is found.
func traceNodeAudit(projectFlag, addr string) (traceAudit, error) {
	var proj *project.Project
	where := "the environment"
	if p, _, err := openProjectAt(projectFlag); err == nil {
		proj = &p
		where = "the environment or " + p.SecretsPath()
	}
	s, err := loadSecrets(proj)
	if err != nil {
		return nil, err
	}
	// Reads only: the observe key when there is one; otherwise the
	// control key, which the client then signs its reads with (under its
	// own key id). nodeAudit never writes.
	observe, _, hasObserve := s.Lookup(project.KeyObserve)
	control, _, hasControl := s.Lookup(project.KeyControl)
	switch {
	case hasObserve:
		control = ""
	case !hasControl:
		return nil, fmt.Errorf("--node %s: no node key: set %s (or %s) in %s", addr, project.KeyObserve, project.KeyControl, where)
	}
	cl, err := node.NewClient(addr, observe, control)
	if err != nil {
		return nil, usageError{fmt.Errorf("--node: %w", err)}
	}
	return nodeAudit{cl}, nil
}

// traceLegIDs are the client order ids of the legs of the compound order
// (oco, bracket) chain c submitted: a command on a leg (a modify of the
// stop-loss) is in the node's audit trail under the leg's id.
func traceLegIDs(c trace.Chain) []string {
	for _, e := range c.Entries {
		var args struct {
			Type command.OrderType `json:"type"`
		}
		if e.Tool != string(command.SubmitOrder) || json.Unmarshal(e.Args, &args) != nil {
			continue
		}
		switch args.Type {
		case command.OCO:
			return []string{c.ClientOrderID + command.StopLegSuffix}
		case command.Bracket:
			return []string{c.ClientOrderID + command.TakeProfitLegSuffix, c.ClientOrderID + command.StopLegSuffix}
		}
	}
	return nil
}

// traceOrderAudit is the node's audit entries of order cid and of its
// legs, in the node's order, as one JSON array (nil when it has none).
func traceOrderAudit(ctx context.Context, a traceAudit, cid string, legs []string) (json.RawMessage, error) {
	ids := append([]string{cid}, legs...)
	recs, err := a.Audit(ctx, ids)
	if err != nil || len(legs) == 0 {
		return recs[cid], err
	}
	var all []node.AuditEntry
	for _, id := range ids {
		var entries []node.AuditEntry
		if raw := recs[id]; len(raw) > 0 {
			if err := json.Unmarshal(raw, &entries); err != nil {
				return recs[cid], nil // not audit entries: show what the node said of the order
			}
		}
		all = append(all, entries...)
	}
	if len(all) == 0 {
		return nil, nil
	}
	slices.SortFunc(all, func(x, y node.AuditEntry) int { return cmp.Compare(x.Seq, y.Seq) })
	return json.Marshal(all)
}

// traceNodeSummary is the node row of `trace show TOKEN --node`: how many
// audit entries the node holds for the order (printed below the chain).
// The second result prints the entries.
func traceNodeSummary(raw json.RawMessage, clientOrderID string) (string, func(io.Writer) error) {
	var entries []node.AuditEntry
	if err := json.Unmarshal(raw, &entries); err != nil {
		return string(raw), nil // not audit entries: show what the node said
	}
	noun := "entries"
	if len(entries) == 1 {
		noun = "entry"
	}
	of := clientOrderID
	for _, e := range entries {
		if e.ClientOrderID != "" && e.ClientOrderID != clientOrderID {
			of += " and its legs"
			break
		}
	}
	return fmt.Sprintf("%d audit %s for %s (below)", len(entries), noun, of),
		func(w io.Writer) error { return printTraceNodeAudit(w, entries, clientOrderID) }
}

// printTraceNodeAudit writes the node's audit entries for order cid (and
// its legs, each named) as a table: what was commanded, under which key,
// what came of it and why.
func printTraceNodeAudit(w io.Writer, entries []node.AuditEntry, cid string) error {
	tw := traceTable(w)
	fmt.Fprintln(tw, "NODE SEQ\tTIME\tKEY\tTICKET\tCOMMAND\tOUTCOME\tREASON")
	for _, e := range entries {
		what := traceNodeCommand(e.Command)
		if e.ClientOrderID != "" && e.ClientOrderID != cid {
			what = "leg " + e.ClientOrderID + ": " + what
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Seq, traceStamp(e.Time), traceDash(e.KeyID), traceDash(e.Ticket),
			what, traceNodeOutcome(e.Outcome), traceDash(traceOneLine(e.Reason)))
	}
	return tw.Flush()
}

// traceNodeCommand is a command in words: an order as a trader says it,
// any other verb with its fields (the client order id is the table's).
func traceNodeCommand(c command.Command) string {
	if c.Verb == command.SubmitOrder {
		s := fmt.Sprintf("%s %s %s %s %s", c.Verb, c.Side, c.Quantity, c.Symbol, c.Type)
		if !c.Price.IsZero() {
			s += " @ " + c.Price.String()
		}
		return s + " on " + c.Venue
	}
	parts := []string{string(c.Verb)}
	for _, kv := range trade.CommandValues(c) {
		if kv[0] != "client_order_id" {
			parts = append(parts, kv[0]+"="+kv[1])
		}
	}
	return strings.Join(parts, " ")
}

// traceNodeOutcome is what the node did: the status and its one-line
// detail, or the rejection's reason and code.
func traceNodeOutcome(o node.Outcome) string {
	switch {
	case o.Status == node.Rejected:
		return fmt.Sprintf("%s: %s%s", o.Status, traceOneLine(o.Reason), trade.CodeSuffix(o.Code))
	case o.Detail != "":
		return fmt.Sprintf("%s: %s", o.Status, traceOneLine(o.Detail))
	case o.OrderID != "":
		return fmt.Sprintf("%s: %s", o.Status, o.OrderID)
	}
	return traceDash(string(o.Status))
}
