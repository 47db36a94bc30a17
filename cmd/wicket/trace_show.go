package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"wicket/deploy"
	"wicket/trace"
)

func traceShow(ctx context.Context, o *traceOptions, args []string) error {
	arg := args[0]
	if strings.HasPrefix(arg, deploy.IDPrefix) { // a deployment (trace_deploy.go)
		return traceShowDeployment(ctx, o, arg)
	}
	if seq, err := strconv.ParseInt(arg, 10, 64); err == nil {
		return traceShowSeq(o, seq)
	}
	return traceShowToken(ctx, o, arg)
}

func traceShowSeq(o *traceOptions, seq int64) error {
	all, err := o.read(o.filter)
	if err != nil {
		return err
	}
	var hits []trace.Entry
	sessions := map[string]bool{}
	for _, e := range all {
		if e.Seq == seq {
			hits = append(hits, e)
			sessions[e.Session] = true
		}
	}
	switch {
	case len(hits) == 0:
		return fmt.Errorf("no entry with seq %d in %s%s; list entries with `wicket trace list` (a token prefix of digits only reads as a seq: give more of the token)", seq, o.dir, o.scope())
	case len(sessions) > 1:
		var list []string
		for _, e := range hits {
			list = append(list, e.Session)
		}
		return usagef("seq %d appears in %d sessions (%s); pick one with --session ID", seq, len(sessions), strings.Join(list, ", "))
	}
	if o.json {
		return writeJSON(o.stdout, hits[0])
	}
	for i, e := range hits {
		if i > 0 {
			fmt.Fprintln(o.stdout)
		}
		if err := tracePrintEntry(o.stdout, e); err != nil {
			return err
		}
	}
	return nil
}

// scope describes the filters show applied, for its not-found message.
func (o *traceOptions) scope() string {
	var s []string
	if o.filter.Session != "" {
		s = append(s, "session "+o.filter.Session)
	}
	if !o.filter.Since.IsZero() {
		s = append(s, "since "+traceStamp(o.filter.Since))
	}
	if !o.filter.Until.IsZero() {
		s = append(s, "until "+traceStamp(o.filter.Until))
	}
	if len(s) == 0 {
		return ""
	}
	return " (" + strings.Join(s, ", ") + ")"
}

// tracePrintEntry prints one entry field by field, its arguments indented.
func tracePrintEntry(w io.Writer, e trace.Entry) error {
	tw := traceTable(w)
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "%s\t%s\n", k, v)
		}
	}
	row("ts", traceStamp(e.TS))
	row("session", e.Session)
	row("caller", e.Caller)
	row("seq", strconv.FormatInt(e.Seq, 10))
	tool := traceDash(e.Tool)
	if e.Write {
		tool += " (write)"
	}
	row("tool", tool)
	row("profile", e.Profile)
	row("denied", strings.Join(e.Denied, ", "))
	row("verdict", e.Verdict.String())
	row("token", e.Token)
	row("client_order_id", e.ClientOrderID)
	row("ticket", e.Ticket)
	row("outcome", e.Outcome)
	row("approval", e.Approval)      // --approval (agent/loop.go)
	row("approved_by", e.ApprovedBy) // operator approval
	row("error", e.Error)
	row("ms", traceMS(e.MS))
	switch {
	case e.ArgsDropped:
		row("args", "(dropped: the entry was over 64 KiB)")
	case len(e.Args) == 0:
		row("args", "(none)")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(e.Args) > 0 {
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, e.Args, "  ", "  "); err != nil {
			pretty.Reset()
			pretty.Write(e.Args)
		}
		fmt.Fprintf(w, "args:\n  %s\n", pretty.String())
	}
	if e.Token != "" {
		fmt.Fprintf(w, "token chain: wicket trace show %s\n", e.Token)
	}
	return nil
}

// traceChainView is a token's chain as show prints it, with the node's audit
// record when a node was asked.
type traceChainView struct {
	trace.Chain
	Node json.RawMessage `json:"node,omitempty"`
}

func traceShowToken(ctx context.Context, o *traceOptions, token string) error {
	f := o.filter
	f.Token = token
	entries, err := o.read(f)
	if err != nil {
		return err
	}
	chains := trace.Chains(entries)
	switch {
	case len(chains) == 0:
		return fmt.Errorf("no entry carries a preview token %q in %s%s; tokens appear in `wicket trace list --verdict preview`", token, o.dir, o.scope())
	case len(chains) > 1:
		var list []string
		for _, c := range chains {
			list = append(list, c.Token)
		}
		return usagef("%q is a prefix of %d tokens (%s); give more of it", token, len(chains), strings.Join(list, ", "))
	}
	v := traceChainView{Chain: chains[0]}
	if o.node != nil && v.State == "confirmed" && v.ClientOrderID != "" {
		raw, err := traceOrderAudit(ctx, o.node, v.ClientOrderID, traceLegIDs(v.Chain)) // trace_node.go
		if err != nil {
			return fmt.Errorf("node audit for %s: %w", v.ClientOrderID, err)
		}
		v.Node = raw
	}
	if o.json {
		return writeJSON(o.stdout, v)
	}
	tw := traceTable(o.stdout)
	fmt.Fprintf(tw, "token\t%s\n", v.Token)
	fmt.Fprintf(tw, "tool\t%s\n", traceDash(v.Tool))
	if v.ClientOrderID != "" {
		fmt.Fprintf(tw, "client_order_id\t%s\n", v.ClientOrderID)
	}
	fmt.Fprintf(tw, "state\t%s\n", traceChainState(v.Chain))
	var printAudit func(io.Writer) error // the node's entries, below the chain
	if o.node != nil {
		row := "no audit record for this client order id"
		if v.State != "confirmed" {
			row = "not asked: nothing was sent"
		} else if len(v.Node) > 0 {
			row, printAudit = traceNodeSummary(v.Node, v.ClientOrderID)
		}
		fmt.Fprintf(tw, "node\t%s\n", row)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(o.stdout)
	short := traceShortener(v.Entries)
	tw = traceTable(o.stdout)
	fmt.Fprintln(tw, "STEP\tTIME\tSESSION\tSEQ\tVERDICT\tMS\tDETAIL")
	for _, e := range v.Entries {
		d := traceDetail(e, short)
		if e.Verdict == trace.Preview {
			d = traceArgs(e) // the preview's command is what the chain is about
			if trace.PreviewFailed(e) {
				d = "checks failed (" + e.Outcome + "): " + d
			}
		}
		// The whole session id: a chain shows one or two, and a prefix of a
		// time-ordered id is shared by every session of the same minute.
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", trace.Step(e), traceStamp(e.TS), traceDash(e.Session), e.Seq,
			e.Verdict, traceMS(e.MS), d)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if printAudit == nil {
		return nil
	}
	fmt.Fprintln(o.stdout)
	return printAudit(o.stdout)
}

// traceChainState says in words what became of a token.
func traceChainState(c trace.Chain) string {
	switch c.State {
	case "confirmed":
		s := "confirmed"
		if c.Outcome != "" {
			s += ": " + c.Outcome
		}
		if c.Ticket != "" {
			s += " (ticket " + c.Ticket + ")"
		}
		return s
	case "previewed":
		return "previewed, never confirmed: nothing was sent"
	case "refused":
		return "confirm refused: nothing was sent"
	case "error":
		return "confirm failed (see the error below)"
	}
	return c.State
}
