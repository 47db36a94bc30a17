package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"wicket/cmd/wicket/internal/trade"
	"wicket/internal/project"
	"wicket/node"
	"wicket/node/command"
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
	return fmt.Sprintf("%d audit %s for %s (below)", len(entries), noun, clientOrderID),
		func(w io.Writer) error { return printTraceNodeAudit(w, entries) }
}

// printTraceNodeAudit writes the node's audit entries for an order as a
// table: what was commanded, under which key, what came of it and why.
func printTraceNodeAudit(w io.Writer, entries []node.AuditEntry) error {
	tw := traceTable(w)
	fmt.Fprintln(tw, "NODE SEQ\tTIME\tKEY\tTICKET\tCOMMAND\tOUTCOME\tREASON")
	for _, e := range entries {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Seq, traceStamp(e.Time), traceDash(e.KeyID), traceDash(e.Ticket),
			traceNodeCommand(e.Command), traceNodeOutcome(e.Outcome), traceDash(traceOneLine(e.Reason)))
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
