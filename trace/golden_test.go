package trace

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wicket/internal/testkit"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/trace")

const goldenDir = "../testdata/trace/golden"

// goldenEntries is one of each kind of row the agent writes, across a
// month boundary.
func goldenEntries() []Entry {
	denied := []string{"run_sweep", "market_exit"}
	return []Entry{
		{TS: testkit.Time("2026-04-30T23:59:58.5Z"), Session: "0198f0a2-7c1e-7a00-9a51-5b0c3d2e1f00", Seq: 1, Tool: "list_templates",
			Profile: "full", Args: json.RawMessage(`{}`), Verdict: OK, MS: 0.412},
		{TS: testkit.Time("2026-04-30T23:59:59.999999Z"), Session: "0198f0a2-7c1e-7a00-9a51-5b0c3d2e1f00", Seq: 2, Tool: "run_backtest",
			Profile: "full", Args: json.RawMessage(`{ "name": "sma_cross",
				"series": "BTC-USD@1h", "params": {"fast": 10, "slow": 30} }`), Verdict: OK, MS: 1834.25},
		{TS: testkit.Time("2026-05-01T00:00:00.001Z"), Session: "0198f0a2-7c1e-7a00-9a51-5b0c3d2e1f00", Seq: 3, Tool: "submit_order", Write: true,
			Profile: "full", Args: json.RawMessage(`{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"limit","quantity":"0.5","price":"41000.00","reason":"breakout <confirmed> & volume"}`),
			Verdict: Preview, Token: "5f0c2a8e-3b1d-4c6f-9a7e-2d4b6c8e0f13", ClientOrderID: "wk-0198f0a3-1111-7000-8000-000000000002", MS: 3.1},
		{TS: testkit.Time("2026-05-01T00:00:12.250Z"), Session: "0198f0a2-7c1e-7a00-9a51-5b0c3d2e1f00", Seq: 4, Tool: "submit_order", Write: true,
			Profile: "full", Args: json.RawMessage(`{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"limit","quantity":"0.5","price":"41000.00","confirm":true,"preview_token":"5f0c2a8e-3b1d-4c6f-9a7e-2d4b6c8e0f13"}`),
			Verdict: OK, Token: "5f0c2a8e-3b1d-4c6f-9a7e-2d4b6c8e0f13", ClientOrderID: "wk-0198f0a3-1111-7000-8000-000000000002",
			Ticket: "tk-17", Outcome: "accepted", MS: 41.008},
		{TS: testkit.Time("2026-05-01T00:01:00Z"), Session: "0198f0b9-0000-7b00-8000-00000000beef", Seq: 1, Tool: "flatten", Write: true,
			Profile: "read-only", Denied: denied, Args: json.RawMessage(`{"venue":"paper"}`), Verdict: Refused,
			Error: "REFUSED [profile] read-only: flatten is not served by this server; served tools: list_templates, node_snapshot. Only the operator can widen this by restarting the server.", MS: 0.05},
		{TS: testkit.Time("2026-05-01T00:01:01Z"), Session: "0198f0b9-0000-7b00-8000-00000000beef", Seq: 2, Tool: "plaec_order",
			Profile: "read-only", Denied: denied, Args: json.RawMessage(`{"q":"ünïcödé ✓"}`), Verdict: Refused,
			Error: "unknown tool \"plaec_order\"; did you mean list_templates? Call tools/list for the tools this server offers.", MS: 0.02},
		{TS: testkit.Time("2026-05-01T00:01:02Z"), Session: "0198f0b9-0000-7b00-8000-00000000beef", Seq: 3, Tool: "node_snapshot",
			Profile: "read-only", Denied: denied, Verdict: Error,
			Error: "node 127.0.0.1:7879 is not reachable: connection refused; start it with `wicket node serve`", MS: 2},
		{TS: testkit.Time("2026-05-01T00:01:03Z"), Session: "0198f0b9-0000-7b00-8000-00000000beef", Seq: 4, Tool: "validate_strategy",
			Profile: "read-only", Denied: denied,
			Args: json.RawMessage(`{"source":"` + strings.Repeat("#", MaxLine) + `"}`), Verdict: OK, MS: 12.5},
	}
}

// TestGoldenLines writes the golden entries and compares the month files
// with testdata/trace/golden (go test -run TestGoldenLines -update rewrites
// them), then reads them back: every line decodes and re-encodes to itself.
func TestGoldenLines(t *testing.T) {
	c := testkit.NewClock(testkit.Time("2026-05-01T00:00:00Z"))
	w, dir, stderr := open(t, c, Options{})
	for _, e := range goldenEntries() {
		w.Write(e)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if s := stderr.String(); s != "" {
		t.Fatalf("stderr: %s", s)
	}
	for _, name := range []string{"2026-04.jsonl", "2026-05.jsonl"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		golden := filepath.Join(goldenDir, name)
		if *update {
			if err := os.MkdirAll(goldenDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run with -update to create it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s (run with -update if the change is intended):\ngot:\n%s\nwant:\n%s", name, golden, got, want)
		}
		for i, line := range lines(t, golden) {
			var e Entry
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatalf("%s line %d: %v", golden, i+1, err)
			}
			var again bytes.Buffer
			enc := json.NewEncoder(&again)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(e); err != nil {
				t.Fatal(err)
			}
			if again.String() != line+"\n" {
				t.Errorf("%s line %d does not round-trip:\n got %s\nwant %s", golden, i+1, again.String(), line)
			}
		}
	}
}
