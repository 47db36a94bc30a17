package agent_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"wicket/strategy/research"
	"wicket/trace"
)

// BenchmarkSweepFixedCostMCP measures a sweep's fixed cost the way an
// agent pays it: run_sweep through mcp-go's client against a running
// `wicket mcp` (the real binary, with its research ledger and a trace),
// workers warm, the 100-combination SMA-cross sweep over each of the
// demo's 17,544-bar hourly series in turn (the grid of strategy/research's
// BenchmarkSweepFixedCost). The fixed cost is the round trip less the
// combinations' own time (their work shared out over the workers), and the
// fastest run is split into where every millisecond went: the sweep's own
// phases (research.SweepTiming, which the server writes to stderr under
// research.TimingEnv), the handler's share around the sweep (arguments,
// the answer's shaping; the trace's duration less the sweep's), and the
// rest of the round trip (the answer encoded, JSON-RPC both ways, mcp-go's
// decoding). The spec asks for a fixed cost under 20 ms.
func BenchmarkSweepFixedCostMCP(b *testing.B) {
	proj := benchProject(b)
	runBench(b, "--project", proj, "data", "seed-demo")
	runBench(b, "--project", proj, "strategy", "new", "sma", "--from", "sma_cross")
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			setWorkers(b, proj, workers)
			lines := newTimingLines(b)
			traceDir := filepath.Join(b.TempDir(), "trace")
			s := startMCPTo(b, lines, []string{research.TimingEnv + "=1"}, proj, "--trace-dir", traceDir)
			// Warm: the workers start and the ledger opens on another
			// series, which the timed sweeps do not use.
			for range workers {
				sweepOverMCP(b, s, "SPY@1d")
				lines.next(b)
			}
			bare := bareRoundTrip(b, s)
			var runs []mcpSweep
			b.ResetTimer()
			for i := 0; i < b.N*fixedCostRounds; i++ {
				for _, series := range benchSeries {
					start := time.Now()
					size := sweepOverMCP(b, s, series)
					runs = append(runs, mcpSweep{trip: time.Since(start), bytes: size, tm: lines.next(b)})
				}
			}
			b.StopTimer()
			handlerTimes(b, traceDir, runs, workers)
			sort.Slice(runs, func(i, j int) bool { return runs[i].trip < runs[j].trip })
			best, median := runs[0], runs[len(runs)/2]
			b.ReportMetric(ms(best.fixed()), "fixed-ms")
			b.ReportMetric(ms(median.fixed()), "median-fixed-ms")
			b.ReportMetric(ms(best.own()), "combinations-ms")
			benchRatios = append(benchRatios, fmt.Sprintf("ratio sweep fixed cost over MCP / 20 ms, 17544 bars, 100 combinations, %d warm worker(s): %.2fx (target < 1; median of %d %.2fx; %s)",
				workers, ms(best.fixed())/20, len(runs), ms(median.fixed())/20, best.breakdown(bare)))
		})
	}
}

// benchRatios are the ratio lines of this package's benchmarks, printed
// after them (TestMain), each on a line of its own for `make bench`.
var benchRatios []string

// benchSeries are the demo's 17,544-bar hourly series; each timed sweep
// runs over the next, as strategy/research's fixed-cost benchmark does.
var benchSeries = []string{"BTC-USD@1h", "ETH-USD@1h", "SOL-USD@1h", "SPY@1h"}

// fixedCostRounds is how many times each series is swept per op.
const fixedCostRounds = 3

// benchGrid is strategy/research's benchGrid: 10 fast × 10 slow lengths.
const benchGrid = `{"fast": {"from": 2, "to": 20, "step": 2}, "slow": {"from": 30, "to": 120, "step": 10}}`

// mcpSweep is one timed run_sweep: the client's round trip, the answer's
// size, the sweep's own timing from the server and the handler's time
// from the trace.
type mcpSweep struct {
	trip    time.Duration
	bytes   int
	tm      research.SweepTiming
	handler time.Duration
}

// own is the combinations' own time: their work over the workers.
func (r mcpSweep) own() time.Duration { return r.tm.Work / time.Duration(max(1, r.tm.Workers)) }

// fixed is everything else of the round trip.
func (r mcpSweep) fixed() time.Duration { return r.trip - r.own() }

