package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"wicket/gate"
	"wicket/trace"
)

// recorder is a Tracer that keeps entries in memory.
type recorder struct {
	mu      sync.Mutex
	entries []trace.Entry
}

func (r *recorder) Write(e trace.Entry) { r.mu.Lock(); r.entries = append(r.entries, e); r.mu.Unlock() }

func (r *recorder) all() []trace.Entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]trace.Entry(nil), r.entries...)
}

// fakeSpecs is a small registry covering every ring, for in-process tests
// of the server mechanics (the real tools are tested end to end).
func fakeSpecs() []*toolSpec {
	echo := func(ctx context.Context, c *call) *result {
		time.Sleep(time.Millisecond)
		return ok(map[string]any{"tool": c.tool, "args": len(c.args)})
	}
	return []*toolSpec{
		{Name: "list_templates", Title: "Templates", Description: "Lists templates.", Ring: ringAuthoring,
			Hints: hints{ReadOnly: true, OpenWorld: flag(false)}, Params: []param{{Name: "name", Type: "string"}}, Handle: echo},
		{Name: "list_series", Title: "Series", Description: "Lists series.", Ring: ringResearch,
			Hints: hints{ReadOnly: true, OpenWorld: flag(true)}, Handle: echo},
		{Name: "mystery", Title: "Mystery", Description: "Declares no openWorld hint.", Ring: ringAuthoring,
			Hints: hints{ReadOnly: true}, Handle: echo},
		{Name: "boom", Title: "Boom", Description: "Panics.", Ring: ringAuthoring,
			Hints: hints{ReadOnly: true, OpenWorld: flag(false)}, Handle: func(context.Context, *call) *result { panic("kaboom") }},
		{Name: "submit_order", Title: "Submit", Description: "Gated write.", Ring: ringLiveWrite, Write: true,
			Hints: hints{Destructive: true, OpenWorld: flag(true)}, Handle: echo},
	}
}

