package agent_test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestResearchLedgerEndToEnd: two `wicket mcp` servers and a CLI sweep at
// once over one project; every trial lands in one valid chain; run_sweep
// reports the deflated Sharpe ratio over its own trials and over the
// ledger's, and PBO; research_history shows what was tried, bounded, and
// is served by the offline profile too.
func TestResearchLedgerEndToEnd(t *testing.T) {
	proj := seededProject(t)
	runWicket(t, nil, "--project", proj, "strategy", "new", "sma_cross", "--from", "sma_cross")
	a, b := startMCP(t, nil, proj), startMCP(t, nil, proj)

	bt := object(t, a.call(t, "run_backtest", `{"name":"sma_cross","series":"BTC-USD@1d","params":{"fast":7}}`))
	if bt["run_id"] == nil || bt["run_id"] == "" {
		t.Fatalf("run_backtest carries no run_id: %v", bt)
	}

	// 4 × 4 = 16 combinations from each server and the CLI, at once.
	grid := `{"fast":{"from":5,"to":20,"step":5},"slow":[30,40,50,60]}`
	var wg sync.WaitGroup
	sweeps := make([]map[string]any, 2)
	for i, s := range []*session{a, b} {
		wg.Go(func() {
			res := s.call(t, "run_sweep", `{"name":"sma_cross","series":"ETH-USD@1d","grid":`+grid+`}`)
			if res.IsError {
				t.Errorf("run_sweep: %s", text(res))
				return
			}
			sweeps[i] = object(t, res)
		})
	}
	var cliOut []byte
	var cliErr error
	wg.Go(func() {
		cmd := exec.Command(wicketBin, "--project", proj, "sweep", "sma_cross", "--series", "ETH-USD@1d", "--grid", "fast=5:20:5", "--grid", "slow=30,40,50,60")
		cmd.Env = append(cmd.Environ(), cleanEnv...)
		cliOut, cliErr = cmd.CombinedOutput()
	})
	wg.Wait()
	if cliErr != nil {
		t.Fatalf("wicket sweep: %v\n%s", cliErr, cliOut)
	}
	if !strings.Contains(string(cliOut), "probability of backtest overfitting") || !strings.Contains(string(cliOut), "ledger trials on ETH-USD@1d, every strategy's") {
		t.Errorf("the CLI sweep does not report PBO and the ledger DSR:\n%s", cliOut)
	}
	for i, sw := range sweeps {
		if sw == nil {
			t.FailNow()
		}
		own := sw["deflated_sharpe"].(map[string]any)
		led := sw["ledger_deflated_sharpe"].(map[string]any)
		if own["trials"].(float64) != 16 || led["trials"].(float64) < 16 {
			t.Errorf("sweep %d: own N %v, ledger N %v", i, own["trials"], led["trials"])
		}
		o := sw["overfitting"].(map[string]any)
		if o["pbo"] == nil || o["splits"].(float64) != 12870 || o["combinations"].(float64) != 16 {
			t.Errorf("sweep %d: overfitting %v", i, o)
		}
		if sw["run_id"] == nil {
			t.Errorf("sweep %d carries no run_id", i)
		}
	}

	// What was tried: 1 backtest and 3 × 16 combinations.
	h := object(t, a.call(t, "research_history", `{"strategy":"sma_cross","limit":100}`))
	if h["count"].(float64) != 49 || len(h["trials"].([]any)) != 49 {
		t.Fatalf("research_history: count %v, %d trials", h["count"], len(h["trials"].([]any)))
	}
	surfaces := map[string]int{}
	sessions := map[string]bool{}
	for _, r := range h["trials"].([]any) {
		who := r.(map[string]any)["who"].(map[string]any)
		surfaces[who["surface"].(string)]++
		if s, ok := who["session"].(string); ok {
			sessions[s] = true
		}
	}
	if surfaces["mcp"] != 33 || surfaces["cli"] != 16 || len(sessions) != 2 {
		t.Errorf("who ran it: %v, sessions %v", surfaces, sessions)
	}
	one := object(t, b.call(t, "research_history", `{"run_id":`+fmt.Sprintf("%q", bt["run_id"])+`}`))
	if one["count"].(float64) != 1 {
		t.Errorf("the backtest's run: %v", one)
	}
	// A summary by default (headline metrics, no hash chain); full: true is the whole row.
	sum := one["trials"].([]any)[0].(map[string]any)
	full := object(t, b.call(t, "research_history", `{"full":true,"run_id":`+fmt.Sprintf("%q", bt["run_id"])+`}`))["trials"].([]any)[0].(map[string]any)
	if _, ok := sum["hash"]; ok || sum["metrics"].(map[string]any)["sharpe"] == nil || sum["metrics"].(map[string]any)["fees_paid"] != nil ||
		len(sum["digest"].(string)) != 12 || sum["params"].(map[string]any)["fast"] != 7.0 {
		t.Errorf("summary row: %v", sum)
	}
	if full["hash"] == nil || full["prev_hash"] == nil || full["costs"] == nil || full["metrics"].(map[string]any)["fees_paid"] == nil {
		t.Errorf("full row: %v", full)
	}
	lim := object(t, b.call(t, "research_history", `{"series":"ETH-USD@1d","kind":"sweep","limit":2}`))
	if lim["count"].(float64) != 48 || len(lim["trials"].([]any)) != 2 || !strings.Contains(fmt.Sprint(lim["more"]), "showing the newest 2 of 48") {
		t.Errorf("limit 2: %v", lim)
	}
	// The default answer stays under 8 KB like the research tools' (issue
	// 31, item 12), a trial links its run where this session stores it,
	// and the answers page back
	// through every trial with before, newest first, none twice.
	def := a.call(t, "research_history", `{}`)
	if b, _ := json.Marshal(def); len(b) >= 8192 {
		t.Errorf("research_history's default answer is %d bytes, want under 8 KB", len(b))
	} else {
		t.Logf("research_history's default answer: %d bytes", len(b))
	}
	if l, linked := runLinkOf(a.call(t, "research_history", `{"run_id":`+fmt.Sprintf("%q", bt["run_id"])+`}`)); !linked || l.URI != bt["run_uri"] {
		t.Errorf("the backtest's trial does not link its stored run in the session that ran it: %+v", l)
	}
	seen := map[float64]bool{}
	args := `{}`
	for page := 0; ; page++ {
		p := object(t, a.call(t, "research_history", args))
		for _, r := range p["trials"].([]any) {
			seq := r.(map[string]any)["seq"].(float64)
			if seen[seq] {
				t.Fatalf("page %d shows trial %v again", page, seq)
			}
			seen[seq] = true
		}
		next, more := p["next_before"].(float64)
		if !more {
			break
		}
		if page > 20 || !strings.Contains(fmt.Sprint(p["more"]), fmt.Sprintf("before: %d", int(next))) {
			t.Fatalf("page %d: %v", page, p)
		}
		args = fmt.Sprintf(`{"before":%d}`, int(next))
	}
	if len(seen) != 49 {
		t.Errorf("paging showed %d of 49 trials", len(seen))
	}
	if r := b.call(t, "research_history", `{"limit":100000}`); !strings.Contains(text(r), `"clamped":{"limit":500}`) {
		t.Errorf("an over-large limit is not reported clamped: %.300s", text(r))
	}
	if r := b.call(t, "research_history", `{"kind":"guess"}`); !r.IsError {
		t.Errorf("an unknown kind is not an error: %s", text(r))
	}
	if r := b.call(t, "research_history", `{"since":"yesterday-ish"}`); !r.IsError || !strings.Contains(text(r), "duration back from now") {
		t.Errorf("a bad since: %s", text(r))
	}

	// One valid chain.
	out := runWicket(t, nil, "--project", proj, "research", "verify")
	if !strings.Contains(out, "research ledger intact: 49 rows") {
		t.Fatalf("verify: %s", out)
	}

	// Offline serves it (openWorld=false); the research tools it reports on are not.
	off := startMCP(t, nil, proj, "--profile", "offline")
	names := off.toolNames(t)
	if !slices.Contains(names, "research_history") || slices.Contains(names, "run_sweep") {
		t.Fatalf("offline serves %v", names)
	}
	if h := object(t, off.call(t, "research_history", `{"limit":1}`)); h["count"].(float64) != 49 {
		t.Fatalf("offline research_history: %v", h)
	}
}
