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

// TestTraceShowNodeReadable: `wicket trace show TOKEN --node H:P` (the flag
// after the token) prints the node's audit entries as rows a reviewer
// reads, not one raw JSON line, and the chain's sessions in full: two
// sessions started the same minute share their first 8 characters.
func TestTraceShowNodeReadable(t *testing.T) {
	srv := nodetest.NewServer(t)
	t.Setenv(project.EnvProject, t.TempDir())
	t.Setenv(project.KeyObserve, srv.ObserveKey)
	t.Setenv(project.KeyControl, "")

	const cid = "wk-0198f0a3-bbbb-7000-8000-000000000001"
	c := command.Command{Verb: command.SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: command.Buy,
		Type: command.Limit, Quantity: testkit.D("0.5"), Price: testkit.D("99"), ClientOrderID: cid}
	out, err := nodetest.Send(context.Background(), srv.Client(), command.NewEnvelope(c, "breakout"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	w, err := trace.Open(dir, trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const token = "5f0c2a8e-0000-4000-8000-00000000bbbb"
	const s1, s2 = "0198f0a2-7c1e-7a00-9a51-5b0c3d2e1f00", "0198f0a2-9d3f-7b00-8000-00000000beef"
	w.Write(trace.Entry{Session: s1, Seq: 1, Tool: "submit_order", Write: true, Profile: "full", Verdict: trace.Preview, Token: token, ClientOrderID: cid})
	w.Write(trace.Entry{Session: s2, Seq: 1, Tool: "submit_order", Write: true, Profile: "full", Verdict: trace.OK, Token: token, ClientOrderID: cid, Ticket: out.Ticket, Outcome: "accepted"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"wicket", "trace", "show", token, "--dir", dir, "--node", srv.Addr}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	got := stdout.String()
	for _, want := range []string{
		"node             1 audit entry for " + cid,
		"NODE SEQ", "KEY", "COMMAND", "OUTCOME", "REASON",
		"control", "submit_order buy 0.5 BTC-USD limit @ 99 on paper", "accepted: " + out.OrderID, "breakout",
		s1, s2,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output does not show %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, `{"seq"`) || strings.Contains(got, `"key_id"`) {
		t.Errorf("output holds raw JSON:\n%s", got)
	}
}
