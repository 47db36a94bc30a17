package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// deployPeeks reads the next bar's close.
const deployPeeks = `"""Buys when the next close is higher."""
def signals(bars):
    nxt = ta.shift(bars.close, -1)
    return {"long": nxt > bars.close, "exit": nxt < bars.close, "size": 0.5}
`

// TestDeployYesRefusesALookahead: wicket deploy --yes refuses a strategy
// that reads a later bar, in propose and auto modes alike, naming the
// line and the fix, and deploys nothing (issue 41 item 10).
func TestDeployYesRefusesALookahead(t *testing.T) {
	n, proj := deployNode(t)
	if err := os.WriteFile(filepath.Join(proj, "strategies", "peeks.star"), []byte(deployPeeks), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"--project", proj}
	for _, mode := range []string{"propose", "auto"} {
		args := append(append([]string{}, base...), "deploy", "peeks", "--series", "BTC-USD@1m", "--venue", "paper", "--capital", "1000",
			"--warmup", "20", "--mode", mode, "--addr", n.Addr, "--yes")
		code, stdout, stderr := wicket(t, args...)
		if code == 0 || strings.Contains(stdout, "deployed dep-") || !strings.Contains(stderr, "line 3") || !strings.Contains(stderr, "into the future") {
			t.Fatalf("%s --yes: code %d\n%s\n%s", mode, code, stdout, stderr)
		}
		t.Logf("%s: %s", mode, strings.TrimSpace(stderr))
	}
	code, stdout, _ := wicket(t, append(append([]string{}, base...), "node", "deployments", "--addr", n.Addr)...)
	if code != 0 || !strings.Contains(stdout, "no deployments") {
		t.Fatalf("a refused strategy deployed: %s", stdout)
	}
}
