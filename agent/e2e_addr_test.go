package agent_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
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
	if r.IsError || text(r) != text(l) {
		t.Errorf("run_sweep differs through the data service:\nremote %.300s\nlocal  %.300s", text(r), text(l))
	}
}

const sweepSource = `"""test"""
fast = param.int("fast", 10, min=2, max=200)
slow = param.int("slow", 30, min=3, max=400)

def signals(bars):
    f = ta.sma(bars.close, fast)
    s = ta.sma(bars.close, slow)
    return {"long": ta.cross_above(f, s), "exit": ta.cross_below(f, s)}
`
