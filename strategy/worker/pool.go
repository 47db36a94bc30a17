package worker

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Defaults for Config's zero fields.
const (
	DefaultMemoryMiB  = 2048
	DefaultCPUSeconds = 1800
)

// Config describes a pool.
type Config struct {
	// Command starts a worker: the executable and the arguments before the
	// worker flags. Nil means Self(): this binary with Arg.
	Command []string
	// Env is the workers' environment; nil means WorkerEnv(os.Environ()):
	// this process's without its secrets.
	Env []string
	// Size is the most workers running at once; 0 means one per core.
	Size int
	// MemoryMiB is each worker's memory allowance (research.worker_memory_mib).
	MemoryMiB int
	// CPUSeconds is each worker's lifetime CPU limit. A worker that has used
	// half of it is retired after its current request.
	CPUSeconds int
	// Log receives the workers' stderr; nil discards it (the tail is kept
	// to explain a worker's death either way).
	Log io.Writer
	// Procs is each worker's GOMAXPROCS; 0 shares the cores out among
	// the workers at work: each request gives its worker NumCPU divided by
	// the requests under way when it is sent, counting itself (at least
	// 1), so a worker alone at work has every core and two at once have
	// half each; a request that runs on several goroutines (a backtest's
	// lookahead proof) has every core (Pool.procs).
	Procs int
}

// workerEnvKeep are the variables a worker keeps from its parent's
// environment: what the Go runtime, the C library and coverage or race
// builds read. Everything else (the node keys, the data token, any
// WICKET_* or cloud credential) stays behind: strategy code never needs
// it.
var workerEnvKeep = []string{"PATH", "TMPDIR", "TZ", "LANG", "LC_ALL", "LC_CTYPE", "GOTRACEBACK", "GODEBUG", "GORACE", "GOCOVERDIR"}

// WorkerEnv is env (KEY=VALUE entries) scrubbed for a worker: only the
// variables in workerEnvKeep pass.
func WorkerEnv(env []string) []string {
	out := []string{}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(workerEnvKeep, k) {
			out = append(out, kv)
		}
	}
	return out
}

// Self is the command that re-executes this binary as a worker.
func Self() ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find this executable to start workers: %w", err)
	}
	return []string{exe}, nil
}

// Pool runs requests on a bounded set of long-lived workers. It is safe
// for concurrent use; requests beyond Size wait for a free worker.
type Pool struct {
	cfg   Config
	slots chan struct{}

	mu     sync.Mutex
	idle   []*proc
	all    map[*proc]bool
	closed bool
	// affine is the worker that last served each affinity key (doOn):
	// the one whose caches hold what the key names.
	affine map[string]*proc

	started, died atomic.Int64
}

// NewPool returns a pool; workers start on first use.
func NewPool(cfg Config) (*Pool, error) {
	if cfg.Command == nil {
		cmd, err := Self()
		if err != nil {
			return nil, &Error{Kind: KindStart, Msg: err.Error(), err: err}
		}
		cfg.Command = cmd
	}
	if len(cfg.Command) == 0 {
		return nil, &Error{Kind: KindStart, Msg: "worker command is empty"}
	}
	if cfg.Env == nil {
		cfg.Env = WorkerEnv(os.Environ())
	}
	if cfg.Size <= 0 {
		cfg.Size = runtime.NumCPU()
	}
	if cfg.MemoryMiB <= 0 {
		cfg.MemoryMiB = DefaultMemoryMiB
	}
	if cfg.CPUSeconds <= 0 {
		cfg.CPUSeconds = DefaultCPUSeconds
	}
	return &Pool{cfg: cfg, slots: make(chan struct{}, cfg.Size), all: map[*proc]bool{}}, nil
}

// Size is the most workers the pool runs at once.
func (p *Pool) Size() int { return p.cfg.Size }

// Stats counts workers started and workers that died (limits, crashes,
// cancellations) over the pool's life.
type Stats struct {
	Started int64 `json:"started"`
	Died    int64 `json:"died"`
	Running int   `json:"running"`
}

// Stats returns the counters.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Stats{Started: p.started.Load(), Died: p.died.Load(), Running: len(p.all)}
}

// PIDs are the process ids of the workers running now (for diagnostics
// and benchmarks: their memory, their CPU).
func (p *Pool) PIDs() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	pids := make([]int, 0, len(p.all))
	for w := range p.all {
		if w.cmd.Process != nil {
			pids = append(pids, w.cmd.Process.Pid)
		}
	}
	return pids
}

