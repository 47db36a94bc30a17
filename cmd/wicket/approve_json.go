package main

import (
	"context"
	"io"
	"time"

	"wicket/agent/approval"
	"wicket/deploy"
)

// `wicket approve --json`: what waits for the operator, for a script (a
// status bar, a notifier), printed once. It decides nothing, so unlike an
// approval session it reads a pipe; deciding stays at the terminal.

// approveListJSON is `wicket approve --json`.
type approveListJSON struct {
	// Commands are the confirmed writes this project's `wicket mcp
	// --approval operator` servers hold, soonest deadline first.
	Commands []approval.Waiting `json:"commands"`
	// Proposals are the node's propose-mode deployments' waiting orders.
	Proposals []proposalJSON `json:"proposals"`
	// Notes say what could not be read (a server, the node), and why.
	Notes []string `json:"notes"`
}

// proposalJSON is one waiting proposal with its deployment.
type proposalJSON struct {
	deploy.Proposal
	Deployment string `json:"deployment"`
	Strategy   string `json:"strategy"`
	Series     string `json:"series"`
}

// runApproveList prints what waits for the operator as one JSON document.
func runApproveList(ctx context.Context, o approveOptions, stdout io.Writer) error {
	p, _, err := openProjectAt(o.project)
	if err != nil {
		return err
	}
	var node deploymentsClient
	var notes []string
	if client, _, err := armClientAt(o.project, o.addr); err != nil {
		notes = append(notes, "the node's deployment proposals are not shown: "+err.Error())
	} else {
		node = client
	}
	out := approveListing(ctx, p.StateDir(), node, o.now())
	out.Notes = append(notes, out.Notes...)
	return writeJSON(stdout, out)
}

// approveListing lists what waits in the approval sockets of dir and,
// with a node, its waiting proposals; commands whose window has passed
// at now are left out, as the approval session leaves them.
func approveListing(ctx context.Context, dir string, node deploymentsClient, now time.Time) approveListJSON {
	out := approveListJSON{Commands: []approval.Waiting{}, Proposals: []proposalJSON{}, Notes: []string{}}
	waiting, errs := approval.List(ctx, dir)
	for _, w := range waiting {
		if now.Before(w.Expires) {
			out.Commands = append(out.Commands, w)
		}
	}
	for _, err := range errs {
		out.Notes = append(out.Notes, err.Error())
	}
	if node == nil {
		return out
	}
	rctx, cancel := context.WithTimeout(ctx, nodeCallTimeout)
	defer cancel()
	var list struct {
		Deployments []deploy.Deployment `json:"deployments"`
	}
	if err := node.DeploymentsGet(rctx, "", nil, &list); err != nil {
		out.Notes = append(out.Notes, "the node's deployment proposals cannot be read: "+err.Error())
		return out
	}
	for _, d := range list.Deployments {
		for _, p := range d.Proposals {
			out.Proposals = append(out.Proposals, proposalJSON{Proposal: p, Deployment: d.ID, Strategy: d.Strategy, Series: d.Series})
		}
	}
	return out
}
