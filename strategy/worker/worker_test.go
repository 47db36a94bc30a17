package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testHandlers are kinds that answer, misbehave or fail on purpose (the
// strategy kinds are tested in strategy/worker/handlers).
func testHandlers() Handlers {
	h := Handlers{}
	h["echo"] = Typed(func(_ context.Context, s string) (string, error) { return s, nil })
	h["sleep"] = Typed(func(ctx context.Context, _ struct{}) (struct{}, error) { select {} })
	h["exit"] = Typed(func(context.Context, struct{}) (struct{}, error) {
		fmt.Fprintln(os.Stderr, "worker going down on purpose")
		os.Exit(7)
		return struct{}{}, nil
	})
	h["environ"] = Typed(func(context.Context, struct{}) ([]string, error) { return os.Environ(), nil })
	h["panic"] = Typed(func(context.Context, struct{}) (struct{}, error) { panic("boom") })
	h["stdout"] = Typed(func(_ context.Context, s string) (string, error) {
		fmt.Println("stray output that must not reach the protocol")
		os.Stdout.WriteString("\x00\x00\x00\x05junk")
		return s, nil
	})
	h["spin"] = Typed(func(context.Context, struct{}) (int, error) {
		x := 0
		for {
			x++
		}
	})
	h[KindSweep] = Typed(func(context.Context, SweepChunk) (SweepChunkResult, error) { return sampleSweepResult(), nil }) // sweepwire_test.go
	h["procs"] = Typed(func(context.Context, struct{}) (int, error) { return runtime.GOMAXPROCS(0), nil })
	h["alloc"] = Typed(func(_ context.Context, mib int) (int, error) {
		var keep [][]byte
		for i := 0; i < mib; i++ {
			b := make([]byte, 1<<20)
			b[0] = 1
			keep = append(keep, b)
		}
		return len(keep), nil
	})
	return h
}

func TestMain(m *testing.M) {
	ServeIfWorker(testHandlers())
	os.Exit(m.Run())
}

func newPool(t *testing.T, cfg Config) *Pool {
	t.Helper()
	p, err := NewPool(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func ctxT(t *testing.T) context.Context {
	// A guard against a hang, not a timing assertion.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestGoAllocationLimit: memory use in a handler's Go code is bounded too.
func TestGoAllocationLimit(t *testing.T) {
	// The runtime reserves address space in 64 MiB arenas, so the
	// allowance leaves room for two beyond the 32 MiB asked for.
	p := newPool(t, Config{Size: 1, MemoryMiB: 256})
	n, err := Call[int, int](ctxT(t), p, "alloc", 32)
	if err != nil || n != 32 {
		t.Fatalf("32 MiB within a 256 MiB limit: %d, %v", n, err)
	}
	_, err = Call[int, int](ctxT(t), p, "alloc", 4096)
	var we *Error
	if !errors.As(err, &we) || we.Kind != KindMemory {
		t.Fatalf("4 GiB in a 256 MiB worker: %v", err)
	}
}

// TestCancelKillsStuckWorker: a request that never returns is stopped by
// its context; the worker is killed and replaced.
func TestCancelKillsStuckWorker(t *testing.T) {
	p := newPool(t, Config{Size: 1})
	ctx, cancel := context.WithTimeout(ctxT(t), 300*time.Millisecond)
	defer cancel()
	err := p.Do(ctx, "sleep", struct{}{}, nil)
	var we *Error
	if !errors.As(err, &we) || we.Kind != KindCanceled || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%v", err)
	}
	if got, err := Call[string, string](ctxT(t), p, "echo", "again"); err != nil || got != "again" {
		t.Fatalf("after cancel: %q %v", got, err)
	}
	if s := p.Stats(); s.Died != 1 || s.Started != 2 {
		t.Fatalf("stats %+v", s)
	}
}

func TestIdleWorkerKilled(t *testing.T) {
	p := newPool(t, Config{Size: 1})
	if _, err := Call[string, string](ctxT(t), p, "echo", "one"); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	w := p.idle[0]
	p.mu.Unlock()
	w.cmd.Process.Kill()
	<-w.exited
	if got, err := Call[string, string](ctxT(t), p, "echo", "two"); err != nil || got != "two" {
		t.Fatalf("%q %v", got, err)
	}
	if s := p.Stats(); s.Started != 2 || s.Died != 1 {
		t.Fatalf("%+v", s)
	}
}

func TestCrashAndPanic(t *testing.T) {
	p := newPool(t, Config{Size: 1})
	err := p.Do(ctxT(t), "exit", struct{}{}, nil)
	var we *Error
	if !errors.As(err, &we) || we.Kind != KindCrashed || !strings.Contains(we.Msg, "worker going down on purpose") {
		t.Fatalf("%v", err)
	}
	err = p.Do(ctxT(t), "panic", struct{}{}, nil)
	if !errors.As(err, &we) || we.Kind != KindHandler || !strings.Contains(we.Msg, "boom") {
		t.Fatalf("%v", err)
	}
	// A handler panic is an error, not a death.
	if s := p.Stats(); s.Died != 1 {
		t.Fatalf("stats %+v", s)
	}
	err = p.Do(ctxT(t), "nope", struct{}{}, nil)
	if !errors.As(err, &we) || we.Kind != KindRequest || !strings.Contains(we.Msg, "this worker handles: alloc, ") || !strings.Contains(we.Msg, "stdout") {
		t.Fatalf("%v", err)
	}
	err = p.Do(ctxT(t), "echo", map[string]int{"x": 1}, nil)
	if !errors.As(err, &we) || we.Kind != KindRequest {
		t.Fatalf("a malformed body: %v", err)
	}
}

func TestStdoutProtected(t *testing.T) {
	var log bytes.Buffer
	var mu sync.Mutex
	p := newPool(t, Config{Size: 1, Log: lockedWriter{&mu, &log}})
	for i := 0; i < 3; i++ {
		got, err := Call[string, string](ctxT(t), p, "stdout", "intact")
		if err != nil || got != "intact" {
			t.Fatalf("%q %v", got, err)
		}
	}
	p.Close()
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(log.String(), "stray output") {
		t.Fatalf("stray stdout did not go to stderr: %q", log.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func TestCPULimit(t *testing.T) {
	if testing.Short() {
		t.Skip("uses a second of CPU")
	}
	p := newPool(t, Config{Size: 1, CPUSeconds: 1})
	err := p.Do(ctxT(t), "spin", struct{}{}, nil)
	var we *Error
	if !errors.As(err, &we) || we.Kind != KindCPU {
		t.Fatalf("%v", err)
	}
}

func TestParseArgs(t *testing.T) {
	l, err := ParseArgs([]string{"--memory-mib=512", "--cpu-seconds=60", "--procs=1"})
	if err != nil || l != (Limits{MemoryMiB: 512, CPUSeconds: 60, Procs: 1}) {
		t.Fatalf("%+v %v", l, err)
	}
	for _, bad := range [][]string{{"--memory-mib=1"}, {"--bogus"}, {"extra"}} {
		if _, err := ParseArgs(bad); err == nil {
			t.Errorf("ParseArgs(%q) accepted", bad)
		}
	}
}

func TestFrames(t *testing.T) {
	var b bytes.Buffer
	if err := writeFrame(&b, Request{ID: 7, Kind: "echo"}, []byte(`"x"`)); err != nil {
		t.Fatal(err)
	}
	if err := writeFrame(&b, Response{ID: 8}, nil); err != nil {
		t.Fatal(err)
	}
	var r Request
	if body, err := readFrame(&b, &r); err != nil || r.ID != 7 || r.Kind != "echo" || string(body) != `"x"` {
		t.Fatalf("%+v %q %v", r, body, err)
	}
	var resp Response
	if body, err := readFrame(&b, &resp); err != nil || resp.ID != 8 || body != nil {
		t.Fatalf("%+v %q %v", resp, body, err)
	}
	huge := []byte{0xff, 0xff, 0xff, 0xff}
	if _, err := readFrame(bytes.NewReader(huge), &r); err == nil || !strings.Contains(err.Error(), "exceeds") {
		t.Fatalf("oversized frame: %v", err)
	}
	if _, err := readFrame(bytes.NewReader([]byte{0, 0, 0, 9, '{'}), &r); err == nil {
		t.Fatal("torn frame accepted")
	}
	// A header length past the frame's end.
	if _, err := readFrame(bytes.NewReader([]byte{0, 0, 0, 5, 0, 0, 0, 9, '{'}), &r); err == nil || !strings.Contains(err.Error(), "header") {
		t.Fatalf("header past the frame: %v", err)
	}
}

// TestWorkerEnvironmentScrubbed: a worker inherits none of its parent's
// secrets (the node keys, the data token, any WICKET_* variable or other
// credential), only what a Go process needs.
func TestWorkerEnvironmentScrubbed(t *testing.T) {
	t.Setenv("WICKET_NODE_CONTROL_KEY", "control-key-for-test")
	t.Setenv("WICKET_NODE_OBSERVE_KEY", "observe-key-for-test")
	t.Setenv("WICKET_DATA_TOKEN", "token-for-test")
	t.Setenv("WICKET_PROJECT", "/somewhere")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "cloud-secret-for-test")
	t.Setenv("TZ", "UTC")
	p := newPool(t, Config{Size: 1})
	env, err := Call[struct{}, []string](ctxT(t), p, "environ", struct{}{})
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(env, "\n")
	for _, secret := range []string{"WICKET_", "control-key-for-test", "observe-key-for-test", "token-for-test", "AWS_SECRET", "cloud-secret-for-test"} {
		if strings.Contains(joined, secret) {
			t.Errorf("the worker's environment holds %q:\n%s", secret, joined)
		}
	}
	if !slices.Contains(env, "TZ=UTC") {
		t.Errorf("the worker lost TZ: %q", env)
	}
	if got := WorkerEnv([]string{"PATH=/bin", "WICKET_X=1", "HOME=/root", "GOCOVERDIR=/c", "PATHX=1"}); !slices.Equal(got, []string{"PATH=/bin", "GOCOVERDIR=/c"}) {
		t.Errorf("WorkerEnv kept %q", got)
	}
}

// TestGCPaceFollowsLiveHeap: the collector lets a small heap grow by
// gcRoom (one under the runtime's 4 MiB floor as one of 4 MiB) and a
// large one by a tenth of what it holds, and three quarters of the hard
// limit is the memory limit.
func TestGCPaceFollowsLiveHeap(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, c := range []struct {
		live int64
		want int
	}{{0, 400}, {1 << 20, 400}, {4 << 20, 400}, {16 << 20, 100}, {32 << 20, 50}, {160 << 20, 10}, {1 << 30, 10}} {
		if got := gcPercent(c.live); got != c.want {
			t.Errorf("gcPercent(%d MiB) = %d, want %d", c.live>>20, got, c.want)
		}
	}
	g := newGCPace(128 << 20)
	if got := debug.SetMemoryLimit(-1); got != 96<<20 {
		t.Errorf("a 128 MiB worker's memory limit is %d MiB, want 96", got>>20)
	}
	hold := make([]byte, 300<<20)
	for i := range hold {
		hold[i] = 1
	}
	runtime.GC()
	g.adjust()
	if g.percent != 10 || debug.SetGCPercent(-1) != 10 {
		t.Errorf("with 300 MiB live the pace is GOGC %d, want 10", g.percent)
	}
	runtime.KeepAlive(hold)
}

// TestGCPaceSetAfterEachCollection: a collection sets the pace for the
// live heap it found, with no call to adjust (a proof's heap grows
// within a few collections; a pace set on a timer lagged behind it).
func TestGCPaceSetAfterEachCollection(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	g := newGCPace(1 << 30)
	debug.SetGCPercent(400)
	g.percent = 400 // as a small heap left it
	paced, ended := make(chan int, 1), make(chan struct{})
	var stop atomic.Bool
	g.everyCycle(func() bool {
		g.mu.Lock()
		p := g.percent
		g.mu.Unlock()
		select {
		case paced <- p:
		default:
		}
		if stop.Load() {
			close(ended)
			return false
		}
		return true
	})
	defer func() { // the last cycle's adjustment done before the pace is put back
		stop.Store(true)
		for {
			runtime.GC()
			select {
			case <-ended:
				return
			case <-paced:
			}
		}
	}()
	hold := make([]byte, 300<<20)
	for i := range hold {
		hold[i] = 1
	}
	deadline := time.After(time.Minute)
	for {
		runtime.GC()
		select {
		case p := <-paced:
			if p == 10 {
				if got := debug.SetGCPercent(10); got != 10 {
					t.Errorf("the runtime's GOGC is %d, want 10", got)
				}
				runtime.KeepAlive(hold)
				return
			}
		case <-deadline:
			t.Fatal("no collection set the pace for 300 MiB live within a minute")
		}
	}
}

// TestWorkerReleasesOnlyALargeProofsHeap: a proof that allocated no
// more than the pace's room (a 17,544-bar one: 0-2 MiB) leaves its
// garbage to the pace (the next request reuses it, and the collection and
// scavenging a release forces take a core from the sweep's caller); one
// that allocated more (a million-bar one: about 36 MiB) returns it, as in
// TestWorkerReleasesHeapAfterProof; a sweep's chunk never does.
func TestWorkerReleasesOnlyALargeProofsHeap(t *testing.T) {
	for _, c := range []struct {
		kind      string
		allocated uint64
		want      bool
	}{
		{KindBacktest, 2 << 20, false},
		{KindBacktest, gcRoom, false},
		{KindBacktest, gcRoom + 1, true},
		{KindBacktest, 36 << 20, true},
		{KindPortfolio, 64 << 20, true},
		{KindSweep, 1 << 30, false},
	} {
		if got := releases(c.kind, c.allocated); got != c.want {
			t.Errorf("releases(%s, %d MiB allocated) = %t, want %t", c.kind, c.allocated>>20, got, c.want)
		}
	}
}

// garbage keeps the test's allocation from being optimised away.
var garbage []byte

// heapFree is the free heap the runtime keeps resident (not returned to
// the system).
func heapFree() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestWorkerReleasesHeapAfterProof: after a request that runs a lookahead
// proof (a backtest) that allocated more than the pace's room a worker
// returns its free heap to the system; after a sweep's chunk it keeps it
// for the next chunk.
func TestWorkerReleasesHeapAfterProof(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	g := newGCPace(1 << 30)
	for _, kind := range []string{KindSweep, KindBacktest} {
		g.begin(kind)
		garbage = make([]byte, 64<<20)
		for i := range garbage {
			garbage[i] = 1
		}
		garbage = nil
		runtime.GC() // the 64 MiB are free, and resident until the runtime returns them
		g.after(kind)
		free := heapFree()
		switch {
		case kind == KindSweep && free < 32<<20:
			t.Errorf("after a sweep's chunk the worker keeps %d MiB of free heap, want the 64 MiB it freed", free>>20)
		case kind == KindBacktest && free > 4<<20:
			t.Errorf("after a backtest the worker keeps %d MiB of free heap, want it returned", free>>20)
		}
	}
}
