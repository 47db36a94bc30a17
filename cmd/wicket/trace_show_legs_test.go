package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node/command"
	"wicket/node/nodetest"
	"wicket/trace"
)

// TestTraceShowBracketLegModify (issue 44, item 15): `trace show TOKEN
// --node` of a bracket lists the modify of its stop leg, which the node's
// audit trail keeps under the leg's client order id, beside the submit.
func TestTraceShowBracketLegModify(t *testing.T) {
	srv := nodetest.NewServer(t)
	t.Setenv(project.EnvProject, t.TempDir())
	t.Setenv(project.KeyObserve, srv.ObserveKey)
	t.Setenv(project.KeyControl, "")
	ctx := context.Background()

	const cid = "wk-0198f0a3-cccc-7000-8000-000000000001"
	br := command.Command{Verb: command.SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: command.Buy, Type: command.Bracket,
		Quantity: testkit.D("1"), TakeProfit: testkit.D("105"), StopPrice: testkit.D("95"), ClientOrderID: cid}
	out, err := nodetest.Send(ctx, srv.Client(), command.NewEnvelope(br, "a bracket"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	mod := command.Command{Verb: command.Modify, Venue: "paper", OrderID: out.OrderIDs[2], StopPrice: testkit.D("96")}
	if _, err := nodetest.Send(ctx, srv.Client(), command.NewEnvelope(mod, "tighten the stop"), 5*time.Second); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	w, err := trace.Open(dir, trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const token = "5f0c2a8e-0000-4000-8000-00000000cccc"
	const sess = "0198f0a2-7c1e-7a00-9a51-5b0c3d2e1f00"
	args := []byte(`{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"bracket","quantity":"1","take_profit":"105","stop_price":"95"}`)
	w.Write(trace.Entry{Session: sess, Seq: 1, Tool: "submit_order", Write: true, Profile: "full", Verdict: trace.Preview, Token: token, ClientOrderID: cid, Args: args})
	w.Write(trace.Entry{Session: sess, Seq: 2, Tool: "submit_order", Write: true, Profile: "full", Verdict: trace.OK, Token: token, ClientOrderID: cid, Ticket: out.Ticket, Outcome: "accepted"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run(ctx, []string{"wicket", "trace", "show", token, "--dir", dir, "--node", srv.Addr}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	got := stdout.String()
	for _, want := range []string{
		"2 audit entries for " + cid + " and its legs",
		"leg " + cid + command.StopLegSuffix + ": modify",
		"stop_price=96", "tighten the stop",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output does not show %q:\n%s", want, got)
		}
	}
}