// Do sends a request of kind with body req to a worker and decodes the
// response body into resp (unless resp is nil). A strategy failure is a
// *script.Error, and a history store or backtest failure a *history.Error
// or *backtest.Error of its kind; a worker failure, or the context ending
// (which kills the worker running the request), is an *Error.
func (p *Pool) Do(ctx context.Context, kind string, req, resp any) error {
	return p.doOn(ctx, "", kind, req, resp)
}

// maxAffinity bounds the affinity keys a pool remembers.
const maxAffinity = 64

// doOn is Do on the idle worker that last served a request of affinity
// key, when there is one (else as Do), and remembers the worker that
// served it. A warm session's next sweep of the same bars so reaches
// the worker that still holds them and knows whether the store changed.
func (p *Pool) doOn(ctx context.Context, key, kind string, req, resp any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return &Error{Kind: KindRequest, Msg: fmt.Sprintf("encode %s request: %v", kind, err), err: err}
	}
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return canceled(ctx)
	}
	defer func() { <-p.slots }()
	w, err := p.take(ctx, key)
	if err != nil {
		return err
	}
	raw, err := w.call(ctx, kind, p.procs(kind), acceptsBinary(resp), body)
	p.give(w)
	if err != nil {
		return err
	}
	p.remember(key, w)
	if resp != nil {
		if err := decodeAnswer(raw, resp); err != nil {
			return &Error{Kind: KindHandler, Msg: fmt.Sprintf("decode %s response: %v", kind, err), err: err}
		}
	}
	return nil
}

// procs is the GOMAXPROCS a request of kind sent now gives its worker: 0
// (keep it) with Config.Procs set; every core for a kind that spreads its
// own work over them (parallelKinds); else the cores shared among the
// requests under way, this one included (each holds a slot).
func (p *Pool) procs(kind string) int {
	switch {
	case p.cfg.Procs > 0:
		return 0
	case slices.Contains(parallelKinds, kind):
		return runtime.NumCPU()
	}
	return max(1, runtime.NumCPU()/max(1, len(p.slots)))
}

// parallelKinds are the request kinds whose handler runs its work on as
// many goroutines as GOMAXPROCS allows: a backtest's lookahead proof runs
// its prefixes side by side. Given every core even beside another
// worker's request, such a request takes a core the other leaves idle
// the moment it does: a sweep's winner's proof, started on one worker
// while the other runs the last chunk, has both cores once that chunk
// ends, where with one it would leave the second idle.
var parallelKinds = []string{KindBacktest, KindPortfolio}

// Call is Do with typed request and response.
func Call[Req, Resp any](ctx context.Context, p *Pool, kind string, req Req) (Resp, error) {
	var resp Resp
	err := p.Do(ctx, kind, req, &resp)
	return resp, err
}

func canceled(ctx context.Context) error {
	return &Error{Kind: KindCanceled, Msg: "cancelled: " + context.Cause(ctx).Error(), err: ctx.Err()}
}

// remember makes w the worker of affinity key.
func (p *Pool) remember(key string, w *proc) {
	if key == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.affine == nil {
		p.affine = map[string]*proc{}
	}
	if _, ok := p.affine[key]; !ok && len(p.affine) >= maxAffinity {
		clear(p.affine)
	}
	p.affine[key] = w
}

// preferred is the index in p.idle of the worker a request of affinity
// key should take, or -1 for the last: with a key, the worker of that
// key; without one, the last that is no key's worker, so a request that
// needs no cache leaves the warm one to the request that does. p.mu is
// held.
func (p *Pool) preferred(key string) int {
	if len(p.affine) == 0 {
		return -1
	}
	if key != "" {
		if w := p.affine[key]; w != nil && !w.dead.Load() {
			return slices.Index(p.idle, w)
		}
		return -1
	}
	for i := len(p.idle) - 1; i >= 0; i-- {
		if !slices.Contains(slices.Collect(maps.Values(p.affine)), p.idle[i]) {
			return i
		}
	}
	return -1
}

// take returns an idle worker, the one of affinity key when it is idle,
// or starts one. The caller holds a slot.
func (p *Pool) take(ctx context.Context, key string) (*proc, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, &Error{Kind: KindClosed, Msg: "the worker pool is closed"}
	}
	if i := p.preferred(key); i >= 0 {
		w := p.idle[i]
		p.idle = slices.Delete(p.idle, i, i+1)
		p.idle = append(p.idle, w) // taken next, below
	}
	for n := len(p.idle); n > 0; n = len(p.idle) {
		w := p.idle[n-1]
		p.idle = p.idle[:n-1]
		select {
		case <-w.exited: // died while idle (killed from outside): replace it
			delete(p.all, w)
			p.died.Add(1)
			p.forget(w)
			continue
		default:
		}
		p.mu.Unlock()
		return w, nil
	}
	p.mu.Unlock()
	w, err := p.start(ctx)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		w.stop()
		return nil, &Error{Kind: KindClosed, Msg: "the worker pool is closed"}
	}
	p.all[w] = true
	return w, nil
}

