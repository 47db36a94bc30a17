package research

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"wicket/internal/testkit"
	"wicket/strategy/worker"
)

// TestWarmSweepsAgree: the same sweep run again and again in one
// long-lived pool (a warm `wicket mcp` session: the workers keep their
// bars, memo, spill and the columns they shared) gives bit for bit the
// same result on one worker and on two, cold and warm. A warm sweep on
// one worker computes no SMA: the winner's proof left the columns where
// the next sweep finds them. On two, each worker hands the columns it
// holds on to the next sweep when its first chunk starts, so a warm
// sweep computes only those the other needed before that (fewer than the
// cold sweep's, whichever worker runs which chunk).
func TestWarmSweepsAgree(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no mapped files: nothing is shared or kept between sweeps")
	}
	p := benchProject(t, t.TempDir(), sineBars(140_000))
	req := SweepRequest{StrategyRef: templateRef(t, "sma_cross"), Series: "BENCH@1h",
		Grid: Grid{"fast": {From: fp(5), To: fp(25), Step: fp(5)}, "slow": {From: fp(30), To: fp(150), Step: fp(20)}}}
	var want []byte
	for _, size := range []int{1, 2} {
		var c computedCounter
		pool := newPool(t, size)
		l := NewLocal(Config{ProofSeed: fixedSeed, Project: p, Pool: pool, Computed: c.add})
		var cold uint64
		for round := range 3 {
			before := c.get("sma")
			res, err := l.Sweep(ctxT(t), req, nil)
			if err != nil {
				t.Fatal(err)
			}
			res.RunID = ""
			got := marshal(t, res)
			if want == nil {
				want = got
			} else if string(got) != string(want) {
				t.Errorf("%d workers, sweep %d differs from the first:\n%s\n%s", size, round+1, got, want)
			}
			switch sma := c.get("sma") - before; {
			case round == 0:
				cold = sma
			case size == 1 && sma != 0:
				t.Errorf("1 worker: warm sweep %d computed %d SMAs, want 0", round+1, sma)
			case sma >= cold:
				t.Errorf("2 workers: warm sweep %d computed %d SMAs, the cold one %d", round+1, sma, cold)
			}
		}
		if size == 2 && len(pool.PIDs()) != 2 {
			t.Fatalf("%d workers ran the sweeps, want 2", len(pool.PIDs()))
		}
	}
}

// BenchmarkSweepWarm1M is agent's BenchmarkSweepWarmMCP without the MCP
// server: the reference's grid over a million bars swept again and again
// in one long-lived pool that shares the cores out as `wicket mcp`'s does
// (Config.Procs 0), on one worker and then two, the first sweep of each
// left out. It logs each sweep's phases, the CPU this process and its
// workers used, and the CPU the rest of the machine used meanwhile (a
// busy machine takes the second worker's core), and reports the speed-up
// of the fastest sweeps.
func BenchmarkSweepWarm1M(b *testing.B) {
	p := benchProject(b, b.TempDir(), sineBars(1_000_000))
	req := SweepRequest{StrategyRef: templateRef(b, "sma_cross"), Series: "BENCH@1h", Grid: refGrid, Costs: refCosts}
	best := map[int]time.Duration{}
	for _, size := range []int{1, 2} {
		pool, err := worker.NewPool(worker.Config{Size: size, MemoryMiB: 1024})
		if err != nil {
			b.Fatal(err)
		}
		var (
			tm SweepTiming
			c  computedCounter
		)
		l := NewLocal(Config{ProofSeed: fixedSeed, Project: p, Pool: pool, Timing: func(t SweepTiming) { tm = t }, Computed: c.add})
		best[size] = time.Hour
		for i := 0; i <= b.N*warmRounds; i++ {
			cpu0, busy0, sma0 := selfAndWorkersCPU(), testkit.MachineBusy(), c.get("sma")
			start := time.Now()
			var chunks string
			progress := func(pr Progress) { // the workers' peaks over the chunks, apart from the proof's
				if pr.Done == pr.Total && pr.Total > 0 {
					chunks = workerPeaks(pool.PIDs())
				}
			}
			if _, err := l.Sweep(ctxT(b), req, progress); err != nil {
				b.Fatal(err)
			}
			wall := time.Since(start)
			cpu, others := selfAndWorkersCPU()-cpu0, testkit.MachineBusy()-busy0-(selfAndWorkersCPU()-cpu0)
			b.Logf("%d workers, sweep %d: peak RSS of the workers over the chunks %s, after %s", size, i, chunks, workerPeaks(pool.PIDs()))
			if i == 0 {
				continue // the cold sweep
			}
			best[size] = min(best[size], wall)
			b.Logf("%d workers: wall %v, CPU %v, the rest of the machine %v; plan %.1f (params %.1f), run %.1f (%d chunks, %d SMAs computed; worker %.1f, work %.1f), after %.1f, proof %.1f (its run %.1f, early %t)",
				size, wall.Round(time.Millisecond), cpu.Round(time.Millisecond), others.Round(time.Millisecond), ms(tm.Plan), ms(tm.Params), ms(tm.Run), tm.Chunks, c.get("sma")-sma0,
				ms(tm.Worker), ms(tm.Work), ms(tm.After), ms(tm.Proof), ms(tm.ProofRun), tm.ProofEarly)
		}
		for _, pid := range pool.PIDs() {
			b.Logf("%d workers: worker %d: %s", size, pid, memoryOf(pid))
		}
		pool.Close()
	}
	speedup := best[1].Seconds() / best[2].Seconds()
	b.ReportMetric(speedup, "speedup")
	addRatio(fmt.Sprintf("ratio warm sweep 2 workers / 1 worker, 1000000 bars, in process: %.2fx (target >= 1.85x; 1 worker %s, 2 workers %s)",
		speedup, best[1].Round(time.Millisecond), best[2].Round(time.Millisecond)))
}

