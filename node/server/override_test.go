package server_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
)

// TestOverrideLiftsOneCheckForOneCommandOnce: a limit too far from the
// mark is refused naming how an operator lifts price_collar for it; an
// unsigned, forged or unknown-check override is refused; an override of
// another check or for another command lifts nothing; the operator's
// override lifts the check in the dry run (spending nothing), then for
// the one execution; the same command again is refused; a granted
// override unused past its life lapses. Grant and use are audited.
func TestOverrideLiftsOneCheckForOneCommandOnce(t *testing.T) {
	n, c, clk := riskNode(t, project.Risk{})
	ctx := context.Background()
	far := limitNear(t, c, command.Buy, "0.01", "0.85") // 15% below the mark: outside the 10% collar
	out := rejected(t, c, far, "price_collar")
	hash := node.PreviewHash(far)
	if !strings.Contains(out.Reason, "an operator can lift price_collar for this one command: wicket node override --check price_collar --preview "+hash) {
		t.Fatalf("the refusal does not name the override: %q", out.Reason)
	}

	_, err := c.Override(ctx, "price_collar", hash, "", nil)
	forbidden(t, err, "operator_signature_required")
	_, err = c.Override(ctx, "price_collar", hash, "", testkit.Key(t))
	forbidden(t, err, "bad_operator_signature")
	var ne *node.Error
	if _, err := c.Override(ctx, "venue", hash, "", n.OperatorKey); !errors.As(err, &ne) || ne.Code != "bad_check" {
		t.Fatalf("an override of the venue check: %v", err)
	}
	if _, err := c.Override(ctx, "price_collar", "abc", "", n.OperatorKey); !errors.As(err, &ne) || ne.Code != "bad_preview" {
		t.Fatalf("an override without a preview hash: %v", err)
	}
	rejected(t, c, far, "price_collar")

	// Another check, or another command: nothing lifted.
	if _, err := c.Override(ctx, "order_notional", hash, "", n.OperatorKey); err != nil {
		t.Fatal(err)
	}
	rejected(t, c, far, "price_collar")
	other := far
	other.Price = other.Price.Sub(testkit.D("1"))
	if _, err := c.Override(ctx, "price_collar", node.PreviewHash(other), "", n.OperatorKey); err != nil {
		t.Fatal(err)
	}
	rejected(t, c, far, "price_collar")

	st, err := c.Override(ctx, "price_collar", hash, "the operator wants this resting bid", n.OperatorKey)
	if err != nil || st.Check != "price_collar" || st.Preview != hash || !st.Until.Equal(clk.Now().Add(node.OverrideLife)) {
		t.Fatalf("override: %+v %v", st, err)
	}
	rs, err := c.Risk(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waiting := 0
	for _, l := range rs.Limits {
		if l.Check == "price_collar" && l.Scope == "override of the command "+hash[:16]+"…" && l.Limit == "lifted once" {
			waiting++
		}
	}
	if waiting != 1 {
		t.Errorf("risk_status shows the waiting override %d times: %+v", waiting, rs.Limits)
	}
	v, err := c.DryRun(ctx, command.NewEnvelope(far, ""))
	if err != nil || !v.WouldAccept {
		t.Fatalf("dry run with the override: %+v %v", v, err)
	}
	lifted := false
	for _, ch := range v.Checks {
		lifted = lifted || (ch.Name == "price_collar" && ch.OK && strings.HasPrefix(ch.Detail, "lifted once by the operator's override: limit "))
	}
	if !lifted {
		t.Errorf("the dry run's checks: %+v", v.Checks)
	}
	placed := accepted(t, c, far)
	rejected(t, c, far, "price_collar") // used once

	// Unused past its life: lapsed.
	if _, err := c.Override(ctx, "price_collar", node.PreviewHash(other), "", n.OperatorKey); err != nil {
		t.Fatal(err)
	}
	clk.Advance(node.OverrideLife)
	rejected(t, c, other, "price_collar")

	page, err := c.Audit(ctx, node.AuditQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	grants, uses := 0, 0
	for _, e := range page.Entries {
		switch {
		case e.Arming == nil:
		case e.Arming.Action == node.ArmingOverride && e.KeyID == node.KeyOperator:
			grants++
		case e.Arming.Action == node.ArmingOverrideUsed:
			uses++
			if !strings.Contains(e.Arming.Note, "override of price_collar was used, once, by submit_order limit buy 0.01 BTC-USD on paper (client_order_id "+placed.ClientOrderID+")") {
				t.Errorf("the use's audit: %q", e.Arming.Note)
			}
		}
	}
	if grants != 4 || uses != 1 {
		t.Errorf("audit: %d grants (want 4), %d uses (want 1)", grants, uses)
	}
}
