package worker

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Arg is the argument that puts the binary in worker mode: `wicket
// __worker`, or a test binary's ServeIfWorker.
const Arg = "__worker"

// Handler serves one request kind inside a worker. body is the request's
// JSON; the result is marshalled as the response body. A *script.Error
// reaches the caller intact.
type Handler func(ctx context.Context, body json.RawMessage) (any, error)

// Handlers maps request kinds to their handlers.
type Handlers map[string]Handler

// Typed adapts a function of typed request and response to a Handler;
// unknown fields in the request are an error.
func Typed[Req, Resp any](f func(context.Context, Req) (Resp, error)) Handler {
	return func(ctx context.Context, body json.RawMessage) (any, error) {
		var req Req
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			return nil, &Error{Kind: KindRequest, Msg: "malformed request: " + err.Error()}
		}
		return f(ctx, req)
	}
}

func (h Handlers) kinds() []string {
	ks := make([]string, 0, len(h))
	for k := range h {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// serve answers requests from r on w, one at a time, until r ends, calling
// pace's begin with each request's kind when it is read and its after once
// it is answered. It never writes anything to w but frames.
func serve(ctx context.Context, r io.Reader, w io.Writer, h Handlers, hello Hello, pace *gcPace) error {
	in := bufio.NewReaderSize(r, 64<<10)
	out := bufio.NewWriterSize(w, 64<<10)
	hello.Kinds = h.kinds()
	hb, _ := json.Marshal(hello)
	if err := send(out, Response{ID: 0, Body: hb}); err != nil {
		return err
	}
	for {
		var req Request
		body, err := readFrame(in, &req)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("worker: read request: %w", err)
		}
		req.Body = body
		pace.begin(req.Kind)
		if req.Procs > 0 && req.Procs != runtime.GOMAXPROCS(0) {
			runtime.GOMAXPROCS(req.Procs)
		}
		resp := Response{ID: req.ID}
		answer, err := dispatch(ctx, h, req)
		if err == nil {
			resp.Body, err = encodeAnswer(answer, req.Binary)
		}
		if err != nil {
			resp.Error = toWire(err)
		}
		resp.CPUSeconds = cpuSeconds()
		if err := send(out, resp); err != nil {
			return err
		}
		pace.after(req.Kind)
	}
}

func send(out *bufio.Writer, resp Response) error {
	if err := writeFrame(out, resp, resp.Body); err != nil {
		return err
	}
	return out.Flush()
}

// dispatch runs one handler, turning a Go panic into an error.
func dispatch(ctx context.Context, h Handlers, req Request) (body any, err error) {
	f, ok := h[req.Kind]
	if !ok {
		return nil, &Error{Kind: KindRequest, Msg: fmt.Sprintf("unknown request kind %q; this worker handles: %s", req.Kind, strings.Join(h.kinds(), ", "))}
	}
	defer func() {
		if r := recover(); r != nil {
			body, err = nil, &Error{Kind: KindHandler, Msg: fmt.Sprintf("internal error in %s: %v", req.Kind, r)}
		}
	}()
	return f(ctx, req.Body)
}

// Limits are what a worker sets on itself before serving.
type Limits struct {
	// MemoryMiB is the address space the worker may add to what the Go
	// runtime has reserved at start (RLIMIT_AS = reserved + MemoryMiB).
	MemoryMiB int
	// CPUSeconds is the worker's lifetime CPU-time limit (RLIMIT_CPU).
	CPUSeconds int
	// Procs is GOMAXPROCS for the worker; 0 leaves the default.
	Procs int
}

func (l Limits) args() []string {
	a := []string{Arg, fmt.Sprintf("--memory-mib=%d", l.MemoryMiB), fmt.Sprintf("--cpu-seconds=%d", l.CPUSeconds)}
	if l.Procs > 0 {
		a = append(a, fmt.Sprintf("--procs=%d", l.Procs))
	}
	return a
}

// ParseArgs reads the worker flags that follow Arg.
func ParseArgs(args []string) (Limits, error) {
	fs := flag.NewFlagSet(Arg, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var l Limits
	fs.IntVar(&l.MemoryMiB, "memory-mib", DefaultMemoryMiB, "address space the strategy may use, MiB")
	fs.IntVar(&l.CPUSeconds, "cpu-seconds", DefaultCPUSeconds, "lifetime CPU time, seconds")
	fs.IntVar(&l.Procs, "procs", 0, "GOMAXPROCS")
	if err := fs.Parse(args); err != nil {
		return l, err
	}
	if fs.NArg() > 0 {
		return l, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if l.MemoryMiB < 16 || l.CPUSeconds < 1 {
		return l, fmt.Errorf("--memory-mib must be at least 16 and --cpu-seconds at least 1")
	}
	return l, nil
}

// Main is a worker process: it parses args (the flags after Arg), moves
// fd 1 out of reach, sets its limits, and serves requests on stdin and the
// original stdout until stdin closes. It returns the process exit code and
// writes failures to stderr.
func Main(args []string, h Handlers) int {
	l, err := ParseArgs(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "wicket worker: %v\n", err)
		return 2
	}
	proto, err := protectStdout()
	if err != nil {
		fmt.Fprintf(os.Stderr, "wicket worker: %v\n", err)
		return 1
	}
	if l.Procs > 0 {
		runtime.GOMAXPROCS(l.Procs)
	}
	hello, err := applyLimits(l)
	if err != nil {
		fmt.Fprintf(os.Stderr, "wicket worker: %v\n", err)
		return 1
	}
	gc := newGCPace(int64(l.MemoryMiB) << 20)
	gc.everyCycle(nil)
	if err := serve(context.Background(), os.Stdin, proto, h, hello, gc); err != nil {
		fmt.Fprintf(os.Stderr, "wicket worker: %v\n", err)
		return 1
	}
	return 0
}

// gcPace keeps a worker's resident memory near what it holds. A worker's
// heap is mostly bar columns and indicator results, large and free of
// pointers, so a collection costs little, while a sweep drops a few columns
// per combination: at the runtime's default pace (GOGC 100) its heap would
// grow to twice what it holds. A soft memory limit just above the live
// heap holds it down too, but costs a fifth of a million-bar sweep's time:
// the runtime hands pages back to the system at once and faults them in
// again for the next column. So the collector's pace follows the live
// heap instead: the heap may grow by a tenth of what it holds, or by
// gcRoom when that is more (a small heap is not collected every few
// combinations, as at the runtime's default pace), and three quarters of the hard limit is the memory limit, so a
// strategy that nears its allowance is collected harder before it fails.
//
// The pace is set again after every collection (everyCycle), not on a
// timer: a lookahead proof grows the live heap from a chunk's 15 MiB to
// 40 within a few collections, and a pace left at the small heap's
// GOGC (100 and more) for the 100 ms a timer waited let its heap reach
// twice that.
type gcPace struct {
	mu      sync.Mutex
	percent int // the GOGC in force
	// allocs is what the heap had allocated, in all (heapAllocs), when
	// the request being served began.
	allocs uint64
}

// gcRoom is the least a worker's heap may grow between collections.
const gcRoom = 16 << 20

func newGCPace(hard int64) *gcPace {
	debug.SetMemoryLimit(hard * 3 / 4)
	g := &gcPace{percent: debug.SetGCPercent(100)}
	g.adjust()
	return g
}

// gcCycle is an object the collector frees once per cycle: its
// finalizer runs after each collection (on the runtime's finalizer
// goroutine), sets the pace and arms the next one.
type gcCycle struct {
	g *gcPace
	// done is called after each adjustment; it returns whether to go on
	// (a worker's always does; a test's stops).
	done func() bool
}

// everyCycle sets the pace after every collection from now on, calling
// done after each (nil: go on for good).
func (g *gcPace) everyCycle(done func() bool) {
	c := &gcCycle{g: g, done: done}
	runtime.SetFinalizer(c, func(c *gcCycle) {
		c.g.adjust()
		if c.done == nil || c.done() {
			c.g.everyCycle(c.done)
		}
	})
}

// adjust sets the pace for the live heap the last collection found. It is
// safe for concurrent use.
func (g *gcPace) adjust() {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	pct := gcPercent(int64(s[0].Value.Uint64()))
	g.mu.Lock()
	defer g.mu.Unlock()
	if pct != g.percent {
		debug.SetGCPercent(pct)
		g.percent = pct
	}
}

// releaseAfter are the request kinds after which a worker returns its
// free heap to the system: those that run a lookahead proof, whose prefix
// runs grow the largest heap a worker has (40-60 MiB more than a sweep's
// chunk at a million bars), pages the runtime would otherwise keep for
// minutes, resident beside the next sweep's.
var releaseAfter = []string{KindBacktest, KindPortfolio}

// begin notes what the heap had allocated as a request of kind begins,
// for after.
func (g *gcPace) begin(kind string) {
	if slices.Contains(releaseAfter, kind) {
		g.allocs = heapAllocs()
	}
}

// after is what a worker does once a request of kind is answered: the
// pace for the live heap, and the free heap returned after a proof that
// allocated more than the pace's room (releaseAfter, releases). It runs
// while the caller reads the answer, but not off its path: a sweep's
// caller writes its ledger and computes its PBO then, and on two cores
// the forced collection and the scavenging took a core from them for
// 1-5 ms a 17,544-bar sweep, whose proof allocates 0-2 MiB.
func (g *gcPace) after(kind string) {
	if releases(kind, heapAllocs()-g.allocs) {
		debug.FreeOSMemory()
	}
	g.adjust()
}

// releases says whether a request of kind that allocated allocated bytes
// leaves free heap enough to return: a proof's that allocated more than
// gcRoom, the least the pace lets the heap grow between collections,
// whose garbage outgrew the room the worker keeps anyway (a million-bar
// proof allocates about 36 MiB). Less is left to the pace: the next
// request reuses it, where a release would only have it faulted in again.
func releases(kind string, allocated uint64) bool {
	return slices.Contains(releaseAfter, kind) && allocated > gcRoom
}

// heapAllocs is what the heap has allocated since the worker started.
func heapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// gcPercent is the GOGC that lets a live heap of live bytes grow by a tenth,
// or by gcRoom when that is more. The runtime never aims below 4 MiB times
// GOGC/100, so a smaller heap is paced as one of 4 MiB.
func gcPercent(live int64) int {
	live = max(live, 4<<20)
	room := max(live/10, gcRoom)
	return int(max(10, room*100/live))
}

// ServeIfWorker runs Main and exits when the process was started as a
// worker (os.Args[1] == Arg); otherwise it returns. Call it first thing in
// main, or in TestMain so a package's tests can run a Pool of their own
// test binary:
//
//	func TestMain(m *testing.M) {
//		worker.ServeIfWorker(worker.Builtin(ta.NewMemo(0)))
//		os.Exit(m.Run())
//	}
func ServeIfWorker(h Handlers) {
	if IsWorker() {
		os.Exit(Main(os.Args[2:], h))
	}
}

// IsWorker says whether this process was started as a worker (its first
// argument is Arg), before Main sets its limits.
func IsWorker() bool { return len(os.Args) > 1 && os.Args[1] == Arg }
