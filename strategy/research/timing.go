package research

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"wicket/strategy/ledger"
)

// SweepTiming is where a single-series sweep's time went, for Config.Timing:
// the caller's phases one after another (Plan, Run, Rank, After, Proof,
// which with the gaps between them make Total), the parts of some of them
// (Params within Plan; Calls, Worker and Work within Run; Ledger within
// After), and the winner's proof, which runs beside Rank and After.
// Durations travel as nanoseconds in JSON.
type SweepTiming struct {
	Workers      int `json:"workers"` // workers the chunks ran on
	Combinations int `json:"combinations"`
	Bars         int `json:"bars"`
	Chunks       int `json:"chunks"` // chunks answered
	// Plan is resolving and validating the request and the params
	// request (the strategy compiled and, by the worker, the bars read);
	// Params is that request's round trip, from asking to the answer.
	Plan   time.Duration `json:"plan"`
	Params time.Duration `json:"params"`
	// Run is from the first chunk handed out to the last answer.
	Run time.Duration `json:"run"`
	// Calls sums the chunks' round trips; Worker the part of them the
	// workers spent on the chunks, and Work the part of that the
	// combinations themselves took (summed over the workers).
	Calls  time.Duration `json:"calls"`
	Worker time.Duration `json:"worker"`
	Work   time.Duration `json:"work"`
	// Rank is ranking the trials.
	Rank time.Duration `json:"rank"`
	// After is the probability of backtest overfitting and the ledger,
	// side by side; Ledger the ledger's own part of it (appending the
	// rows, with its commit, and reading the trials for the deflated
	// Sharpe ratio). With no ledger, After is the PBO alone.
	After  time.Duration `json:"after"`
	Ledger time.Duration `json:"ledger"`
	// Proof is the time spent waiting for the winner's lookahead proof
	// after After; ProofRun the proof's own round trip, which starts
	// after Rank and runs in a worker beside After, or, with ProofEarly,
	// started before the last chunk's answer: it was the proof of the best
	// combination so far when a worker ran out of chunks, and that one
	// stayed the winner.
	Proof      time.Duration `json:"proof"`
	ProofRun   time.Duration `json:"proof_run"`
	ProofEarly bool          `json:"proof_early"`
	Total      time.Duration `json:"total"`
}

// TimingEnv names the environment variable that, set to 1, makes every
// single-series sweep of a Local without Config.Timing write its
// SweepTiming to stderr, one line of TimingPrefix and JSON, so that a
// benchmark of a built binary (agent's BenchmarkSweepFixedCostMCP) can say
// where a sweep's time went inside `wicket mcp`. It is read here and
// nowhere else, and changes nothing but that line.
const TimingEnv = "WICKET_SWEEP_TIMING"

// TimingPrefix begins the line a sweep writes under TimingEnv.
const TimingPrefix = "sweep timing: "

// timing is where a sweep's SweepTiming goes: Config.Timing, else the
// stderr line when TimingEnv asks for it, else nowhere (nil).
func (l *Local) timing() func(SweepTiming) {
	switch {
	case l.cfg.Timing != nil:
		return l.cfg.Timing
	case os.Getenv(TimingEnv) == "1":
		return func(tm SweepTiming) { writeTiming(os.Stderr, tm) }
	}
	return nil
}

// writeTiming writes tm to w as one line of TimingPrefix and JSON.
func writeTiming(w io.Writer, tm SweepTiming) {
	line, _ := json.Marshal(tm)
	fmt.Fprintf(w, "%s%s\n", TimingPrefix, line)
}

// timed hands tm, its total since start, to sink (when there is one).
func timed(sink func(SweepTiming), tm SweepTiming, start time.Time) {
	if sink != nil {
		tm.Total = time.Since(start)
		sink(tm)
	}
}

// timedLedger is l with its Recorder's calls timed into took, for a sweep
// whose timing someone reads; l itself when it has no Recorder.
func (l *Local) timedLedger(took *time.Duration) *Local {
	if l.cfg.Recorder == nil {
		return l
	}
	c := *l
	c.cfg.Recorder = timedRecorder{Recorder: l.cfg.Recorder, took: took}
	return &c
}

// timedRecorder is a Recorder that adds the time of its calls to took
// (called one at a time, as a sweep's ledger write does).
type timedRecorder struct {
	Recorder
	took *time.Duration
}

func (r timedRecorder) Append(ctx context.Context, rows []ledger.Row) (string, error) {
	defer r.since(time.Now())
	return r.Recorder.Append(ctx, rows)
}

func (r timedRecorder) Trials(ctx context.Context, q ledger.TrialQuery) (ledger.TrialSet, error) {
	defer r.since(time.Now())
	return r.Recorder.Trials(ctx, q)
}

func (r timedRecorder) since(t time.Time) { *r.took += time.Since(t) }

// clock times a sweep's phases for Config.Timing.
type clock struct {
	now  func() time.Time
	last time.Time
}

func (c *clock) lap() time.Duration {
	t := c.now()
	d := t.Sub(c.last)
	c.last = t
	return d
}
