package worker

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"wicket/strategy/script"
	"wicket/strategy/ta"
)

// testHandlers are Builtin plus kinds that misbehave on purpose.
func testHandlers() Handlers {
	h := Builtin(ta.NewMemo(0))
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

const smaCross = `"""SMA crossover."""
fast = param.int("fast", 10, min=2, max=200, doc="fast SMA length")
slow = param.int("slow", 30, min=3, max=400, doc="slow SMA length")

def signals(bars):
    f = ta.sma(bars.close, fast)
    s = ta.sma(bars.close, slow)
    return {"long": ta.cross_above(f, s), "exit": ta.cross_below(f, s)}
`

func TestValidateAndParams(t *testing.T) {
	p := newPool(t, Config{Size: 1})
	rep, err := p.Validate(ctxT(t), StrategyRequest{Name: "sma.star", Source: smaCross, Overrides: map[string]any{"fast": 5.0}})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Valid || rep.Style != script.StyleSignals || rep.Warmup != 30 || len(rep.Knobs) != 2 {
		t.Fatalf("report %+v", rep)
	}
	if d, ok := rep.Knobs[0].Default.(int64); !ok || d != 10 {
		t.Fatalf("int knob default %#v after the pipe, want int64 10", rep.Knobs[0].Default)
	}
	pr, err := p.Params(ctxT(t), StrategyRequest{Name: "sma.star", Source: smaCross})
	if err != nil || pr.Summary != "SMA crossover." || len(pr.Knobs) != 2 {
		t.Fatalf("params %+v, %v", pr, err)
	}
	if s := p.Stats(); s.Started != 1 {
		t.Fatalf("%+v: two requests on a pool of one should share one worker", s)
	}
}

// TestStrategyErrorCrossesPipe: a strategy error arrives as *script.Error
// with its position and hint.
func TestStrategyErrorCrossesPipe(t *testing.T) {
	p := newPool(t, Config{Size: 1})
	_, err := p.Params(ctxT(t), StrategyRequest{Name: "bad.star", Source: "x = 1\ny = (\n"})
	var se *script.Error
	if !errors.As(err, &se) || se.Kind != script.KindSyntax || se.Line != 3 || se.File != "bad.star" || se.Hint == "" {
		t.Fatalf("%#v", err)
	}
	_, err = p.Params(ctxT(t), StrategyRequest{Name: "k.star", Source: smaCross, Overrides: map[string]any{"fast": 500}})
	if !errors.As(err, &se) || se.Kind != script.KindKnob || !strings.Contains(se.Msg, "knob fast: 500 is out of range; allowed: a whole number in [2, 200]") {
		t.Fatalf("%v", err)
	}
}

// vmHWM is this process's peak resident memory.
func vmHWM(t *testing.T) uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skip("no /proc")
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// TestMemoryBomb: the spec's bomb asks for 64 GB in a few dozen steps. The
// worker dies at its address-space limit, the caller gets the memory error
// naming the limit, its own memory stays where it was, and the pool serves
// the next request with a fresh worker.
func TestMemoryBomb(t *testing.T) {
	p := newPool(t, Config{Size: 1, MemoryMiB: 256})
	ctx := ctxT(t)
	if _, err := p.Validate(ctx, StrategyRequest{Name: "ok.star", Source: smaCross}); err != nil {
		t.Fatal(err)
	}
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	hwm := vmHWM(t)
	start := time.Now()
	bomb := "x = [[0] * 100000000 for i in range(40)]\n\ndef signals(bars):\n    return {\"long\": bars.close > 0}\n"
	_, err := p.Validate(ctx, StrategyRequest{Name: "bomb.star", Source: bomb})
	took := time.Since(start)
	var we *Error
	if !errors.As(err, &we) || we.Kind != KindMemory {
		t.Fatalf("got %v (%#v), want the memory-limit error", err, err)
	}
	if !strings.Contains(we.Msg, "the strategy used more than 256 MiB of memory") {
		t.Fatalf("message %q does not name the limit", we.Msg)
	}
	t.Logf("memory bomb reported in %v: %s", took, we.Msg)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 64<<20 {
		t.Errorf("caller's heap grew by %d MiB", grew>>20)
	}
	if peak := vmHWM(t); peak > hwm+64<<20 {
		t.Errorf("caller's peak RSS rose from %d to %d MiB", hwm>>20, peak>>20)
	}
	// The pool keeps serving, with a replacement worker.
	rep, err := p.Validate(ctx, StrategyRequest{Name: "ok.star", Source: smaCross})
	if err != nil || !rep.Valid {
		t.Fatalf("after the bomb: %+v %v", rep, err)
	}
	if s := p.Stats(); s.Died != 1 || s.Started != 2 {
		t.Fatalf("stats %+v: want one death and one replacement", s)
	}
}

// TestGoAllocationLimit: memory use in a handler's Go code is bounded too.
func TestGoAllocationLimit(t *testing.T) {
	p := newPool(t, Config{Size: 1, MemoryMiB: 128})
	n, err := Call[int, int](ctxT(t), p, "alloc", 32)
	if err != nil || n != 32 {
		t.Fatalf("32 MiB within a 128 MiB limit: %d, %v", n, err)
	}
	_, err = Call[int, int](ctxT(t), p, "alloc", 4096)
	var we *Error
	if !errors.As(err, &we) || we.Kind != KindMemory {
		t.Fatalf("4 GiB in a 128 MiB worker: %v", err)
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

// TestStarlarkCancel: cancelling a running strategy (an endless loop under
// a large step cap) stops it through the same path.
func TestStarlarkCancel(t *testing.T) {
	p := newPool(t, Config{Size: 1})
	ctx, cancel := context.WithTimeout(ctxT(t), 300*time.Millisecond)
	defer cancel()
	src := "def signals(bars):\n    i = 0\n    while True:\n        i += 1\n"
	_, err := p.Validate(ctx, StrategyRequest{Name: "loop.star", Source: src, Limits: script.Limits{SignalsSteps: 1 << 62}})
	var we *Error
	if !errors.As(err, &we) || we.Kind != KindCanceled {
		t.Fatalf("%v", err)
	}
}

// TestIdleWorkerKilled: a worker killed while idle is replaced before the
// next request reaches it.
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
	if !errors.As(err, &we) || we.Kind != KindRequest || !strings.Contains(we.Msg, "this worker handles: alloc, ") || !strings.Contains(we.Msg, "params") {
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

func TestConcurrentPool(t *testing.T) {
	p := newPool(t, Config{Size: 2})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			rep, err := p.Validate(ctxT(t), StrategyRequest{Name: "sma.star", Source: smaCross, Overrides: map[string]any{"fast": 2 + i}})
			if err == nil && !rep.Valid {
				err = fmt.Errorf("invalid: %+v", rep.Problems)
			}
			errs <- err
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if s := p.Stats(); s.Started > 2 {
		t.Fatalf("%+v: more workers than the pool size", s)
	}
	p.Close()
	if err := p.Do(context.Background(), "echo", "x", nil); err == nil {
		t.Fatal("closed pool served a request")
	}
}

// TestIndicatorsDir: load("indicators/<name>") reads from the directory in
// the request, and nothing outside it.
func TestIndicatorsDir(t *testing.T) {
	dir := t.TempDir()
	ind := filepath.Join(dir, "indicators")
	os.Mkdir(ind, 0o755)
	os.WriteFile(filepath.Join(ind, "mid.star"), []byte("\"\"\"Midpoint.\"\"\"\ndef mid(bars):\n    return (bars.high + bars.low) / 2\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "secret.star"), []byte("def mid(bars):\n    return bars.close\n"), 0o644)
	os.Symlink(filepath.Join(dir, "secret.star"), filepath.Join(ind, "escape.star"))
	p := newPool(t, Config{Size: 1})
	use := func(name string) string {
		return fmt.Sprintf("load(\"indicators/%s\", \"mid\")\n\ndef signals(bars):\n    return {\"long\": bars.close > mid(bars)}\n", name)
	}
	rep, err := p.Validate(ctxT(t), StrategyRequest{Name: "s.star", Source: use("mid"), IndicatorsDir: ind})
	if err != nil || !rep.Valid {
		t.Fatalf("%+v %v", rep, err)
	}
	for _, name := range []string{"escape", "../secret", "missing"} {
		rep, err = p.Validate(ctxT(t), StrategyRequest{Name: "s.star", Source: use(name), IndicatorsDir: ind})
		if err != nil || rep.Valid || len(rep.Problems) != 1 || rep.Problems[0].Kind != script.KindLoad || rep.Problems[0].Line != 1 {
			t.Fatalf("%s: %+v %v", name, rep, err)
		}
		t.Logf("%s: %s", name, rep.Problems[0].Message)
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
	if err := writeFrame(&b, Request{ID: 7, Kind: "echo", Body: []byte(`"x"`)}); err != nil {
		t.Fatal(err)
	}
	var r Request
	if err := readFrame(&b, &r); err != nil || r.ID != 7 || r.Kind != "echo" {
		t.Fatalf("%+v %v", r, err)
	}
	huge := []byte{0xff, 0xff, 0xff, 0xff}
	if err := readFrame(bytes.NewReader(huge), &r); err == nil || !strings.Contains(err.Error(), "exceeds") {
		t.Fatalf("oversized frame: %v", err)
	}
	if err := readFrame(bytes.NewReader([]byte{0, 0, 0, 9, '{'}), &r); err == nil {
		t.Fatal("torn frame accepted")
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