// give returns a worker after a request: healthy ones go back to idle,
// dead or worn ones are reaped.
func (p *Pool) give(w *proc) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case w.dead.Load():
		delete(p.all, w)
		p.died.Add(1)
		p.forget(w)
	case p.closed || w.cpu > float64(p.cfg.CPUSeconds)/2:
		delete(p.all, w)
		p.forget(w)
		go w.stop()
	default:
		p.idle = append(p.idle, w)
	}
}

// forget drops w's affinity keys; p.mu is held.
func (p *Pool) forget(w *proc) {
	maps.DeleteFunc(p.affine, func(_ string, o *proc) bool { return o == w })
}

// Close stops every worker. Requests in flight fail.
func (p *Pool) Close() error {
	p.mu.Lock()
	p.closed = true
	ws := make([]*proc, 0, len(p.all))
	for w := range p.all {
		ws = append(ws, w)
	}
	p.idle = nil
	p.mu.Unlock()
	for _, w := range ws {
		w.stop()
	}
	return nil
}

// proc is one worker process.
type proc struct {
	pool   *Pool
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	tail   *tail
	exited chan struct{}
	hello  Hello
	nextID uint64
	cpu    float64
	dead   atomic.Bool
	// overMemory says the resident-memory watchdog killed the worker: the
	// limit's second line where RLIMIT_AS is not enforced (watchdog.go).
	overMemory atomic.Bool
	outMu      sync.Mutex // held while reading a frame, so the pipe is closed between frames
}

func (p *Pool) start(ctx context.Context) (*proc, error) {
	procs := p.cfg.Procs
	if procs <= 0 {
		procs = max(1, runtime.NumCPU()/p.cfg.Size)
	}
	lim := Limits{MemoryMiB: p.cfg.MemoryMiB, CPUSeconds: p.cfg.CPUSeconds, Procs: procs}
	args := append(append([]string(nil), p.cfg.Command[1:]...), lim.args()...)
	cmd := exec.Command(p.cfg.Command[0], args...)
	cmd.Env = p.cfg.Env
	w := &proc{pool: p, cmd: cmd, tail: &tail{max: 4 << 10, w: p.cfg.Log}, exited: make(chan struct{})}
	cmd.Stderr = w.tail
	startErr := func(err error) error {
		return &Error{Kind: KindStart, Msg: "start a strategy worker: " + err.Error(), err: err}
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, startErr(err)
	}
	// Our own pipe for stdout: exec's StdoutPipe is closed by Wait, which
	// could drop a response written just before the worker exits.
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, startErr(err)
	}
	cmd.Stdout = outW
	if err := cmd.Start(); err != nil {
		outR.Close()
		outW.Close()
		return nil, startErr(err)
	}
	outW.Close()
	p.started.Add(1)
	w.in, w.out = in, bufio.NewReaderSize(outR, 64<<10)
	stopWatch := func() {}
	if p.cfg.MemoryMiB > 0 {
		// Resident memory stays below the address space RLIMIT_AS bounds, so
		// on Linux this never fires first; elsewhere it is what holds.
		limit := (uint64(p.cfg.MemoryMiB)<<20 + 64<<20) * raceFactor // the allowance plus the runtime's own
		stopWatch = WatchMemory(cmd.Process, limit, 0, func(uint64) { w.overMemory.Store(true) })
	}
	go func() {
		cmd.Wait()
		stopWatch()
		close(w.exited)
	}()
	go func() {
		<-w.exited
		// Every response has been read or is lost with the worker.
		w.outMu.Lock()
		defer w.outMu.Unlock()
		outR.Close()
	}()
	// The hello frame says the limits are in place.
	done := make(chan error, 1)
	go func() {
		var r Response
		err := w.read(&r)
		if err == nil {
			err = json.Unmarshal(r.Body, &w.hello)
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			w.kill()
			<-w.exited
			p.died.Add(1)
			return nil, &Error{Kind: KindStart, Msg: "a strategy worker did not start: " + w.lastWords(), err: err}
		}
	case <-ctx.Done():
		w.kill()
		<-done
		return nil, canceled(ctx)
	}
	return w, nil
}

