package main

import (
	"context"
	"fmt"
	"io"
	"time"
	"wicket/deploy"
	"wicket/node"

	"github.com/shopspring/decimal"
)

// showProposal prints the waiting proposal cid before the operator types
// it back: the order (side, quantity, symbol, venue), its bar's close and
// the venue's price now, since an approval sizes it again at that price.
func showProposal(ctx context.Context, client *node.Client, cid string, out io.Writer) error {
	var list struct {
		Deployments []deploy.Deployment `json:"deployments"`
	}
	if err := client.DeploymentsGet(ctx, "", nil, &list); err != nil {
		return err
	}
	for _, d := range list.Deployments {
		for _, p := range d.Proposals {
			if p.ClientOrderID != cid {
				continue
			}
			if p.Symbol != "" { // a portfolio's proposal is of its asset's symbol
				d.Symbol = p.Symbol
			}
			var now decimal.Decimal
			if snap, err := client.Snapshot(ctx, d.Venue, 0); err == nil {
				now, _ = snap.Mark(d.Venue, d.Symbol)
			}
			describeProposal(out, d, p, now)
			return nil
		}
	}
	return fmt.Errorf("no waiting proposal %s: it was approved, or it lapsed (wicket node deployments shows the waiting ones)", cid)
}

// describeProposal is the proposal as the operator sees it before
// approving; now is the venue's price (zero: unknown).
func describeProposal(w io.Writer, d deploy.Deployment, p deploy.Proposal, now decimal.Decimal) {
	if p.Symbol != "" { // a portfolio's proposal is of its asset's symbol
		d.Symbol = p.Symbol
	}
	describeProposalOrder(w, d, p)
	switch {
	case !now.IsPositive():
		fmt.Fprintf(w, "price now    unknown: the venue shows no price of %s, so an approval sends nothing\n", d.Symbol)
	case p.BarClose.IsPositive():
		fmt.Fprintf(w, "price now    %s (%s%% from the bar's close); approved, it is sized again at the price then, within the allowance\n",
			now, now.Sub(p.BarClose).Div(p.BarClose).Shift(2).StringFixed(2))
	default:
		fmt.Fprintf(w, "price now    %s; approved, it is sized again at the price then, within the allowance\n", now)
	}
}

// describeProposalOrder is the proposal, its order and its bar (what an
// approval link is bound to: wicket approve --http).
func describeProposalOrder(w io.Writer, d deploy.Deployment, p deploy.Proposal) {
	if p.Symbol != "" { // a portfolio's proposal is of its asset's symbol
		d.Symbol = p.Symbol
	}
	kind := "at market"
	if p.Type == "bracket" {
		kind = "at market with its stop-loss and take-profit (a bracket)"
	}
	fmt.Fprintf(w, "proposal     %s of deployment %s (%s on %s)\n", p.ClientOrderID, d.ID, d.Strategy, d.Series)
	fmt.Fprintf(w, "order        %s %s %s %s on venue %s, for target %v of the deployment's equity\n", p.Side, p.Quantity, d.Symbol, kind, d.Venue, p.Target)
	fmt.Fprintf(w, "bar          %s, closed at %s\n", p.Bar.UTC().Format(time.RFC3339), p.BarClose)
}