// warmRounds is how many timed sweeps each pool runs per op.
const warmRounds = 4

// memoryOf says where pid's resident memory is (Linux's smaps): its peak
// (VmHWM), its resident and proportional set sizes, and the resident
// pages by mapping: the Go heap and other anonymous memory, the shared
// bars file, the shared columns, the spill, the rest.
func memoryOf(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return err.Error()
	}
	kb := func(line string) int64 {
		f := strings.Fields(line)
		if len(f) < 2 {
			return 0
		}
		n, _ := strconv.ParseInt(f[1], 10, 64)
		return n
	}
	rss, pss := map[string]int64{}, map[string]int64{}
	var what string
	var order []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if !strings.HasSuffix(f[0], ":") || strings.Contains(f[0], "-") { // a mapping's header
			path := ""
			if len(f) >= 6 {
				path = f[5]
			}
			switch {
			case path == "" || strings.HasPrefix(path, "["):
				what = "anonymous"
			case strings.Contains(path, "wicket-memo"):
				what = "spill"
			case strings.HasSuffix(path, ".col") || strings.Contains(path, ".col "):
				what = "shared columns"
			case strings.Contains(path, "bars"):
				what = "bars file"
			default:
				what = "other files"
			}
			if _, ok := rss[what]; !ok {
				order = append(order, what)
				rss[what] = 0
			}
			continue
		}
		switch f[0] {
		case "Rss:":
			rss[what] += kb(line)
		case "Pss:":
			pss[what] += kb(line)
		}
	}
	hwm := fmt.Sprintf("%.1f MB", float64(testkit.PeakRSS(strconv.Itoa(pid)))/1e6)
	var total, totalP int64
	parts := []string{}
	for _, w := range order {
		total += rss[w]
		totalP += pss[w]
		if rss[w] > 0 {
			parts = append(parts, fmt.Sprintf("%s %.1f/%.1f", w, float64(rss[w])/1024, float64(pss[w])/1024))
		}
	}
	return fmt.Sprintf("peak %s; now RSS %.1f MB, PSS %.1f MB (MiB resident/proportional: %s)", hwm, float64(total)/1024, float64(totalP)/1024, strings.Join(parts, ", "))
}

// workerPeaks lists each pid's peak resident memory (VmHWM) since the
// last call, which resets it (Linux's clear_refs).
func workerPeaks(pids []int) string {
	var out []string
	for _, pid := range pids {
		out = append(out, fmt.Sprintf("%.1f MB", float64(testkit.PeakRSS(strconv.Itoa(pid)))/1e6))
		os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
	}
	return strings.Join(out, ", ")
}

// selfAndWorkersCPU is the CPU time of this process and its workers.
func selfAndWorkersCPU() time.Duration {
	pid := os.Getpid()
	return testkit.ThreadsCPU(append([]int{pid}, testkit.Descendants(pid)...)...)
}
