package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"wicket/internal/project"
	"wicket/strategy/ledger"
)

// TestResearchHistoryBoundedInBytes: a row count alone does not bound
// research_history (a walk-forward row carries its grid and each window's
// choice): an answer holds at most 512 KiB of trials, the newest, and says
// what it left out and how to see it.
func TestResearchHistoryBoundedInBytes(t *testing.T) {
	proj := newProject(t)
	p := project.Project{Root: proj}
	secrets, err := p.Secrets(nil)
	if err != nil {
		t.Fatal(err)
	}
	key, _, _ := secrets.Lookup(project.KeyLedger) // the key wicket init made, which the server reads too
	l, err := ledger.Open(p.ResearchPath(), ledger.Options{Key: []byte(key)})
	if err != nil {
		t.Fatal(err)
	}
	grid := make([]float64, 4000)
	for i := range grid {
		grid[i] = 1.25 + float64(i)
	}
	params, _ := json.Marshal(map[string]any{"grid": map[string]any{"slow": grid}})
	rows := make([]ledger.Row, 60)
	for i := range rows {
		rows[i] = ledger.Row{Kind: ledger.KindWalkForward, Who: ledger.Who{Surface: ledger.SurfaceCLI}, Strategy: "wide", Series: "BTC-USD@1d",
			Params: params, Metrics: json.RawMessage(fmt.Sprintf(`{"windows": %d}`, i))}
	}
	if _, err := l.Append(context.Background(), rows); err != nil {
		t.Fatal(err)
	}
	l.Close()

	s := startMCP(t, nil, proj)
	// A duration too long for a time.Duration is refused, not wrapped round
	// into the future (which matched nothing).
	for _, since := range []string{"999999d", "2000000h", "36000d20000h"} {
		if r := s.call(t, "research_history", fmt.Sprintf(`{"since":%q}`, since)); !r.IsError || !strings.Contains(text(r), "days back") {
			t.Errorf("since %s: %.200s", since, text(r))
		}
	}
	if h := object(t, s.call(t, "research_history", `{"since":"3650d","limit":1}`)); h["count"].(float64) != 60 {
		t.Errorf("since 3650d: %v", h["count"])
	}
	for _, full := range []bool{false, true} {
		r := s.call(t, "research_history", fmt.Sprintf(`{"strategy":"wide","full":%v,"limit":60}`, full))
		if r.IsError {
			t.Fatalf("research_history: %s", text(r))
		}
		if n := len(text(r)); n > 700<<10 {
			t.Errorf("full %v: an answer of %d bytes", full, n)
		}
		h := object(t, r)
		got := h["trials"].([]any)
		if h["count"].(float64) != 60 || len(got) == 0 || len(got) >= 60 {
			t.Fatalf("full %v: count %v, %d trials", full, h["count"], len(got))
		}
		if last := got[len(got)-1].(map[string]any); last["seq"].(float64) != 60 {
			t.Errorf("full %v: the newest trial is not the last shown: %v", full, last["seq"])
		}
		if msg := fmt.Sprint(h["more"]); !strings.Contains(msg, fmt.Sprintf("showing the newest %d of 60", len(got))) || !strings.Contains(msg, "512 KiB") {
			t.Errorf("full %v: more %q", full, msg)
		}
	}
}
