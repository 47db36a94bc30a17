package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"wicket/internal/project"
	"wicket/node"
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
// loadSecrets resolves for the project (environment first), or from the
// environment alone when no project is found.
func traceNodeAudit(c *cli.Context, addr string) (traceAudit, error) {
	var proj *project.Project
	where := "the environment"
	if p, _, err := openProject(c); err == nil {
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
