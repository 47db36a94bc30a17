package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/strategy/cluster"
	"wicket/strategy/clustertest"
	"wicket/strategy/research"
	"wicket/strategy/templates"
	"wicket/strategy/worker"
)

// clusterRig is a demo project, an embedded NATS server and `wicket
// worker` processes of the real binary joined to it.
type clusterRig struct {
	t       *testing.T
	bin     string
	env     []string
	dir     string
	url     string
	key     []byte // the cluster key `wicket init` wrote
	workers []*exec.Cmd
	lines   []chan string // each worker's stderr
	// workerArgs and workerEnv are added to each worker's command line
	// and environment.
	workerArgs, workerEnv []string
}

func newClusterRig(t *testing.T, workers int) *clusterRig {
	t.Helper()
	return newClusterRigAt(t, "", workers)
}

// newClusterRigAt is newClusterRig on the server at url (an embedded
// one of the caller's); "" starts a plain one.
func newClusterRigAt(t *testing.T, url string, workers int) *clusterRig {
	t.Helper()
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	bin, err := exec.LookPath("wicket") // testscript's TestMain put this binary in PATH
	if err != nil {
		t.Fatalf("the wicket test command is not in PATH: %v", err)
	}
	dir := t.TempDir()
	r := &clusterRig{t: t, bin: bin, dir: dir, url: url, env: append(os.Environ(), project.EnvProject+"="+dir, project.KeyCluster+"=",
		project.KeyNATSToken+"=", project.KeyNATSUser+"=", project.KeyNATSPassword+"=", project.KeyNATSCreds+"=", project.KeyNATSNKey+"=")}
	if r.url == "" {
		r.url = clustertest.Server(t)
	}
	for _, args := range [][]string{{"init", dir}, {"data", "seed-demo"}} {
		cmd := exec.Command(bin, args...)
		cmd.Env = r.env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("wicket %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	s, err := project.Project{Root: dir}.Secrets(func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	key, _, ok := s.Lookup(project.KeyCluster)
	if !ok || len(key) != 64 {
		t.Fatalf("wicket init wrote no cluster key of 64 hex digits (%d characters)", len(key))
	}
	r.key = []byte(key)
	for range workers {
		r.startWorker()
	}
	return r
}

// startWorker starts `wicket worker` with one strategy worker and a short
// ack wait, and waits until it has joined.
func (r *clusterRig) startWorker() {
	t := r.t
	cmd := exec.Command(r.bin, append([]string{"worker", "--cluster", r.url, "--workers", "1", "--cache", t.TempDir(), "--ack-wait", "1s"}, r.workerArgs...)...)
	cmd.Env = append(r.env, r.workerEnv...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	joined := make(chan bool, 1)
	exited := make(chan struct{})
	lines := make(chan string, 4096)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "joined the research cluster") {
				select {
				case joined <- true:
				default:
				}
			}
			select {
			case lines <- sc.Text():
			default:
			}
		}
		close(lines)
		cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	select {
	case <-joined:
	case <-exited:
		t.Fatal("wicket worker exited before joining the cluster")
	case <-time.After(30 * time.Second):
		t.Fatal("wicket worker did not join the cluster in 30s")
	}
	r.workers = append(r.workers, cmd)
	r.lines = append(r.lines, lines)
}

func (r *clusterRig) local(chunks research.Dispatcher) (*research.Local, func()) {
	t := r.t
	p := project.Project{Root: r.dir}
	cfg, err := p.Config()
	if err != nil {
		t.Fatal(err)
	}
	pool, err := worker.NewPool(worker.Config{Command: []string{r.bin}, Env: r.env, Size: 1, MemoryMiB: cfg.Research.WorkerMemoryMiB})
	if err != nil {
		t.Fatal(err)
	}
	rc := research.Config{Project: p, Research: cfg.Research, Pool: pool, ProofSeed: func() uint64 { return 1 }} // one proof seed: runs compare byte for byte
	if chunks != nil {
		rc.Chunks = chunks
	}
	return research.NewLocal(rc), func() { pool.Close() }
}

func (r *clusterRig) dial(wait time.Duration) *cluster.Dispatcher {
	d, err := cluster.Dial(r.t.Context(), cluster.DispatcherOptions{Options: cluster.Options{URL: r.url, Key: r.key}, WaitWorkers: wait})
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { d.Close() })
	return d
}

