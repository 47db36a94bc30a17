package cluster_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"wicket/internal/testkit"
	"wicket/strategy/cluster"
	"wicket/strategy/clustertest"
	"wicket/strategy/ledger"
	"wicket/strategy/research"
	"wicket/strategy/worker"
)

// stuckPool is a worker.Pool that never gets to run a chunk: its runs
// wait until cancelled, as on a worker stuck behind a slow disk or a
// stopped process. Each run says it began on started.
type stuckPool struct {
	*worker.Pool
	started chan struct{}
}

func (s stuckPool) Do(ctx context.Context, kind string, req, resp any) error {
	select {
	case s.started <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return context.Cause(ctx)
}

// serveWorker starts a cluster worker in this process that runs its
// chunks on pool and waits until it has joined; stop ends it (as its
// process would on SIGTERM: the chunks it holds go back to the queue).
func serveWorker(t *testing.T, url string, pool cluster.Runner) (log *logBuf, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	log = &logBuf{joined: make(chan struct{})}
	served := make(chan error, 1)
	go func() {
		served <- cluster.Serve(ctx, cluster.WorkerOptions{Options: cluster.Options{Key: testKey, URL: url}, Pool: pool, CacheDir: t.TempDir(), Log: log})
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-served; err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(stop)
	select {
	case <-log.joined:
	case err := <-served:
		t.Fatalf("the worker did not join: %v", err)
	case <-time.After(30 * time.Second): // a bound on a hang
		t.Fatal("the worker did not join in 30s")
	}
	return log, stop
}

// recorded is a research engine on the demo project whose sweeps go to
// chunks (nil: in process) and are recorded in a ledger of their own.
func recorded(t *testing.T, chunks research.Dispatcher) (*research.Local, *ledger.Ledger) {
	t.Helper()
	key := testkit.Bytes(t, 32)
	lg, err := ledger.Open(filepath.Join(t.TempDir(), "research.db"), ledger.Options{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lg.Close() })
	cfg := research.Config{ProofSeed: fixedProofSeed, Project: demoProject(t), Pool: newPool(t), Recorder: lg}
	if chunks != nil {
		cfg.Chunks = chunks
	}
	return research.NewLocal(cfg), lg
}

// sweepOnce runs the sweep in the background and checks that its
// progress counts every combination exactly once.
type sweepOnce struct {
	done chan struct{}
	res  research.SweepResult
	err  error
	bad  string // a progress report that went back or past the total
}

func startSweep(ctx context.Context, l *research.Local, req research.SweepRequest) *sweepOnce {
	s := &sweepOnce{done: make(chan struct{})}
	go func() {
		defer close(s.done)
		last := research.Progress{}
		s.res, s.err = l.Sweep(ctx, req, func(p research.Progress) {
			if p.Done < last.Done || p.Done > p.Total {
				s.bad = p.Message
			}
			last = p
		})
		if s.err == nil && last.Done != last.Total {
			s.bad = "progress ended at " + last.Message
		}
	}()
	return s
}

func (s *sweepOnce) wait(t *testing.T) research.SweepResult {
	t.Helper()
	select {
	case <-s.done:
	case <-time.After(60 * time.Second): // a bound on a hang
		t.Fatal("the cluster sweep did not finish in 60s")
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
	if s.bad != "" {
		t.Errorf("a combination was counted twice or lost: %s", s.bad)
	}
	return s.res
}

// sameSweep checks that a cluster sweep is the in-process one, and that
// each ledger counts the sweep's combinations once.
func sameSweep(t *testing.T, want, got research.SweepResult, wantLedger, gotLedger *ledger.Ledger) {
	t.Helper()
	if got.Partial || got.Evaluated != want.Combinations {
		t.Errorf("partial %v, evaluated %d of %d", got.Partial, got.Evaluated, want.Combinations)
	}
	want.RunID, got.RunID = "", ""
	a, _ := json.Marshal(want)
	b, _ := json.Marshal(got)
	if string(a) != string(b) {
		t.Errorf("the cluster sweep differs from the in-process sweep:\n%s\n%s", a, b)
	}
	for name, lg := range map[string]*ledger.Ledger{"in-process": wantLedger, "cluster": gotLedger} {
		ts, err := lg.Trials(context.Background(), ledger.TrialQuery{Series: want.Series})
		if err != nil {
			t.Fatal(err)
		}
		if ts.N() != want.Combinations {
			t.Errorf("the %s ledger counts %d trials of a %d-combination sweep", name, ts.N(), want.Combinations)
		}
	}
}

func whoCtx(t *testing.T) context.Context {
	return ledger.WithWho(t.Context(), ledger.Who{Surface: ledger.SurfaceCLI})
}

// TestStuckWorkersChunksAreCopiedToAnIdleOne: a worker that holds two
// chunks and never finishes them (its ack wait is far off) does not hold
// the sweep up: a worker that joins later finds nothing on the queue, is
// sent copies of the stuck chunks, and the sweep is the in-process one,
// each combination counted once in its progress and in the ledger; the
// stuck worker's runs are cancelled once the copies answered.
func TestStuckWorkersChunksAreCopiedToAnIdleOne(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	ctx := whoCtx(t)
	local, wantLedger := recorded(t, nil)
	want, err := local.Sweep(ctx, chunkedReq(t), nil)
	if err != nil {
		t.Fatal(err)
	}

	url := clustertest.Server(t)
	stuck := stuckPool{Pool: newPool(t), started: make(chan struct{}, 1)}
	stuckLog, _ := serveWorker(t, url, stuck)
	d, err := cluster.Dial(ctx, cluster.DispatcherOptions{Options: cluster.Options{Key: testKey, URL: url}, WaitWorkers: tailWaitWorkers})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	remote, gotLedger := recorded(t, d)
	sweep := startSweep(ctx, remote, chunkedReq(t))
	select {
	case <-stuck.started:
	case <-sweep.done:
		t.Fatalf("the sweep ended before the stuck worker ran a chunk: %v", sweep.err)
	}
	waitHeld(t, url, 2) // the stuck worker holds its first two chunks
	idleLog, _ := serveWorker(t, url, newPool(t))
	got := sweep.wait(t)
	sameSweep(t, want, got, wantLedger, gotLedger)
	if !strings.Contains(idleLog.String(), ": running (copy)") {
		t.Errorf("the idle worker ran no tail copy; its log:\n%s", idleLog.String())
	}
	waitFor(t, func() bool { return strings.Contains(stuckLog.String(), ": cancelled") },
		func() string { return "the stuck worker's run was never cancelled; its log:\n" + stuckLog.String() })
}

// TestStoppedWorkersTwoChunksGoToAnother: a worker that stops while it
// holds two chunks (one running, one fetched ahead) gives both back, and
// another worker runs them: the sweep is the in-process one, each
// combination counted once.
func TestStoppedWorkersTwoChunksGoToAnother(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	ctx := whoCtx(t)
	local, wantLedger := recorded(t, nil)
	want, err := local.Sweep(ctx, chunkedReq(t), nil)
	if err != nil {
		t.Fatal(err)
	}

	url := clustertest.Server(t)
	stuck := stuckPool{Pool: newPool(t), started: make(chan struct{}, 1)}
	_, stop := serveWorker(t, url, stuck)
	d, err := cluster.Dial(ctx, cluster.DispatcherOptions{Options: cluster.Options{Key: testKey, URL: url}, WaitWorkers: tailWaitWorkers})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	remote, gotLedger := recorded(t, d)
	sweep := startSweep(ctx, remote, chunkedReq(t))
	waitHeld(t, url, 2)
	stop()
	otherLog, _ := serveWorker(t, url, newPool(t))
	got := sweep.wait(t)
	sameSweep(t, want, got, wantLedger, gotLedger)
	if strings.Count(otherLog.String(), ": running (") < 2 {
		t.Errorf("the other worker ran fewer than the two chunks given back; its log:\n%s", otherLog.String())
	}
}

// tailWaitWorkers is how long the tail tests' sweeps wait for a worker.
// Between one worker's stop (its heartbeats end first, then it gives its
// chunks back and drains its connection) and the next one's join, the
// cluster has no worker; on a loaded machine that gap once outlasted the
// default 10 s and the sweep failed for want of workers, which these
// tests are not about (TestNoWorkersIsAClearErrorInBoundedTime is).
const tailWaitWorkers = 2 * time.Minute

// chunkedReq is a sweep a one-worker cluster cuts into two chunks, as it
// does in process: 247 combinations over the 17,544 hourly bars of
// SPY@1h, two workers' worth (worthChunk), for the tests of what becomes
// of the chunks a worker holds.
func chunkedReq(t *testing.T) research.SweepRequest {
	req := sweepReq(t, "SPY@1h")
	fp := func(x float64) *float64 { return &x }
	req.Grid = research.Grid{"fast": {From: fp(2), To: fp(20), Step: fp(1)}, "slow": {From: fp(30), To: fp(150), Step: fp(10)}}
	return req
}

// waitHeld waits until the workers' consumer has n chunks delivered and
// not acknowledged: held by workers.
func waitHeld(t *testing.T, url string, n int) {
	t.Helper()
	_, js := jetStream(t, url)
	cons, err := js.Consumer(t.Context(), cluster.StreamName, cluster.ConsumerName)
	if err != nil {
		t.Fatal(err)
	}
	held := 0
	waitFor(t, func() bool {
		info, err := cons.Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		held = info.NumAckPending
		return held == n
	}, func() string { return "the workers hold " + string(rune('0'+held)) + " chunks, not the ones wanted" })
}

// waitFor polls ok until it holds, for at most 30s (a bound on a hang,
// not a timing assertion).
func waitFor(t *testing.T, ok func() bool, why func() string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal(why())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