// call runs one request on w. On a worker death or cancellation w is
// marked dead and the error explains why.
func (w *proc) call(ctx context.Context, kind string, procs int, binaryOK bool, body []byte) (json.RawMessage, error) {
	w.nextID++
	id := w.nextID
	type result struct {
		resp Response
		err  error
	}
	done := make(chan result, 1)
	go func() {
		if err := writeFrame(w.in, Request{ID: id, Kind: kind, Procs: procs, Binary: binaryOK}, body); err != nil {
			done <- result{err: err}
			return
		}
		var r Response
		err := w.read(&r)
		done <- result{r, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		w.kill()
		<-done
		return nil, canceled(ctx)
	}
	if r.err != nil {
		w.kill()
		return nil, w.deathError(r.err)
	}
	if r.resp.ID != id {
		w.kill()
		return nil, &Error{Kind: KindCrashed, Msg: fmt.Sprintf("strategy worker answered request %d with %d; it was stopped", id, r.resp.ID)}
	}
	w.cpu = r.resp.CPUSeconds
	if r.resp.Error != nil {
		return nil, r.resp.Error.err()
	}
	return r.resp.Body, nil
}

func (w *proc) read(r *Response) error {
	w.outMu.Lock()
	defer w.outMu.Unlock()
	body, err := readFrame(w.out, r)
	r.Body = body
	return err
}

// kill stops the process at once and marks w dead.
func (w *proc) kill() {
	w.dead.Store(true)
	if w.cmd.Process != nil {
		w.cmd.Process.Kill()
	}
}

// stop ends a worker between requests: it closes stdin (the worker's
// serve loop ends at EOF) and kills the process unless it has already
// exited, then waits for it.
func (w *proc) stop() {
	w.in.Close()
	select {
	case <-w.exited:
	default:
		w.kill()
		<-w.exited
	}
}

// deathError explains why a worker stopped answering.
func (w *proc) deathError(cause error) error {
	<-w.exited
	said := w.tail.String()
	lim := uint64(w.pool.cfg.MemoryMiB) << 20
	switch {
	case outOfAddressSpace(said) || w.overMemory.Load():
		return &Error{Kind: KindMemory, err: cause, Msg: fmt.Sprintf("the strategy used more than %s of memory and was stopped (the limit is research.worker_memory_mib in wicket.toml); build large lists with care, and let ta.* and series arithmetic hold the data", fmtBytes(lim))}
	case w.cmd.ProcessState != nil && exitedOnCPU(w.cmd.ProcessState):
		return &Error{Kind: KindCPU, err: cause, Msg: fmt.Sprintf("the strategy worker used its %d s of CPU time and was stopped; run less work per request", w.pool.cfg.CPUSeconds)}
	}
	return &Error{Kind: KindCrashed, err: cause, Msg: "the strategy worker stopped unexpectedly: " + w.lastWords()}
}

// outOfAddressSpace recognises the ways a Go process dies at RLIMIT_AS:
// the runtime's own out-of-memory fatal error, a failed mmap, and, in
// race-enabled binaries, the race runtime failing to map shadow memory.
func outOfAddressSpace(stderr string) bool {
	for _, s := range []string{"out of memory", "cannot allocate memory", "address space collisions", "unable to mmap", "failed to allocate"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}

func (w *proc) lastWords() string {
	said := strings.TrimSpace(w.tail.String())
	if said == "" {
		if w.cmd.ProcessState != nil {
			return w.cmd.ProcessState.String()
		}
		return "no output"
	}
	// The first line of a Go crash names it; otherwise the last line.
	lines := strings.Split(said, "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, "fatal error:") || strings.HasPrefix(l, "panic:") {
			return l
		}
	}
	return lines[len(lines)-1]
}

// tail keeps the first and the last max bytes written (a worker's
// stderr: a Go crash names itself first, then prints long traces) and
// forwards everything to w when set.
type tail struct {
	mu   sync.Mutex
	head []byte
	buf  []byte
	cut  bool
	max  int
	w    io.Writer
}

func (t *tail) Write(b []byte) (int, error) {
	n0 := len(b)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.w != nil {
		t.w.Write(b)
	}
	if room := t.max - len(t.head); room > 0 {
		n := min(room, len(b))
		t.head = append(t.head, b[:n]...)
		b = b[n:]
	}
	t.buf = append(t.buf, b...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
		t.cut = true
	}
	return n0, nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	sep := ""
	if t.cut {
		sep = "\n...\n"
	}
	return string(t.head) + sep + string(t.buf)
}
