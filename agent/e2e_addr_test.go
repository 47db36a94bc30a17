package agent_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestResearchThroughDataService runs the research tools with --addr
// against a real `wicket data serve`: the results equal the embedded
// engine's, and wicket://session names the service.
func TestResearchThroughDataService(t *testing.T) {
	proj := seededProject(t)
	serve := exec.Command(wicketBin, "--project", proj, "data", "serve", "--listen", "127.0.0.1:0")
	serve.Env = append(os.Environ(), cleanEnv...)
	stderr, err := serve.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = serve.Process.Kill(); _ = serve.Wait() })
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if _, rest, ok := strings.Cut(sc.Text(), " on http://"); ok {
				addr, _, _ := strings.Cut(rest, " ")
				addrc <- addr
			}
		}
	}()
	var addr string
	select {
	case addr = <-addrc:
	case <-time.After(30 * time.Second):
		t.Fatal("wicket data serve did not report its address")
	}

	remote := startMCP(t, nil, "", "--addr", addr)
	local := startMCP(t, nil, proj)
	sess := readSession(t, remote)
	if !strings.Contains(sess["data_service"].(string), addr) {
		t.Errorf("wicket://session data_service = %v", sess["data_service"])
	}
	for _, tc := range []struct{ tool, args string }{
		{"list_series", `{}`},
		{"run_backtest", `{"name":"sma_cross_missing","series":"BTC-USD@1d"}`},
	} {
		r, l := remote.call(t, tc.tool, tc.args), local.call(t, tc.tool, tc.args)
		if r.IsError != l.IsError || text(r) != text(l) {
			t.Errorf("%s differs through the data service:\nremote %.300s\nlocal  %.300s", tc.tool, text(r), text(l))
		}
	}
	src, _ := json.Marshal(sweepSource)
	args := `{"source":` + string(src) + `,"series":"BTC-USD@1d","grid":{"fast":[5,10],"slow":[30]}}`
	r, l := remote.call(t, "run_sweep", args), local.call(t, "run_sweep", args)
	// Both record in the project's research ledger (the data service's is
	// the same project here): the run ids differ, and the second sweep's
	// ledger count includes the first's trials.
	ro, lo := object(t, r), object(t, l)
	if n := ro["ledger_deflated_sharpe"].(map[string]any)["trials"]; n != 2.0 {
		t.Errorf("the remote sweep's ledger N = %v, want 2", n)
	}
	if n := lo["ledger_deflated_sharpe"].(map[string]any)["trials"]; n != 4.0 {
		t.Errorf("the local sweep's ledger N = %v, want 4 (the remote's 2 and its own)", n)
	}
	for _, o := range []map[string]any{ro, lo} {
		delete(o, "run_id")
		delete(o, "run_uri") // names the run id (agent/runs.go)
		delete(o, "ledger_deflated_sharpe")
		// Each proof draws its own seed, which the verdict names.
		o["lookahead_check"] = regexp.MustCompile(`seed [0-9a-f]{16}`).ReplaceAllString(o["lookahead_check"].(string), "seed S")
	}
	if rj, lj := marshalJSON(t, ro), marshalJSON(t, lo); rj != lj {
		t.Errorf("run_sweep differs through the data service:\nremote %.300s\nlocal  %.300s", rj, lj)
	}
	// The data service recorded the remote sweep under the MCP session
	// that asked for it.
	h := object(t, local.call(t, "research_history", `{"kind":"sweep","limit":500}`))
	sessions := map[any]bool{}
	for _, row := range h["trials"].([]any) {
		who := row.(map[string]any)["who"].(map[string]any)
		if who["surface"] != "mcp" {
			t.Errorf("a sweep row's who: %v", who)
		}
		sessions[who["session"]] = true
	}
	if len(sessions) != 2 {
		t.Errorf("sessions recorded: %v, want the remote and the local server's", sessions)
	}
}

func marshalJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const sweepSource = `"""test"""
fast = param.int("fast", 10, min=2, max=200)
slow = param.int("slow", 30, min=3, max=400)

def signals(bars):
    f = ta.sma(bars.close, fast)
    s = ta.sma(bars.close, slow)
    return {"long": ta.cross_above(f, s), "exit": ta.cross_below(f, s)}
`
