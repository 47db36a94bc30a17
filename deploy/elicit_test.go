package deploy

import (
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// TestDeployElicitedApprovalTrustRule: the node takes an elicited
// approval only for a propose deployment created with approval elicit,
// and only from the key that created it; it then sends the order once.
// approval elicit is refused for auto, and an unknown approval is refused.
func TestDeployElicitedApprovalTrustRule(t *testing.T) {
	g := newRig(t)
	bars := path(vee()...)
	proposeAt := func(spec Spec) (Deployment, Proposal) {
		t.Helper()
		spec.Mode = ModePropose
		d := g.deploy(spec)
		for i := range bars {
			g.step(d.ID, bars, i)
			if dep, _ := g.r.Get(d.ID); len(dep.Proposals) > 0 {
				return dep, dep.Proposals[0]
			}
		}
		t.Fatal("the fixture never proposed")
		return Deployment{}, Proposal{}
	}
	op, p := proposeAt(Spec{})
	_, err := g.r.ApproveElicited(ctxT(t), p.ClientOrderID, "control", "someone", "test")
	wantErr(t, err, "from an operator only", "wicket approve")

	el, p2 := proposeAt(Spec{Approval: ApprovalElicit, CreatedBy: "control"})
	_, err = g.r.ApproveElicited(ctxT(t), p2.ClientOrderID, "observe", "someone", "test")
	wantErr(t, err, "only from the key that created it")
	in, err := g.r.ApproveElicited(ctxT(t), p2.ClientOrderID, "control", "alice", "by key control via POST /v1/deployments/proposals/x/elicited")
	if err != nil {
		t.Fatal(err)
	}
	// Recorded as whose word it was and how it came, never as an MCP
	// client's act the node cannot see.
	if !strings.Contains(in.Note, "on the word of key control") || !strings.Contains(in.Note, "via POST /v1/deployments/proposals/x/elicited") ||
		strings.Contains(in.Note, "through the MCP client") {
		t.Fatalf("the approval's record: %q", in.Note)
	}
	if in.Status != IntentFilled || g.nodeOrders(p2.ClientOrderID) != 1 {
		t.Fatalf("the elicited approval: %+v, %d orders at the node", in, g.nodeOrders(p2.ClientOrderID))
	}
	if _, err := g.r.ApproveElicited(ctxT(t), p2.ClientOrderID, "control", "alice", "by key control via POST /v1/deployments/proposals/x/elicited"); err == nil || g.nodeOrders(p2.ClientOrderID) != 1 {
		t.Fatalf("a second approval of the same proposal: %v, %d orders", err, g.nodeOrders(p2.ClientOrderID))
	}
	if got := g.nodeOrders(p.ClientOrderID); got != 0 || op.ID == el.ID {
		t.Fatalf("the operator-only deployment's proposal reached the node %d times", got)
	}

	base := Spec{Strategy: "sma_half.star", Source: smaHalf, Series: symbol + "@1m", Venue: "paper", Capital: decimal.NewFromInt(1000)}
	auto := base
	auto.Mode, auto.Approval = ModeAuto, ApprovalElicit
	_, err = g.r.Create(ctxT(t), auto)
	wantErr(t, err, "approval elicit is for propose mode")
	bad := base
	bad.Approval = "anyone"
	_, err = g.r.Create(ctxT(t), bad)
	wantErr(t, err, "give operator", "or elicit")
}

// TestDeployAllowanceAboveTheVenueBreaker: an allowance whose daily loss
// or drawdown is above the venue's own breaker (wicket.toml) is refused
// naming the most it may be; at or under it, it deploys.
func TestDeployAllowanceAboveTheVenueBreaker(t *testing.T) {
	g := newRig(t)
	v := &g.r.cfg.Project.Venues[0]
	v.MaxDailyLoss, v.MaxDrawdownPct = decimal.NewFromInt(200), decimal.NewFromInt(10)
	spec := Spec{Strategy: "sma_half.star", Source: smaHalf, Series: symbol + "@1m", Venue: "paper", Capital: decimal.NewFromInt(1000)}
	loss := spec
	loss.Allowance.MaxDailyLoss = dp(300)
	_, err := g.r.Create(ctxT(t), loss)
	wantErr(t, err, "max_daily_loss 300 is above venue paper's own breaker of 200", "give at most 200")
	dd := spec
	dd.Allowance.MaxDrawdownPct = dp(20)
	_, err = g.r.Create(ctxT(t), dd)
	wantErr(t, err, "max_drawdown_pct 20 is above venue paper's own breaker of 10%", "give at most 10")
	ok := spec
	ok.Allowance.MaxDailyLoss, ok.Allowance.MaxDrawdownPct = dp(200), dp(5)
	if _, err := g.r.Create(ctxT(t), ok); err != nil {
		t.Fatal(err)
	}
}
