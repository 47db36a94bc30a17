package node

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/node/command"
	"wicket/node/guardrail"
)

// fakeConn is a hand-written Conn whose answers a test sets.
type fakeConn struct {
	snap      *Snapshot
	snapErr   error
	verdict   Verdict
	dryErr    error
	submitErr error
	outcome   Outcome
	ticketErr error
	submitted []command.Envelope
}

func (f *fakeConn) Snapshot(context.Context, string, int) (*Snapshot, error) {
	return f.snap, f.snapErr
}
func (f *fakeConn) DryRun(context.Context, command.Envelope) (Verdict, error) {
	return f.verdict, f.dryErr
}
func (f *fakeConn) Submit(_ context.Context, env command.Envelope) (string, error) {
	f.submitted = append(f.submitted, env)
	return "tk-1", f.submitErr
}
func (f *fakeConn) Ticket(context.Context, string, time.Duration) (Outcome, error) {
	return f.outcome, f.ticketErr
}

func marketBuy(t *testing.T, qty string) command.Command {
	t.Helper()
	c, err := command.Build("submit_order", map[string]string{"venue": "paper", "symbol": "BTC-USD", "side": "buy", "type": "market", "quantity": qty})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestNewPreview(t *testing.T) {
	g := guardrail.New(project.Defaults())
	snap := &Snapshot{Venues: []Venue{{Name: "paper", Marks: map[string]decimal.Decimal{"BTC-USD": decimal.NewFromInt(100)}}}}
	f := &fakeConn{snap: snap, verdict: Verdict{WouldAccept: true}}
	p := NewPreview(context.Background(), f, g, marketBuy(t, "1"), "  why\nnot ", func() string { return "id" })
	if p.Command.ClientOrderID != "wk-id" || p.Reason != "why not" || !p.Guardrail.OK || p.DryRun == nil || len(p.Notes) != 0 || len(f.submitted) != 0 {
		t.Fatalf("preview = %+v (submitted %d)", p, len(f.submitted))
	}
	// A node that cannot be read or asked is noted; a failed guardrail too.
	f = &fakeConn{snapErr: errors.New("down"), dryErr: errors.New("down")}
	p = NewPreview(context.Background(), f, g, marketBuy(t, "1"), "", func() string { return "id" })
	notes := strings.Join(p.Notes, " | ")
	for _, want := range []string{"could not be read", "guardrail failed", "no dry run was asked"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}
	if p.DryRun != nil || p.Guardrail.OK {
		t.Errorf("preview without a node = %+v", p)
	}
}

func TestSend(t *testing.T) {
	p := Preview{Command: marketBuy(t, "1").Resolve(func() string { return "id" }), Reason: "r"}
	tests := []struct {
		name   string
		conn   *fakeConn
		status string
		advice string // "" when the outcome is known
	}{
		{"accepted", &fakeConn{outcome: Outcome{Status: Accepted, OrderID: "ord-1"}}, "accepted", ""},
		{"rejected", &fakeConn{outcome: Outcome{Status: Rejected, Reason: "halted\n\u202e now"}}, "rejected", ""},
		{"pending", &fakeConn{outcome: Outcome{Status: Pending}}, "pending", "has not finished this command within 2s"},
		{"pending at the venue", &fakeConn{outcome: Outcome{Status: Pending, OrderID: "ord-2", Detail: "the venue's answer was lost; " + PendingAdvice}},
			"pending", "the venue's answer was lost"},
		{"unreadable", &fakeConn{ticketErr: errors.New("reset")}, "pending", "outcome could not be read: reset"},
		{"send failed", &fakeConn{submitErr: errors.New("refused")}, SendFailed, "may or may not have been received"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Send(context.Background(), tt.conn, p, TicketWait)
			if s.Status != tt.status || !strings.Contains(s.Advice, tt.advice) || (tt.advice == "") != (s.Advice == "") {
				t.Fatalf("Send = %+v, want status %s and advice containing %q", s, tt.status, tt.advice)
			}
			if s.Advice != "" && !strings.Contains(s.Advice, PendingAdvice) {
				t.Errorf("advice %q is not worded as PendingAdvice", s.Advice)
			}
			if s.Verb != command.SubmitOrder || s.ClientOrderID != "wk-id" || (s.Ticket == "") != (tt.status == SendFailed) {
				t.Errorf("Send = %+v, want the verb, the client order id and, once submitted, the ticket", s)
			}
			if tt.status == "rejected" && s.Reason != "halted  now" {
				t.Errorf("reason %q is not sanitized", s.Reason)
			}
			if len(tt.conn.submitted) != 1 || tt.conn.submitted[0].Command.ClientOrderID != "wk-id" || tt.conn.submitted[0].Reason != "r" {
				t.Errorf("submitted %+v, want exactly the previewed command once", tt.conn.submitted)
			}
		})
	}
}

func TestResultOf(t *testing.T) {
	r := ResultOf(Outcome{Ticket: "tk-7", Status: Pending, Verb: command.CancelOrder, ClientOrderID: "wk-x"})
	if r.Status != "pending" || r.Ticket != "tk-7" || r.ClientOrderID != "wk-x" || !strings.Contains(r.Advice, "ticket tk-7") || !strings.Contains(r.Advice, PendingAdvice) {
		t.Errorf("pending ticket = %+v", r)
	}
	r = ResultOf(Outcome{Ticket: "tk-8", Status: Accepted, OrderID: "ord-3", Detail: "canceled", Code: "ignored", Reason: "ignored"})
	if r.OrderID != "ord-3" || r.Detail != "canceled" || r.Code != "" || r.Reason != "" || r.Advice != "" {
		t.Errorf("accepted ticket = %+v", r)
	}
}