// breakdown says where the run's milliseconds went, the sweep's phases
// first (research.SweepTiming), then the server around it and the wire;
// bare is a small tool's round trip on the same session.
func (r mcpSweep) breakdown(bare time.Duration) string {
	t := r.tm
	n := time.Duration(max(1, t.Workers))
	inRun := t.Run - (t.Worker-t.Work)/n - (t.Calls-t.Worker)/n - r.own()
	pbo := "PBO beside the ledger"
	if t.Ledger == 0 {
		pbo = "PBO"
	}
	parts := []string{
		fmt.Sprintf("round trip %.1f ms = combinations' own %.1f ms (%.1f ms of work over %d workers, %d chunks) + fixed %.1f ms", ms(r.trip), ms(r.own()), ms(t.Work), t.Workers, t.Chunks, ms(r.fixed())),
		fmt.Sprintf("params request %.1f", ms(t.Params)),
		fmt.Sprintf("rest of the plan %.1f", ms(t.Plan-t.Params)),
		fmt.Sprintf("chunks' bars and compiling in the workers %.1f", ms((t.Worker-t.Work)/n)),
		fmt.Sprintf("chunks' pipe and JSON %.1f", ms((t.Calls-t.Worker)/n)),
		fmt.Sprintf("idle between chunks %.1f", ms(inRun)),
		fmt.Sprintf("rank %.1f", ms(t.Rank)),
		fmt.Sprintf("%s %.1f (ledger alone %.1f)", pbo, ms(t.After), ms(t.Ledger)),
		fmt.Sprintf("waiting for the winner's proof %.1f (its run %.1f, beside them)", ms(t.Proof), ms(t.ProofRun)),
		fmt.Sprintf("sweep other %.1f", ms(t.Total-t.Plan-t.Run-t.Rank-t.After-t.Proof)),
		fmt.Sprintf("handler around the sweep (arguments, the answer's shaping) %.1f", ms(r.handler-t.Total)),
		fmt.Sprintf("answer encoded, JSON-RPC both ways and decoded (%d bytes) %.1f, of which a bare round trip %.1f", r.bytes, ms(r.trip-r.handler), ms(bare)),
	}
	return strings.Join(parts, "; ")
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// sweepOverMCP runs the benchmark's sweep over series and returns the size
// of its answer's content.
func sweepOverMCP(b *testing.B, s *session, series string) int {
	b.Helper()
	res := s.call(b, "run_sweep", fmt.Sprintf(`{"name": "sma", "series": %q, "grid": %s}`, series, benchGrid))
	if res.IsError {
		b.Fatalf("run_sweep %s: %s", series, text(res))
	}
	body, err := json.Marshal(res)
	if err != nil {
		b.Fatal(err)
	}
	if !bytes.Contains(body, []byte(`"evaluated":100`)) {
		b.Fatalf("run_sweep %s did not evaluate 100 combinations: %.500s", series, body)
	}
	return len(body)
}

// bareRoundTrip is the fastest of 20 round trips of a small tool on s: what
// JSON-RPC and mcp-go cost a call whatever it does.
func bareRoundTrip(b *testing.B, s *session) time.Duration {
	b.Helper()
	best := time.Hour
	for range 20 {
		start := time.Now()
		if res := s.call(b, "list_series", `{"limit": 1}`); res.IsError {
			b.Fatalf("list_series: %s", text(res))
		}
		best = min(best, time.Since(start))
	}
	return best
}

// handlerTimes fills each run's handler time from the trace: the timed
// run_sweep calls are its last len(runs) entries for the tool.
func handlerTimes(b *testing.B, dir string, runs []mcpSweep, warm int) {
	b.Helper()
	entries, err := (&trace.Reader{Dir: dir}).Read(trace.Filter{Tool: "run_sweep"})
	if err != nil {
		b.Fatal(err)
	}
	if len(entries) != warm+len(runs) {
		b.Fatalf("the trace holds %d run_sweep calls, want %d", len(entries), warm+len(runs))
	}
	for i, e := range entries[warm:] {
		runs[i].handler = time.Duration(e.MS * float64(time.Millisecond))
	}
}

// setWorkers sets the project's [research] workers.
func setWorkers(b *testing.B, proj string, n int) {
	b.Helper()
	path := filepath.Join(proj, "wicket.toml")
	cfg, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	lines := strings.Split(string(cfg), "\n")
	set := false
	for i, l := range lines {
		if strings.HasPrefix(l, "workers = ") {
			lines[i], set = fmt.Sprintf("workers = %d", n), true
		}
	}
	if !set {
		b.Fatalf("%s has no workers line", path)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		b.Fatal(err)
	}
}

// runBench runs the binary to completion (for set-up commands).
func runBench(b *testing.B, args ...string) {
	b.Helper()
	cmd := exec.Command(wicketBin, args...)
	cmd.Env = append(os.Environ(), cleanEnv...)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("wicket %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// timingLines is the server's stderr: the sweep timing lines go to next,
// the rest to the log.
type timingLines struct {
	b   *testing.B
	mu  sync.Mutex
	buf []byte
	got chan research.SweepTiming
}

func newTimingLines(b *testing.B) *timingLines {
	return &timingLines{b: b, got: make(chan research.SweepTiming, 256)}
}

func (w *timingLines) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(w.buf[:i])
		w.buf = w.buf[i+1:]
		rest, ok := strings.CutPrefix(line, research.TimingPrefix)
		if !ok {
			w.b.Logf("mcp stderr: %s", line)
			continue
		}
		var tm research.SweepTiming
		if err := json.Unmarshal([]byte(rest), &tm); err != nil {
			w.b.Errorf("a sweep timing line that is not SweepTiming: %v: %s", err, line)
			continue
		}
		w.got <- tm
	}
}

// next is the timing of the sweep that just answered (the server writes
// it before the answer, so it is on its way).
func (w *timingLines) next(b *testing.B) research.SweepTiming {
	b.Helper()
	select {
	case tm := <-w.got:
		return tm
	case <-time.After(time.Minute):
		b.Fatalf("no %q line on the server's stderr (is %s read?)", research.TimingPrefix, research.TimingEnv)
	}
	return research.SweepTiming{}
}
