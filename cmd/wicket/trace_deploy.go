package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"time"

	"wicket/deploy"
	"wicket/node"
	"wicket/trace"
)

// `wicket trace show dep-... --node H:P` joins a deployment with what
// the trace and the node hold of it: the deployment's orders (its
// intents, by client order id) with the node's audit entries of each,
// and the trace's calls that named the deployment (stop_deployment,
// deployment_report).

// traceDeployments is the node view trace show needs for a deployment
// (nodeAudit has it).
type traceDeployments interface {
	Deployment(ctx context.Context, id string) (deploy.Detail, error)
}

// Deployment reads one deployment with its latest decisions and orders.
func (a nodeAudit) Deployment(ctx context.Context, id string) (deploy.Detail, error) {
	var d deploy.Detail
	cctx, cancel := context.WithTimeout(ctx, nodeCallTimeout)
	defer cancel()
	err := a.c.DeploymentsGet(cctx, "/"+url.PathEscape(id), nil, &d)
	return d, err
}

// traceDeploymentView is trace show's answer for a deployment (--json).
type traceDeploymentView struct {
	Deployment deploy.Deployment          `json:"deployment"`
	Orders     []traceDeploymentOrder     `json:"orders"`
	Entries    []trace.Entry              `json:"entries"`
	Node       map[string]json.RawMessage `json:"node,omitempty"`
}

type traceDeploymentOrder struct {
	deploy.Intent
	AuditEntries int `json:"audit_entries"`
}

func traceShowDeployment(ctx context.Context, o *traceOptions, id string) error {
	dn, ok := o.node.(traceDeployments)
	if !ok {
		return usagef("trace show %s: a deployment's orders are the node's: add --node HOST:PORT", id)
	}
	det, err := dn.Deployment(ctx, id)
	if err != nil {
		return fmt.Errorf("node deployment %s: %w", id, err)
	}
	all, err := o.read(o.filter)
	if err != nil && !errors.Is(err, fs.ErrNotExist) { // no trace yet: the node's side alone
		return err
	}
	var entries []trace.Entry
	needle := []byte(`"` + id + `"`)
	for _, e := range all {
		if bytes.Contains(e.Args, needle) {
			entries = append(entries, e)
		}
	}
	ids := make([]string, 0, len(det.Intents))
	for _, in := range det.Intents {
		ids = append(ids, in.ClientOrderID)
	}
	recs, err := o.node.Audit(ctx, ids)
	if err != nil {
		return fmt.Errorf("node audit of deployment %s's orders: %w", id, err)
	}
	v := traceDeploymentView{Deployment: det.Deployment, Entries: entries, Node: recs, Orders: []traceDeploymentOrder{}}
	for _, in := range det.Intents {
		var list []node.AuditEntry
		_ = json.Unmarshal(recs[in.ClientOrderID], &list)
		v.Orders = append(v.Orders, traceDeploymentOrder{Intent: in, AuditEntries: len(list)})
	}
	if o.json {
		return writeJSON(o.stdout, v)
	}
	d := det.Deployment
	tw := traceTable(o.stdout)
	fmt.Fprintf(tw, "deployment\t%s\n", d.ID)
	fmt.Fprintf(tw, "strategy\t%s sha256 %s on %s at venue %s, mode %s\n", d.Strategy, short(d.StrategyHash), d.Series, d.Venue, d.Mode)
	fmt.Fprintf(tw, "state\t%s %s\n", d.State, d.Reason)
	fmt.Fprintf(tw, "orders\t%d (the latest, at most 50)\n", len(v.Orders))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(o.stdout)
	tw = traceTable(o.stdout)
	fmt.Fprintln(tw, "CLIENT ORDER ID\tBAR\tSIDE\tQUANTITY\tSTATUS\tNODE\tNOTE")
	for _, or := range v.Orders {
		nodeRow := "not at the node"
		if or.AuditEntries > 0 {
			nodeRow = fmt.Sprintf("%d audit entries", or.AuditEntries)
			if or.AuditEntries == 1 {
				nodeRow = "1 audit entry"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", or.ClientOrderID, or.Bar.UTC().Format(time.RFC3339), or.Side, or.Quantity, or.Status, nodeRow, traceDash(or.Note))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(entries) == 0 {
		return nil
	}
	fmt.Fprintln(o.stdout)
	short := traceShortener(entries)
	tw = traceTable(o.stdout)
	fmt.Fprintln(tw, "TIME\tSESSION\tSEQ\tTOOL\tVERDICT\tMS\tDETAIL")
	for _, e := range entries {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", traceStamp(e.TS), traceDash(e.Session), e.Seq, e.Tool, e.Verdict, traceMS(e.MS), traceDetail(e, short))
	}
	return tw.Flush()
}