// clusterSweep sweeps fast from 2 to fastTo by 1 and slow from 30 to 120
// by 10 over the 17,544 hourly bars of ETH-USD@1h: long enough that a
// sweep of a few hundred combinations is several chunks (a chunk holds
// at least 40 ms of work, research's worthChunk), as the tests of what
// becomes of a worker's chunks need.
func clusterSweep(t *testing.T, fastTo float64) research.SweepRequest {
	src, err := templates.Source("sma_cross")
	if err != nil {
		t.Fatal(err)
	}
	fp := func(x float64) *float64 { return &x }
	return research.SweepRequest{
		StrategyRef: research.StrategyRef{Source: src, Label: "sma_cross.star"}, Series: "ETH-USD@1h",
		Grid: research.Grid{"fast": {From: fp(2), To: fp(fastTo), Step: fp(1)}, "slow": {From: fp(30), To: fp(120), Step: fp(10)}}, Top: 10,
	}
}

// TestClusterSweepSurvivesAKilledWorker sweeps over three `wicket worker`
// processes, SIGKILLs one of them mid-sweep, and checks that every
// combination is counted exactly once and the result is byte-identical
// to the in-process sweep's.
func TestClusterSweepSurvivesAKilledWorker(t *testing.T) {
	r := newClusterRig(t, 3)
	req := clusterSweep(t, 25)
	ctx := t.Context()

	local, closeLocal := r.local(nil)
	want, err := local.Sweep(ctx, req, nil)
	closeLocal()
	if err != nil {
		t.Fatal(err)
	}

	d := r.dial(10 * time.Second)
	remote, closeRemote := r.local(d)
	defer closeRemote()
	var (
		mu       sync.Mutex
		last     research.Progress
		backDone bool
	)
	// The first worker to say it runs a chunk is killed there. Which one
	// that is depends on who fetches first, so every worker is watched;
	// the lines each watcher reads go on in after, for the check below.
	type kill struct {
		worker int
		chunk  string
	}
	var (
		victim         = -1
		answeredAnyway bool // the chunk finished in the moment before the kill
	)
	killed := make(chan kill, 1)
	after := make([]chan string, len(r.workers))
	for i := range r.workers {
		after[i] = make(chan string, 4096)
		go func() {
			defer close(after[i])
			chunk := ""
			for l := range r.lines[i] {
				select {
				case after[i] <- l:
				default:
				}
				rest, ok := strings.CutPrefix(l, "wicket worker: chunk ")
				mu.Lock()
				if ok && victim < 0 && strings.HasSuffix(rest, "(delivery 1)") {
					victim, chunk = i, strings.TrimSuffix(strings.Fields(rest)[0], ":")
					r.workers[i].Process.Signal(syscall.SIGKILL)
				}
				if chunk != "" && strings.HasPrefix(l, "wicket worker: chunk "+chunk+": answered") {
					answeredAnyway = true
				}
				mu.Unlock()
			}
			if chunk != "" {
				killed <- kill{i, chunk} // its stderr closes when it dies
			}
		}()
	}
	got, err := remote.Sweep(ctx, req, func(p research.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if p.Done < last.Done || p.Done > p.Total {
			backDone = true
		}
		last = p
	})
	if err != nil {
		t.Fatal(err)
	}
	var k kill
	select {
	case k = <-killed:
	case <-time.After(time.Minute):
		t.Fatal("no worker ran a chunk, or the killed one's stderr stayed open for a minute")
	}
	chunk := k.chunk
	t.Logf("worker %d was killed running chunk %s", k.worker, chunk)
	// Another worker ran the killed worker's chunk again: given to it after
	// the ack wait, or as a tail copy (which takes the original off the
	// queue).
	ranAgain := func(l string) bool {
		rest, ok := strings.CutPrefix(l, "wicket worker: chunk "+chunk+": running (")
		return ok && rest != "delivery 1)"
	}
	others := make([]chan string, 0, 2)
	for i, c := range after {
		if i != k.worker {
			others = append(others, c)
		}
	}
	redelivered := false
	timeout := time.After(5 * time.Second)
	for !redelivered {
		select {
		case l := <-others[0]: // a closed one reads "" at once: no worker but the victim dies here
			redelivered = ranAgain(l)
		case l := <-others[1]:
			redelivered = ranAgain(l)
		case <-timeout:
			mu.Lock()
			if !answeredAnyway {
				t.Errorf("chunk %s of the killed worker was not redelivered to another", chunk)
			}
			mu.Unlock()
			redelivered = true
		}
	}
	if backDone || last.Done != last.Total || last.Total != want.Combinations {
		t.Errorf("progress ended at %d of %d (combinations %d); counted twice or lost", last.Done, last.Total, want.Combinations)
	}
	if got.Partial || got.Evaluated != want.Combinations {
		t.Errorf("partial %v, evaluated %d of %d", got.Partial, got.Evaluated, want.Combinations)
	}
	a, b := mustMarshal(t, want), mustMarshal(t, got)
	if string(a) != string(b) {
		t.Errorf("the cluster sweep differs from the in-process sweep:\n%s\n%s", a, b)
	}

	// A walk-forward on the two workers left: every window's bars are shipped.
	wf := research.WalkForwardRequest{StrategyRef: req.StrategyRef, Series: req.Series, Grid: research.Grid{"fast": req.Grid["fast"], "slow": {Values: []any{30.0, 60.0}}}, Windows: 3}
	local, closeLocal = r.local(nil)
	wantWF, err := local.WalkForward(ctx, wf, nil)
	closeLocal()
	if err != nil {
		t.Fatal(err)
	}
	gotWF, err := remote.WalkForward(ctx, wf, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := mustMarshal(t, wantWF), mustMarshal(t, gotWF); string(a) != string(b) {
		t.Errorf("the cluster walk-forward differs from the in-process one:\n%s\n%s", a, b)
	}
}

// TestClusterWorkerKilledHoldingTwoChunks: the only worker of a sweep
// holds two chunks (one running, the next fetched ahead) when it is
// SIGKILLed; a worker that joins after runs both, and the sweep is the
// in-process one, each combination counted once.
func TestClusterWorkerKilledHoldingTwoChunks(t *testing.T) {
	if !testkit.CanFreeze {
		t.Skip("this test stops a worker with SIGSTOP, which this platform lacks")
	}
	r := newClusterRig(t, 1)
	req := clusterSweep(t, 25)
	ctx := t.Context()
	local, closeLocal := r.local(nil)
	want, err := local.Sweep(ctx, req, nil)
	closeLocal()
	if err != nil {
		t.Fatal(err)
	}

	d := r.dial(10 * time.Second)
	remote, closeRemote := r.local(d)
	defer closeRemote()
	// The worker is stopped as soon as it runs a chunk, so that it holds
	// what it holds when it is killed.
	stopped := make(chan struct{})
	first, lines := r.workers[0], r.lines[0] // r's slices grow when the next worker starts
	go func() {
		for l := range lines {
			if strings.HasPrefix(l, "wicket worker: chunk ") && strings.HasSuffix(l, "(delivery 1)") {
				testkit.Freeze(first.Process)
				close(stopped)
				break
			}
		}
		for range lines {
		}
	}()
	type outcome struct {
		res research.SweepResult
		err error
		bad string
	}
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		var last research.Progress
		o.res, o.err = remote.Sweep(ctx, req, func(p research.Progress) {
			if p.Done < last.Done || p.Done > p.Total {
				o.bad = p.Message
			}
			last = p
		})
		if o.err == nil && last.Done != last.Total {
			o.bad = "progress ended at " + last.Message
		}
		done <- o
	}()
	select {
	case <-stopped:
	case o := <-done:
		t.Fatalf("the sweep ended before its worker ran a chunk: %v", o.err)
	}
	nc, err := nats.Connect(r.url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	deadline := time.Now().Add(30 * time.Second) // a bound on a hang, not a timing assertion
	for held := heldChunks(t, nc); held != 2; held = heldChunks(t, nc) {
		if time.Now().After(deadline) {
			t.Fatalf("the stopped worker holds %d chunks, not 2", held)
		}
		time.Sleep(10 * time.Millisecond)
	}
	r.workers[0].Process.Signal(syscall.SIGKILL)
	r.startWorker()
	var o outcome
	select {
	case o = <-done:
	case <-time.After(60 * time.Second): // a bound on a hang
		t.Fatal("the sweep did not finish in 60s after its worker was killed")
	}
	if o.err != nil {
		t.Fatal(o.err)
	}
	if o.bad != "" {
		t.Errorf("a combination was counted twice or lost: %s", o.bad)
	}
	if o.res.Partial || o.res.Evaluated != want.Combinations {
		t.Errorf("partial %v, evaluated %d of %d", o.res.Partial, o.res.Evaluated, want.Combinations)
	}
	if a, b := mustMarshal(t, want), mustMarshal(t, o.res); string(a) != string(b) {
		t.Errorf("the cluster sweep differs from the in-process sweep:\n%s\n%s", a, b)
	}
}

// heldChunks is how many chunks the workers' consumer has delivered and
// not had acknowledged.
func heldChunks(t *testing.T, nc *nats.Conn) int {
	t.Helper()
	m, err := nc.Request("$JS.API.CONSUMER.INFO."+cluster.StreamName+"."+cluster.ConsumerName, nil, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		NumAckPending int `json:"num_ack_pending"`
	}
	if err := json.Unmarshal(m.Data, &info); err != nil {
		t.Fatal(err)
	}
	return info.NumAckPending
}

// TestClusterSweepCancels runs a sweep whose strategy loads a user
// indicator on the cluster, then cancels a cluster sweep after its first
// chunks: it returns promptly and partial, its queued chunks are gone,
// and every worker is idle soon after.
func TestClusterSweepCancels(t *testing.T) {
	r := newClusterRig(t, 2)
	d := r.dial(10 * time.Second)
	remote, closeRemote := r.local(d)
	defer closeRemote()

	// First, a strategy that loads one of the project's indicators: the
	// workers get it with the chunks.
	if err := os.MkdirAll(r.dir+"/indicators", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.dir+"/indicators/mysma.star", []byte("def mysma(x, n):\n    return ta.sma(x, n)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ind := clusterSweep(t, 6)
	ind.StrategyRef = research.StrategyRef{Label: "ind.star", Source: `"""SMA cross through a user indicator."""
load("indicators/mysma", "mysma")
fast = param.int("fast", 10, min=2, max=200)
slow = param.int("slow", 30, min=3, max=400)
def signals(bars):
    f = mysma(bars.close, fast)
    s = mysma(bars.close, slow)
    return {"long": ta.cross_above(f, s), "exit": ta.cross_below(f, s)}
`}
	local, closeLocal := r.local(nil)
	wantInd, err := local.Sweep(t.Context(), ind, nil)
	closeLocal()
	if err != nil {
		t.Fatal(err)
	}
	gotInd, err := remote.Sweep(t.Context(), ind, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := mustMarshal(t, wantInd), mustMarshal(t, gotInd); string(a) != string(b) || gotInd.Failed > 0 {
		t.Errorf("a sweep with a user indicator differs on the cluster:\n%s\n%s", a, b)
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	res, err := remote.Sweep(ctx, clusterSweep(t, 200), func(p research.Progress) {
		if p.Done > 0 {
			cancel()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Partial || res.Evaluated >= res.Combinations {
		t.Fatalf("a cancelled sweep: partial %v, %d of %d", res.Partial, res.Evaluated, res.Combinations)
	}
	nc, err := nats.Connect(r.url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	busy := map[string]int{}
	var mu sync.Mutex
	sub, err := nc.Subscribe("wicket.workers", func(m *nats.Msg) {
		var p struct {
			ID   string `json:"id"`
			Busy int    `json:"busy"`
		}
		if json.Unmarshal(m.Data, &p) == nil {
			mu.Lock()
			busy[p.ID] = p.Busy
			mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	deadline := time.Now().Add(10 * time.Second)
	for {
		time.Sleep(200 * time.Millisecond)
		mu.Lock()
		idle := len(busy) == 2
		for _, b := range busy {
			idle = idle && b == 0
		}
		mu.Unlock()
		queued := queuedChunks(t, nc)
		if idle && queued == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("10s after cancelling: workers busy %v, %d chunks still queued", busy, queued)
		}
	}
}

func queuedChunks(t *testing.T, nc *nats.Conn) uint64 {
	t.Helper()
	m, err := nc.Request("$JS.API.STREAM.INFO."+cluster.StreamName, nil, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		State struct {
			Msgs uint64 `json:"messages"`
		} `json:"state"`
	}
	if err := json.Unmarshal(m.Data, &info); err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// TestClusterNoWorkers: a sweep on a cluster nobody works for fails with
// a clear error within the bounded wait, and so does the command line.
func TestClusterNoWorkers(t *testing.T) {
	r := newClusterRig(t, 0)
	d := r.dial(time.Second)
	remote, closeRemote := r.local(d)
	defer closeRemote()
	// The context outlasts the 1 s wait by far: a "no workers" answer came
	// from the dispatcher's own bound, never from a hang the context ended.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	_, err := remote.Sweep(ctx, clusterSweep(t, 5), nil)
	var re *research.Error
	if !errors.As(err, &re) || re.Kind != research.KindUnavailable || !strings.Contains(err.Error(), "no wicket workers") || ctx.Err() != nil {
		t.Fatalf("a sweep without workers: %v (context: %v)", err, ctx.Err())
	}

	cmd := exec.Command(r.bin, "sweep", "sma_cross", "--series", "ETH-USD@1d", "--grid", "fast=5,10", "--cluster", r.url)
	cmd.Env = append(r.env, "WICKET_CLUSTER_WAIT=1s")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "no wicket workers in the research cluster") {
		t.Errorf("wicket sweep --cluster without workers: %v\n%s", err, out)
	}
	cmd = exec.Command(r.bin, "sweep", "sma_cross", "--series", "ETH-USD@1d", "--grid", "fast=5,10", "--cluster", "http://"+strings.TrimPrefix(r.url, "nats://"))
	cmd.Env = r.env
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "must be nats:// or tls://") {
		t.Errorf("an http cluster URL: %v\n%s", err, out)
	}
}

// TestClusterTLS: a `wicket worker` joins a TLS-only cluster that admits
// one nkey user, trusting the cluster's private CA through --cluster-ca
// and holding the seed's path in its environment; `wicket sweep
// --cluster` reaches it with [research] cluster_ca (relative to the
// project) and the seed's path from secrets.env, and answers what the
// in-process sweep answers. A nats:// URL to that server, a CA that did
// not sign its certificate and a missing seed are clear errors within a
// bounded time, and the seed shows in no output.
func TestClusterTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	ca := clustertest.NewCA(t)
	user := clustertest.NewNKeyUser(t)
	requireTLS := ca.RequireTLS(t)
	url := clustertest.ServerWith(t, func(o *server.Options) { requireTLS(o); user.Allow(o) })
	hostPort := strings.TrimPrefix(url, "tls://")
	r := newClusterRigAt(t, url, 0)
	var outputs []string
	// run runs the binary with the rig's environment and more, bounded.
	run := func(env []string, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, r.bin, args...)
		cmd.Env = append(r.env, env...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if ctx.Err() != nil {
			t.Fatalf("wicket %s did not end within a minute", strings.Join(args, " "))
		}
		outputs = append(outputs, stdout.String(), stderr.String())
		if err != nil {
			return stdout.String() + stderr.String(), err
		}
		return stdout.String(), nil
	}
	seedEnv := []string{project.KeyNATSNKey + "=" + user.SeedFile}
	worker := []string{"worker", "--cluster", url, "--workers", "1", "--cache", t.TempDir()}

	// A worker without the seed, and one that trusts another CA, stop at once.
	out, err := run(nil, append(worker, "--cluster-ca", ca.File)...)
	if err == nil || !strings.Contains(out, "the server wants a credential") || !strings.Contains(out, project.KeyNATSNKey) {
		t.Errorf("a worker without the seed: %v\n%s", err, out)
	}
	out, err = run(seedEnv, append(worker, "--cluster-ca", clustertest.NewCA(t).File)...)
	if err == nil || !strings.Contains(out, "certificate signed by unknown authority") || !strings.Contains(out, "not signed by the CA in") {
		t.Errorf("a worker that trusts another CA: %v\n%s", err, out)
	}
	// This one also holds a seed file others may read.
	readable := t.TempDir() + "/readable.nk"
	if seed, err := os.ReadFile(user.SeedFile); err != nil || os.WriteFile(readable, seed, 0o644) != nil || os.Chmod(readable, 0o644) != nil {
		t.Fatalf("copy the seed: %v", err)
	}
	out, err = run([]string{project.KeyNATSNKey + "=" + readable}, worker...)
	if err == nil || !strings.Contains(out, "not signed by a CA this machine trusts") || !strings.Contains(out, "--cluster-ca") {
		t.Errorf("a worker that trusts the system's roots only: %v\n%s", err, out)
	}
	if !strings.Contains(out, "readable.nk ("+project.KeyNATSNKey+") is readable by other users (mode 644)") {
		t.Errorf("no warning about a seed file others may read:\n%s", out)
	}

	out, err = run(seedEnv, "worker", "--cluster", "nats://"+hostPort, "--cache", t.TempDir())
	if err == nil || !strings.Contains(out, "the server requires TLS") || !strings.Contains(out, "write the cluster as tls://"+hostPort) {
		t.Errorf("a nats:// URL to a TLS-only server: %v\n%s", err, out)
	}

	r.workerArgs, r.workerEnv = []string{"--cluster-ca", ca.File}, seedEnv
	r.startWorker()

	// The project trusts the CA through wicket.toml and finds the seed
	// through secrets.env.
	p := project.Project{Root: r.dir}
	pem, err := os.ReadFile(ca.File)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.SettingsDir()+"/nats-ca.pem", pem, 0o644); err != nil {
		t.Fatal(err)
	}
	toml, err := os.ReadFile(p.ConfigPath())
	if err != nil || !strings.Contains(string(toml), "\n[research]\n") {
		t.Fatalf("wicket.toml has no [research] table: %v", err)
	}
	toml = []byte(strings.Replace(string(toml), "\n[research]\n", "\n[research]\ncluster_ca = \"settings/nats-ca.pem\"\n", 1))
	if err := os.WriteFile(p.ConfigPath(), toml, 0o644); err != nil {
		t.Fatal(err)
	}
	secrets, err := os.OpenFile(p.SecretsPath(), os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	_, err = secrets.WriteString("\n" + project.KeyNATSNKey + "=" + user.SeedFile + "\n")
	if cerr := secrets.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}

	sweep := []string{"sweep", "sma_cross", "--series", "ETH-USD@1d", "--grid", "fast=2:12", "--grid", "slow=30,60", "--json"}
	want, err := run(nil, sweep...)
	if err != nil {
		t.Fatalf("the in-process sweep: %v\n%s", err, want)
	}
	got, err := run([]string{"WICKET_CLUSTER_WAIT=20s"}, append(sweep, "--cluster", url)...)
	if err != nil {
		t.Fatalf("the sweep on the TLS cluster: %v\n%s", err, got)
	}
	// The ledger grows with each sweep (its figures, the run id): the
	// sweep's own answer must be the same.
	same := func(out string) string {
		var v map[string]json.RawMessage
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("sweep --json: %v\n%s", err, out)
		}
		for _, k := range []string{"run_id", "ledger_deflated_sharpe"} {
			if _, ok := v[k]; !ok {
				t.Fatalf("sweep --json has no %s", k)
			}
			delete(v, k)
		}
		// Each process draws its own proof seed: the verdicts agree but in it.
		v["lookahead_check"] = json.RawMessage(regexp.MustCompile(`seed [0-9a-f]{16}`).ReplaceAll(v["lookahead_check"], []byte("seed S")))
		return string(mustMarshal(t, v))
	}
	if a, b := same(want), same(got); a != b || !strings.Contains(a, `"evaluated":22`) {
		t.Errorf("the sweep on the TLS cluster differs from the in-process sweep:\n%s\n%s", a, b)
	}
	answered := false
	for timeout := time.After(10 * time.Second); !answered; {
		select {
		case l := <-r.lines[0]:
			answered = strings.Contains(l, ": answered in ")
			outputs = append(outputs, l)
		case <-timeout:
			t.Fatal("the worker on the TLS cluster answered no chunk")
		}
	}

	// nats:// to the TLS-only server with the CA configured.
	out, err = run(nil, append(sweep, "--cluster", "nats://"+hostPort)...)
	if err == nil || !strings.Contains(out, "a CA file is for a TLS cluster") || !strings.Contains(out, "write it as tls://"+hostPort) {
		t.Errorf("a nats:// URL with cluster_ca set: %v\n%s", err, out)
	}
	for _, o := range outputs {
		if strings.Contains(o, user.Seed) || strings.Contains(o, user.Seed[2:20]) {
			t.Fatalf("the seed shows in an output:\n%s", o)
		}
	}
}

// TestClusterSecurity: a cluster that is not on this machine is refused
// without TLS and a credential, naming --insecure-cluster, before
// anything is dialled; a worker without the cluster key does not start;
// and a sweep whose only worker holds another key fails within the
// bounded wait, saying the workers' heartbeats were ignored and why.
func TestClusterSecurity(t *testing.T) {
	r := newClusterRig(t, 0)
	run := func(dir string, env []string, args ...string) (string, int) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, r.bin, args...)
		cmd.Env, cmd.Dir = append(r.env, env...), dir
		out, err := cmd.CombinedOutput()
		if ctx.Err() != nil {
			t.Fatalf("wicket %s did not end within a minute", strings.Join(args, " "))
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return string(out), ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	noProject := []string{project.EnvProject + "="}
	remote := "nats://cluster.invalid:4222" // a name that never resolves: nothing is dialled
	out, code := run(t.TempDir(), noProject, "worker", "--cluster", remote, "--cache", t.TempDir())
	if code != 2 || !strings.Contains(out, "is not on this machine") || !strings.Contains(out, "without TLS") || !strings.Contains(out, "--insecure-cluster") {
		t.Errorf("a worker for a plain remote cluster: exit %d\n%s", code, out)
	}
	out, code = run(r.dir, nil, "sweep", "sma_cross", "--series", "ETH-USD@1d", "--grid", "fast=5,10", "--cluster", "tls://cluster.invalid:4222")
	if code != 2 || !strings.Contains(out, "without a credential") || strings.Contains(out, "without TLS") || !strings.Contains(out, "--insecure-cluster") {
		t.Errorf("a sweep on a remote cluster without a credential: exit %d\n%s", code, out)
	}
	out, code = run(t.TempDir(), noProject, "worker", "--cluster", r.url, "--cache", t.TempDir())
	if code == 0 || !strings.Contains(out, "needs its cluster key") || !strings.Contains(out, project.KeyCluster) {
		t.Errorf("a worker without the cluster key: exit %d\n%s", code, out)
	}

	other := testkit.Bytes(t, 32)
	r.workerEnv = []string{project.KeyCluster + "=" + hex.EncodeToString(other)}
	r.startWorker()
	out, code = run(r.dir, []string{"WICKET_CLUSTER_WAIT=1s"}, "sweep", "sma_cross", "--series", "ETH-USD@1d", "--grid", "fast=5,10", "--cluster", r.url)
	if code == 0 || !strings.Contains(out, "no wicket workers") || !strings.Contains(out, "heartbeats were ignored") || !strings.Contains(out, "same "+project.KeyCluster) {
		t.Errorf("a sweep whose worker holds another key: exit %d\n%s", code, out)
	}
	if strings.Contains(out, hex.EncodeToString(other)) || strings.Contains(out, string(r.key)) {
		t.Errorf("a key shows in the output:\n%s", out)
	}
}