func newTestServer(t *testing.T, profile string, deny []string, tr Tracer) *Server {
	t.Helper()
	var n atomic.Int64
	s, err := newServer(newRegistry(fakeSpecs()...), Options{
		Profile: profile, Deny: deny, Trace: tr, Drain: 10 * time.Second,
		NewID: func() string { return fmt.Sprintf("id-%d", n.Add(1)) },
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// serveLines runs a server over the given input and returns stdout lines.
func serveLines(t *testing.T, s *Server, input string) []map[string]any {
	t.Helper()
	var out bytes.Buffer
	if err := s.Serve(context.Background(), strings.NewReader(input), &out); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	var msgs []map[string]any
	sc := bufio.NewScanner(&out)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m["jsonrpc"] != "2.0" {
			t.Fatalf("stdout line is not a JSON-RPC message: %q", sc.Text())
		}
		msgs = append(msgs, m)
	}
	return msgs
}

func callLine(id int, tool string, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`+"\n", id, tool, args)
}

func TestBatchThenEOFLosesNothing(t *testing.T) {
	for round := 0; round < 100; round++ {
		var in strings.Builder
		for i := 1; i <= 30; i++ {
			in.WriteString(callLine(i, "list_templates", `{}`))
		}
		msgs := serveLines(t, newTestServer(t, ProfileFull, nil, nil), in.String())
		ids := map[float64]bool{}
		for _, m := range msgs {
			if id, ok := m["id"].(float64); ok {
				ids[id] = true
			}
		}
		if len(ids) != 30 {
			t.Fatalf("round %d: %d of 30 responses", round, len(ids))
		}
	}
}

func TestUnterminatedLastLineAndBlankLines(t *testing.T) {
	in := "\n   \n" + callLine(1, "list_templates", `{}`) + strings.TrimSuffix(callLine(2, "list_templates", `{}`), "\n")
	msgs := serveLines(t, newTestServer(t, ProfileFull, nil, nil), in)
	if len(msgs) != 2 {
		t.Fatalf("got %d messages, want 2: %v", len(msgs), msgs)
	}
}

func TestUnknownToolIsProtocolErrorWithSuggestions(t *testing.T) {
	recs := &recorder{}
	s := newTestServer(t, ProfileFull, nil, recs)
	msgs := serveLines(t, s, callLine(7, "list_templats", `{}`)+`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":42}}`+"\n")
	if len(msgs) != 2 {
		t.Fatalf("got %d messages", len(msgs))
	}
	e, _ := msgs[0]["error"].(map[string]any)
	if e == nil || e["code"].(float64) != -32602 || !strings.Contains(e["message"].(string), "did you mean list_templates") {
		t.Fatalf("unknown tool answer: %v", msgs[0])
	}
	got := recs.all()
	if len(got) != 2 || got[0].Verdict != trace.Refused || got[0].Tool != "list_templats" || got[1].Verdict != trace.Refused {
		t.Fatalf("trace records: %+v", got)
	}
}

func TestRefusedAndPanicAndUnknownArgs(t *testing.T) {
	recs := &recorder{}
	s := newTestServer(t, ProfileReadOnly, []string{"list_series"}, recs)
	in := callLine(1, "submit_order", `{}`) + callLine(2, "list_series", `{}`) + callLine(3, "boom", `{}`) +
		callLine(4, "list_templates", `{"nmae":"x"}`) + callLine(5, "list_templates", `{"name":"x"}`)
	msgs := serveLines(t, s, in)
	byID := map[float64]map[string]any{}
	for _, m := range msgs {
		byID[m["id"].(float64)] = m["result"].(map[string]any)
	}
	text := func(id float64) string {
		c := byID[id]["content"].([]any)[0].(map[string]any)
		return c["text"].(string)
	}
	if !strings.HasPrefix(text(1), "REFUSED [profile] ") || !strings.Contains(text(1), "profile read-only") {
		t.Errorf("refused write: %q", text(1))
	}
	if !strings.HasPrefix(text(2), "REFUSED [deny-tool] ") {
		t.Errorf("denied tool: %q", text(2))
	}
	if byID[3]["isError"] != true || !strings.Contains(text(3), "kaboom") {
		t.Errorf("panic: %v", byID[3])
	}
	if !strings.Contains(text(4), "unknown argument(s) nmae; valid: name") {
		t.Errorf("unknown args: %q", text(4))
	}
	if byID[5]["isError"] == true {
		t.Errorf("served call failed: %v", byID[5])
	}
	verdicts := map[string]int{}
	for _, r := range recs.all() {
		verdicts[r.Verdict.String()]++
	}
	if verdicts["refused"] != 2 || verdicts["error"] != 2 || verdicts["ok"] != 1 {
		t.Errorf("verdicts %v", verdicts)
	}
}

func TestToolAccessProfiles(t *testing.T) {
	reg := newRegistry(fakeSpecs()...)
	tests := []struct {
		profile string
		deny    []string
		served  string
	}{
		{ProfileFull, nil, "boom list_series list_templates mystery submit_order"},
		{ProfileReadOnly, nil, "boom list_series list_templates mystery"},
		{ProfileOffline, nil, "boom list_templates"},
		{ProfileFull, []string{"submit_order", "boom"}, "list_series list_templates mystery"},
	}
	for _, tt := range tests {
		a, err := newToolAccess(reg, tt.profile, tt.deny)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(a.ServedNames(), " "); got != tt.served {
			t.Errorf("%s %v: served %q, want %q", tt.profile, tt.deny, got, tt.served)
		}
		if len(a.ServedNames())+len(a.RefusedNames()) != len(reg.Names()) {
			t.Errorf("served and refused are not complements")
		}
	}
	for _, bad := range []struct {
		profile string
		deny    []string
		want    string
	}{
		{"admin", nil, "valid: full, read-only, offline"},
		{"", nil, "valid: full, read-only, offline"},
		{ProfileFull, []string{"rm_rf"}, "valid: boom, list_series"},
	} {
		_, err := newToolAccess(reg, bad.profile, bad.deny)
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("NewToolAccess(%q, %v) = %v", bad.profile, bad.deny, err)
		}
	}
}

// TestRefusalTextGroupsByReason: a refusal's first clause is the reason
// `wicket trace stats` groups it under — one per profile, one per denied
// tool — and the rest names the tool, the profile and the served set.
func TestRefusalTextGroupsByReason(t *testing.T) {
	a, err := Check(ProfileReadOnly, []string{"list_series", "run_sweep"})
	if err != nil {
		t.Fatal(err)
	}
	refused := a.RefusedNames()
	if len(refused) != 11 {
		t.Fatalf("refused %v, want the 9 writes (7 order verbs, deploy_strategy, stop_deployment) and 2 denied tools", refused)
	}
	served := "served tools: " + strings.Join(a.ServedNames(), ", ") + "."
	for _, name := range refused {
		text := a.refusalText(name)
		want := "REFUSED [profile] read-only"
		if a.Refused(name) == byDenyTool {
			want = "REFUSED [deny-tool] " + name
		}
		if got := trace.RefusalReason(text); got != want {
			t.Errorf("%s: reason %q, want %q (text %q)", name, got, want, text)
		}
		if !strings.Contains(text, "tool "+name) || !strings.Contains(text, "profile read-only") || !strings.Contains(text, served) {
			t.Errorf("%s: refusal text %q", name, text)
		}
	}
}

// TestGateWindowInWords: the instructions and the place_order prompt state
// the preview window the gate enforces.
func TestGateWindowInWords(t *testing.T) {
	want := fmt.Sprintf("within %d seconds", int(gate.PreviewWindow/time.Second))
	for name, text := range map[string]string{"instructions": instrGate, "place_order prompt": gateSteps([]string{"submit_order"})} {
		if !strings.Contains(text, want) {
			t.Errorf("%s do not say %q: %q", name, want, text)
		}
	}
}
