package trace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"wicket/internal/testkit"
)

func readGolden(t *testing.T) []Entry {
	t.Helper()
	entries, err := (&Reader{Dir: goldenDir}).Read(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

func TestSummarize(t *testing.T) {
	s := Summarize(readGolden(t))
	if want := (Counts{OK: 4, Preview: 1, Refused: 2, Error: 1, Total: 8}); s.Counts != want {
		t.Errorf("counts %+v, want %+v", s.Counts, want)
	}
	if !s.First.Equal(testkit.Time("2026-04-30T23:59:58.5Z")) || !s.Last.Equal(testkit.Time("2026-05-01T00:01:03Z")) {
		t.Errorf("range %v .. %v", s.First, s.Last)
	}
	var tools []string
	for _, ts := range s.Tools {
		tools = append(tools, fmt.Sprintf("%s ok%d pv%d rf%d er%d", ts.Tool, ts.OK, ts.Preview, ts.Refused, ts.Error))
	}
	wantTools := []string{
		"flatten ok0 pv0 rf1 er0", "list_templates ok1 pv0 rf0 er0", "node_snapshot ok0 pv0 rf0 er1",
		"plaec_order ok0 pv0 rf1 er0", "run_backtest ok1 pv0 rf0 er0", "submit_order ok1 pv1 rf0 er0",
		"validate_strategy ok1 pv0 rf0 er0",
	}
	if diff := cmp.Diff(wantTools, tools); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	wantReasons := []Reason{
		{Reason: "REFUSED [profile] read-only", Count: 1, Tools: []string{"flatten"}},
		{Reason: `unknown tool "…"`, Count: 1, Tools: []string{"plaec_order"}},
	}
	if diff := cmp.Diff(wantReasons, s.Refusals); diff != "" {
		t.Errorf("refusals (-want +got):\n%s", diff)
	}
	if len(s.Sessions) != 2 {
		t.Fatalf("%d sessions, want 2", len(s.Sessions))
	}
	a, b := s.Sessions[0], s.Sessions[1]
	if a.Session != "0198f0a2-7c1e-7a00-9a51-5b0c3d2e1f00" || a.Total != 4 || a.Profile != "full" ||
		!a.First.Equal(testkit.Time("2026-04-30T23:59:58.5Z")) || !a.Last.Equal(testkit.Time("2026-05-01T00:00:12.250Z")) {
		t.Errorf("first session %+v", a)
	}
	if b.Profile != "read-only" || b.Refused != 2 || b.Error != 1 || b.OK != 1 {
		t.Errorf("second session %+v", b)
	}
}

func TestSummarizeGroupsRefusals(t *testing.T) {
	var entries []Entry
	add := func(n int, tool, text string) {
		for range n {
			entries = append(entries, Entry{Tool: tool, Verdict: Refused, Error: text})
		}
	}
	add(3, "flatten", "REFUSED [profile] read-only: flatten is not served; served tools: a, b")
	add(2, "submit_order", "REFUSED [profile] read-only: submit_order is not served; served tools: a, b")
	add(4, "submit_order", "preview token expired: issued 61s ago. Preview again.")
	add(1, "cancel_order", "")
	// Refusals that differ only in a quoted token or name share a reason.
	add(1, "submit_order", `used preview token "379098f9-2348-4fc3-8528-db7baff93753": it already confirmed a submit_order call`)
	add(1, "cancel_order", `used preview token "88fff474-e85e-4aeb-933a-10907ede27cc": it already confirmed a cancel_order call`)
	s := Summarize(entries)
	want := []Reason{
		{Reason: "REFUSED [profile] read-only", Count: 5, Tools: []string{"flatten", "submit_order"}},
		{Reason: "preview token expired", Count: 4, Tools: []string{"submit_order"}},
		{Reason: `used preview token "…"`, Count: 2, Tools: []string{"cancel_order", "submit_order"}},
		{Reason: "(no reason given)", Count: 1, Tools: []string{"cancel_order"}},
	}
	if diff := cmp.Diff(want, s.Refusals); diff != "" {
		t.Errorf("refusals (-want +got):\n%s", diff)
	}
}

func TestRefusalReason(t *testing.T) {
	tests := []struct{ in, want string }{
		{"REFUSED [deny-tool] flatten: denied by the operator", "REFUSED [deny-tool] flatten"},
		{"preview token mismatch; field quantity differs", "preview token mismatch"},
		{"token already used. Preview again.", "token already used"},
		{"one line\nsecond line", "one line"},
		{"  spaced out.  ", "spaced out"},
		{"", "(no reason given)"},
		{strings.Repeat("é", 150), strings.Repeat("é", 100) + "…"},
		// The agent's own texts: a profile refusal groups by profile, a
		// deny-tool refusal by tool, a gate refusal by what the gate said.
		{"REFUSED [profile] read-only: tool flatten is not served under this profile. This server runs profile read-only; served tools: a, b.", "REFUSED [profile] read-only"},
		{"REFUSED [deny-tool] run_sweep: the operator denied this tool (--deny-tool run_sweep). This server runs profile full.", "REFUSED [deny-tool] run_sweep"},
		{`preview token "5f0c2a8e-3b1d-4c6f-9a7e-2d4b6c8e0f13" does not match this submit_order call: quantity: previewed "0.5", confirming "0.7".`, `preview token "…" does not match this submit_order call`},
		{`unknown preview token "abc": malformed: it has 3 bytes, a token has 36. Nothing was sent.`, `unknown preview token "…"`},
		{`unknown tool "a: b\"c. d"; did you mean list_templates?`, `unknown tool "…"`},
		{`bad "unclosed: quote. here`, `bad "…`},
	}
	for _, tt := range tests {
		if got := RefusalReason(tt.in); got != tt.want {
			t.Errorf("RefusalReason(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestChains(t *testing.T) {
	tok := func(token string, v Verdict, seq int64, outcome string) Entry {
		return Entry{Tool: "submit_order", Write: true, Seq: seq, Verdict: v, Token: token, ClientOrderID: "wk-" + token, Outcome: outcome}
	}
	entries := []Entry{
		tok("A", Preview, 1, ""),
		{Tool: "list_series", Verdict: OK, Seq: 2},
		tok("B", Preview, 3, ""),
		tok("A", Refused, 4, ""), // a mismatch
		tok("A", OK, 5, "accepted"),
		tok("C", Preview, 6, ""),
		tok("C", Error, 7, ""),
		tok("A", Refused, 8, ""), // already used: the chain stays confirmed
	}
	var got []string
	for _, c := range Chains(entries) {
		var steps []string
		for _, e := range c.Entries {
			steps = append(steps, fmt.Sprintf("%s#%d", Step(e), e.Seq))
		}
		got = append(got, fmt.Sprintf("%s %s %s %s [%s]", c.Token, c.State, c.Outcome, c.ClientOrderID, strings.Join(steps, " ")))
	}
	want := []string{
		"A confirmed accepted wk-A [preview#1 confirm#4 confirm#5 confirm#8]",
		"B previewed  wk-B [preview#3]",
		"C error  wk-C [preview#6 confirm#7]",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chains (-want +got):\n%s", diff)
	}
}

func TestChainsGolden(t *testing.T) {
	cs := Chains(readGolden(t))
	if len(cs) != 1 || cs[0].State != "confirmed" || cs[0].Outcome != "accepted" || cs[0].Ticket != "tk-17" || len(cs[0].Entries) != 2 {
		t.Errorf("chains %+v", cs)
	}
}

func TestProblemText(t *testing.T) {
	tests := []struct {
		p    *Problem
		want string
	}{
		{&Problem{Kind: KindNotFound, Path: "/p/agent", Err: os.ErrNotExist}, "trace: /p/agent: no trace here; the agent server writes one when started with `wicket mcp --trace` (or --trace-dir DIR)"},
		{&Problem{Kind: KindTorn, Path: "a.jsonl", Line: 3}, "trace: a.jsonl line 3: torn last line (no newline: a write was cut short or is still in progress), skipped"},
		{&Problem{Kind: KindMalformed, Path: "a.jsonl", Line: 2, Err: fmt.Errorf(`missing "ts"`)}, `trace: a.jsonl line 2: not a trace entry (missing "ts"), skipped`},
		{&Problem{Kind: KindIO, Path: "d", Err: &os.PathError{Op: "open", Path: filepath.Join("d", "x"), Err: os.ErrPermission}}, "trace: open d/x: permission denied"},
	}
	for _, tt := range tests {
		if got := tt.p.Error(); got != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
	}
}

func TestVerdict(t *testing.T) {
	for _, v := range Verdicts() {
		p, err := ParseVerdict(v.String())
		if err != nil || p != v {
			t.Errorf("ParseVerdict(%q) = %v, %v", v, p, err)
		}
		b, err := v.MarshalText()
		if err != nil || string(b) != v.String() {
			t.Errorf("MarshalText(%v) = %s, %v", v, b, err)
		}
	}
	for _, bad := range []string{"", "OK", "Refused", "accepted", " ok", "ok "} {
		if _, err := ParseVerdict(bad); err == nil || !strings.Contains(err.Error(), "valid: ok, preview, refused, error") {
			t.Errorf("ParseVerdict(%q) = %v, want an error naming the valid verdicts", bad, err)
		}
	}
	var zero Verdict
	if !zero.IsZero() || zero.String() != "" {
		t.Errorf("zero verdict: %q", zero.String())
	}
	if _, err := zero.MarshalText(); err == nil {
		t.Error("the zero verdict encoded")
	}
	if _, err := (Entry{Tool: "x"}).MarshalJSON(); err == nil {
		t.Error("an entry without verdict encoded")
	}
}

func TestMillis(t *testing.T) {
	if got := Millis(1234567891); got != 1234.568 {
		t.Errorf("Millis = %v", got)
	}
}
