package agent

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"wicket/deploy"
	"wicket/node"
	"wicket/strategy"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// proposalPoll is how often a watched deployment is read for proposals.
const proposalPoll = 250 * time.Millisecond

// maxProposalWatchers bounds the deployments one server watches.
const maxProposalWatchers = 20

// watchProposals starts asking the person of ctx's session about the
// proposals of deployment id; the note says what happens, or why nobody
// will be asked.
func (tb *toolbox) watchProposals(ctx context.Context, id string) string {
	srv := server.ServerFromContext(ctx)
	sess := server.ClientSessionFromContext(ctx)
	ci, ok := sess.(server.SessionWithClientInfo)
	if srv == nil || !ok || ci.GetClientCapabilities().Elicitation == nil {
		return "This client cannot be asked (no elicitation capability, or no session): the deployment's proposals wait for an operator (wicket approve) and lapse otherwise."
	}
	g := tb.deploys
	g.mu.Lock()
	if g.watching == nil {
		g.watching = map[string]bool{}
	}
	if len(g.watching) >= maxProposalWatchers {
		g.mu.Unlock()
		return fmt.Sprintf("This server already asks about %d deployments' proposals, its most: this one's wait for an operator (wicket approve).", maxProposalWatchers)
	}
	g.watching[id] = true
	g.mu.Unlock()
	wctx := srv.WithContext(context.WithoutCancel(ctx), sess)
	go func() {
		defer func() { g.mu.Lock(); delete(g.watching, id); g.mu.Unlock() }()
		tb.askProposals(wctx, srv, id)
	}()
	return "Each order this deployment proposes will be asked of you through your client; only an explicit accept sends it, once. An operator can also approve it with wicket approve."
}

// askProposals reads deployment id until it is stopped or gone, asking
// about each new proposal once.
func (tb *toolbox) askProposals(ctx context.Context, srv *server.MCPServer, id string) {
	asked := map[string]bool{}
	t := time.NewTicker(proposalPoll)
	defer t.Stop()
	for failures := 0; failures < 20; {
		var det deploy.Detail
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := tb.deployNode().DeploymentsGet(rctx, "/"+url.PathEscape(id), nil, &det)
		cancel()
		var ne *node.Error
		switch {
		case errors.As(err, &ne) && ne.Kind == node.KindNotFound:
			return
		case err != nil:
			failures++
		case det.Deployment.State == deploy.StateStopped:
			return
		default:
			failures = 0
			first, _, _ := strings.Cut(det.Deployment.Series, ",") // a portfolio's universe shares one granularity
			_, g, _ := strategy.ParseSeries(first)
			for _, p := range det.Deployment.Proposals {
				if asked[p.ClientOrderID] {
					continue
				}
				asked[p.ClientOrderID] = true
				if !tb.askProposal(ctx, srv, det.Deployment, p, p.Bar.Add(2*g.Duration())) {
					return // the session is gone
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// askProposal asks about one proposal until it lapses; false when the
// session can no longer be asked.
func (tb *toolbox) askProposal(ctx context.Context, srv *server.MCPServer, d deploy.Deployment, p deploy.Proposal, lapses time.Time) bool {
	ectx, cancel := context.WithDeadline(ctx, lapses)
	defer cancel()
	sym := d.Symbol
	if p.Symbol != "" { // a portfolio's proposal names its asset's symbol
		sym = p.Symbol
	}
	msg := fmt.Sprintf("Deployment %s (%s on %s, venue %s) proposes an order: %s %s %s at market, decided at the bar of %s (target %v of its equity %s). "+
		"Approve to send it once, sized again at the price then within the allowance; declining or not answering by %s sends nothing (it then waits for an operator until its strategy decides another target).",
		d.ID, d.Strategy, d.Series, d.Venue, p.Side, p.Quantity, sym, p.Bar.UTC().Format(time.RFC3339), p.Target, d.Equity.StringFixed(2),
		lapses.UTC().Format(time.RFC3339))
	res, err := srv.RequestElicitation(ectx, mcp.ElicitationRequest{Params: mcp.ElicitationParams{Message: msg, RequestedSchema: elicitSchema}})
	switch {
	case err != nil && errors.Is(err, server.ErrNoActiveSession):
		return false
	case err != nil && ctx.Err() != nil:
		return false
	case err != nil && errors.Is(ectx.Err(), context.DeadlineExceeded):
		tb.loop.notify(ctx, mcp.LoggingLevelNotice, "deploy", fmt.Sprintf("deployment %s: nobody answered about proposal %s within two bars; nothing was sent, and it waits for an operator (wicket approve) until its strategy decides another target", d.ID, p.ClientOrderID))
		return true
	case err != nil:
		tb.loop.notify(ctx, mcp.LoggingLevelWarning, "deploy", fmt.Sprintf("deployment %s: proposal %s could not be asked (%v); nothing was sent", d.ID, p.ClientOrderID, err))
		return true
	case res.Action != mcp.ElicitationResponseActionAccept || !approved(res.Content):
		tb.loop.notify(ctx, mcp.LoggingLevelNotice, "deploy", fmt.Sprintf("deployment %s: proposal %s was declined; nothing was sent", d.ID, p.ClientOrderID))
		return true
	}
	by := "the MCP client's user"
	if ci, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok && ci.GetClientInfo().Name != "" {
		by += " (client " + ci.GetClientInfo().Name + ")"
	}
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	var in deploy.Intent
	if err := tb.deployNode().DeploymentsPost(rctx, "/proposals/"+url.PathEscape(p.ClientOrderID)+"/elicited", deploy.Elicited{By: by}, &in); err != nil {
		tb.loop.notify(ctx, mcp.LoggingLevelWarning, "deploy", fmt.Sprintf("the accepted proposal %s of deployment %s was not sent: %v", p.ClientOrderID, d.ID, err))
		return true
	}
	tb.loop.notify(ctx, mcp.LoggingLevelNotice, "deploy", fmt.Sprintf("deployment %s: the accepted proposal %s (%s %s %s) is %s", d.ID, in.ClientOrderID, in.Side, in.Quantity, d.Symbol, in.Status))
	return true
}
