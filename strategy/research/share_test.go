package research

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// twoWorkerGrid is 250 combinations of sma_cross (10 fast × 25 slow
// lengths): over 17,544 bars, enough work for two workers (workersFor).
var twoWorkerGrid = Grid{"fast": {From: fp(2), To: fp(20), Step: fp(2)}, "slow": {From: fp(30), To: fp(270), Step: fp(10)}}

// TestSweepSharesOneCopyOfTheBars: on two workers of this machine, one
// worker reads the bars from the store and both map that one copy
// read-only (a shared bars file, whose mapping each worker's
// /proc/PID/maps shows); the sweep's directory for it is gone once the
// sweep returns, and the result is the one-worker sweep's. With the
// default Config the same bars are too few to share.
func TestSweepSharesOneCopyOfTheBars(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/PID/maps")
	}
	demoProject(t) // made once, outside this test's TMPDIR
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	req := SweepRequest{StrategyRef: templateRef(t, "sma_cross"), Series: "ETH-USD@1h", Grid: twoWorkerGrid}
	one, err := newLocal(t, 1).Sweep(ctxT(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	pool := newPool(t, 2)
	l := NewLocal(Config{ProofSeed: fixedSeed, Project: demoProject(t), Pool: pool, ShareFromBars: 1}) // shared however few the bars
	two, err := l.Sweep(ctxT(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	one.RunID, two.RunID = "", ""
	if a, b := marshal(t, one), marshal(t, two); string(a) != string(b) {
		t.Errorf("1 and 2 workers differ:\n%s\n%s", a, b)
	}
	pids := pool.PIDs()
	if len(pids) != 2 {
		t.Fatalf("%d workers running, want 2", len(pids))
	}
	for _, pid := range pids {
		maps, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/maps")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, line := range strings.Split(string(maps), "\n") {
			if strings.Contains(line, tmp) && strings.Contains(line, ".bars") && strings.Contains(line, " r--s ") {
				n++
			}
		}
		if n != 1 {
			t.Errorf("worker %d maps %d read-only shared bars files, want 1:\n%s", pid, n, maps)
		}
	}
	// By default 17,544 bars are too few to share: each worker reads its own.
	fresh := newPool(t, 2)
	if _, err := NewLocal(Config{ProofSeed: fixedSeed, Project: demoProject(t), Pool: fresh}).Sweep(ctxT(t), req, nil); err != nil {
		t.Fatal(err)
	}
	if len(fresh.PIDs()) != 2 {
		t.Fatalf("%d workers running, want 2", len(fresh.PIDs()))
	}
	for _, pid := range fresh.PIDs() {
		maps, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/maps")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(maps), ".bars") {
			t.Errorf("worker %d maps a shared bars file for %d bars, under DefaultShareFromBars", pid, 17544)
		}
	}
	left, _ := os.ReadDir(tmp)
	for _, e := range left {
		if strings.HasPrefix(e.Name(), "wicket-bars-") {
			t.Errorf("the sweep left its shared bars behind: %s", e.Name())
		}
	}
}
