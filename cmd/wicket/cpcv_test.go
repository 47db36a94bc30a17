package main

import (
	"crypto/rand"
	"encoding/json"
	"strings"
	"testing"

	"wicket/internal/project"
)

// TestCPCVCommand: `wicket cpcv` cross-validates a grid over the demo
// series: C(6,2) = 15 splits, 5 paths, PBO; the text names them.
func TestCPCVCommand(t *testing.T) {
	dir := t.TempDir()
	if _, err := project.Init(dir, rand.Reader); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := wicketIn(t, dir, "data", "seed-demo"); code != 0 {
		t.Fatalf("seed-demo: exit %d: %s", code, stderr)
	}
	args := []string{"cpcv", "sma_cross", "--series", "BTC-USD@1d", "--grid", "fast=5,10", "--grid", "slow=30,60", "--groups", "6", "--test-groups", "2", "--embargo", "0.02"}
	code, stdout, stderr := wicketIn(t, dir, append(args, "--json")...)
	if code != 0 {
		t.Fatalf("cpcv: exit %d: %s", code, stderr)
	}
	var res struct {
		Splits     []json.RawMessage `json:"splits"`
		PathSharpe []*float64        `json:"path_sharpe"`
		PBO        *float64          `json:"pbo"`
		Purge      int               `json:"purge_bars"`
		PurgeFrom  string            `json:"purge_from"`
		Picks      []map[string]any  `json:"picks"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if len(res.Splits) != 15 || len(res.PathSharpe) != 5 || res.PBO == nil || res.PurgeFrom != "warmup" || res.Purge < 60 || len(res.Picks) != 15 {
		t.Fatalf("cpcv: %.600s", stdout)
	}
	code, stdout, stderr = wicketIn(t, dir, args...)
	if code != 0 || !strings.Contains(stdout, "6 groups, 2 tested: 15 splits, 5 paths") || !strings.Contains(stdout, "pbo ") {
		t.Errorf("text: exit %d: %s %s", code, stdout, stderr)
	}
	code, stdout, stderr = wicketIn(t, dir, "cpcv", "momentum_rotation", "--grid", "lookback=20,45", "--grid", "k=1,2", "--from", "2022-01-01", "--groups", "5")
	if code != 0 || !strings.Contains(stdout, "momentum_rotation on BTC-USD@1d,ETH-USD@1d,SOL-USD@1d") || !strings.Contains(stdout, "10 splits, 4 paths") {
		t.Errorf("portfolio: exit %d: %s %s", code, stdout, stderr)
	}
	if code, _, stderr := wicketIn(t, dir, "cpcv", "sma_cross", "--series", "BTC-USD@1d", "--grid", "fast=5,10", "--groups", "3", "--test-groups", "3"); code != exitUsage || !strings.Contains(stderr, "groups-1") {
		t.Errorf("k = N: exit %d: %s", code, stderr)
	}
}
