package deploy

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"wicket/node"
	"wicket/node/nodetest"
)

// TestDeployOverTheNodesHTTP: through the node's /v1/deployments hook
// and node.Client, a deployment is checked, created, listed, shown and
// stopped; a refusal arrives as the node's error with its fix; an
// unsigned resume is refused and a signed one is taken.
func TestDeployOverTheNodesHTTP(t *testing.T) {
	h := NewHandler()
	g := newRig(t, nodetest.WithDeployments(h))
	h.Attach(g.r)
	c := g.ns.Client(node.WithClock(g.clk.Now))
	ctx := context.Background()
	spec := Spec{Strategy: "sma_half.star", Source: smaHalf, Series: symbol + "@1m", Venue: "paper", Capital: decimal.NewFromInt(5000), Warmup: 40}
	var preview Deployment
	if err := c.DeploymentsPost(ctx, "/check", spec, &preview); err != nil || preview.ID != "" || preview.StrategyHash == "" {
		t.Fatalf("check: %+v %v", preview, err)
	}
	if len(g.r.List()) != 0 {
		t.Fatal("a check created a deployment")
	}
	bad := spec
	bad.Venue = "kraken"
	var ne *node.Error
	if err := c.DeploymentsPost(ctx, "", bad, &preview); !errors.As(err, &ne) || ne.Kind != node.KindBadRequest || ne.Message == "" {
		t.Fatalf("an unknown venue: %v", err)
	}
	var d Deployment
	if err := c.DeploymentsPost(ctx, "", spec, &d); err != nil || d.State != StateRunning || d.Mode != ModePropose {
		t.Fatalf("create: %+v %v", d, err)
	}
	var list struct {
		Deployments []Deployment `json:"deployments"`
	}
	if err := c.DeploymentsGet(ctx, "", nil, &list); err != nil || len(list.Deployments) != 1 || list.Deployments[0].Source != "" {
		t.Fatalf("list: %+v %v", list, err)
	}
	var det Detail
	if err := c.DeploymentsGet(ctx, "/"+d.ID, nil, &det); err != nil || det.Deployment.ID != d.ID {
		t.Fatalf("show: %+v %v", det, err)
	}
	if err := c.DeploymentsPost(ctx, "/"+d.ID+"/resume", node.ArmRequest{Confirm: d.ID}, &d); !errors.As(err, &ne) || ne.Kind != node.KindForbidden {
		t.Fatalf("an unsigned resume: %v", err)
	}
	long := StopRequest{Reason: strings.Repeat("x", MaxStopReason+1)}
	if err := c.DeploymentsPost(ctx, "/"+d.ID+"/stop", long, &d); !errors.As(err, &ne) || ne.Kind != node.KindBadRequest || !strings.Contains(ne.Message, "reason") {
		t.Fatalf("a stop with an overlong reason: %v", err)
	}
	// The stop is recorded as what it was: the key that signed it, the
	// endpoint, and the caller's reason; never "an operator" when it was
	// the control key.
	if err := c.DeploymentsPost(ctx, "/"+d.ID+"/stop", StopRequest{Reason: "drawdown beyond the plan"}, &d); err != nil || d.State != StateStopped ||
		d.Reason != "stopped: by key control via POST /v1/deployments/"+d.ID+"/stop: drawdown beyond the plan" {
		t.Fatalf("stop: %+v %v", d, err)
	}
	var ch Challenge
	if err := c.DeploymentsGet(ctx, "/"+d.ID+"/challenge", url.Values{"act": {"arm"}}, &ch); err != nil || ch.Challenge == "" {
		t.Fatalf("challenge: %v", err)
	}
	req := node.ArmRequest{For: "1h", Confirm: d.ID, Challenge: ch.Challenge}
	req.Signature = node.SignOperator(g.ns.OperatorKey, Statement(ActArm, d.ID, req))
	if err := c.DeploymentsPost(ctx, "/"+d.ID+"/arm", req, &d); !errors.As(err, &ne) || ne.Kind != node.KindRejected {
		t.Fatalf("arming a stopped deployment: %v", err)
	}
	if err := c.DeploymentsGet(ctx, "/nope", nil, &det); !errors.As(err, &ne) || ne.Kind != node.KindBadRequest {
		t.Fatalf("a bad id: %v", err)
	}
}
