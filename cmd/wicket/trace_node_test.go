package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/nodetest"
	"wicket/trace"
)

// TestTraceShowJoinsNodeAudit: `wicket trace show TOKEN --node H:P` joins a
// confirmed write in the transcript with what a real node recorded for its
// client order id.
func TestTraceShowJoinsNodeAudit(t *testing.T) {
	srv := nodetest.NewServer(t)
	t.Setenv(project.EnvProject, t.TempDir()) // no project: keys from the environment
	t.Setenv(project.KeyObserve, srv.ObserveKey)
	t.Setenv(project.KeyControl, "")

	const cid = "wk-0198f0a3-aaaa-7000-8000-000000000001"
	c := command.Command{Verb: command.SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: command.Buy,
		Type: command.Limit, Quantity: testkit.D("0.5"), Price: testkit.D("99"), ClientOrderID: cid}
	out, err := nodetest.Send(context.Background(), srv.Client(), command.NewEnvelope(c, "breakout"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nodetest.Send(context.Background(), srv.Client(), command.NewEnvelope(command.Command{Verb: command.CancelOrder, Venue: "paper", OrderID: out.OrderID}, "changed my mind"), 5*time.Second); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	w, err := trace.Open(dir, trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const token = "5f0c2a8e-0000-4000-8000-00000000aaaa"
	w.Write(trace.Entry{Session: "s1", Seq: 1, Tool: "submit_order", Write: true, Profile: "full", Verdict: trace.Preview, Token: token, ClientOrderID: cid})
	w.Write(trace.Entry{Session: "s1", Seq: 2, Tool: "submit_order", Write: true, Profile: "full", Verdict: trace.OK, Token: token, ClientOrderID: cid, Ticket: out.Ticket, Outcome: "accepted"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"wicket", "trace", "show", "--json", "--dir", dir, "--node", srv.Addr, token}, nil, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var v struct {
		State string            `json:"state"`
		Node  []node.AuditEntry `json:"node"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &v); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if v.State != "confirmed" || len(v.Node) != 2 {
		t.Fatalf("chain = %s", stdout.String())
	}
	if e := v.Node[0]; e.Ticket != out.Ticket || e.KeyID != node.KeyControl || e.Reason != "breakout" || e.Outcome.OrderID != out.OrderID {
		t.Errorf("submit's audit entry = %+v", e)
	}
	if e := v.Node[1]; e.Command.Verb != command.CancelOrder || e.Reason != "changed my mind" {
		t.Errorf("cancel's audit entry = %+v", e)
	}

	// Without keys the flag says where to put them.
	t.Setenv(project.KeyObserve, "")
	stdout.Reset()
	stderr.Reset()
	if code := run(context.Background(), []string{"wicket", "trace", "show", "--dir", dir, "--node", srv.Addr, token}, nil, &stdout, &stderr); code == 0 ||
		!strings.Contains(stderr.String(), "no node key: set WICKET_NODE_OBSERVE_KEY") {
		t.Errorf("without keys: exit %d, %s", code, stderr.String())
	}

	// The control key alone signs the reads.
	t.Setenv(project.KeyControl, srv.ControlKey)
	stdout.Reset()
	stderr.Reset()
	if code := run(context.Background(), []string{"wicket", "trace", "show", "--dir", dir, "--node", srv.Addr, token}, nil, &stdout, &stderr); code != 0 ||
		!strings.Contains(stdout.String(), "cancel_order venue=paper order_id="+out.OrderID) || !strings.Contains(stdout.String(), "changed my mind") {
		t.Errorf("with the control key only: exit %d, %s\n%s", code, stderr.String(), stdout.String())
	}
}
