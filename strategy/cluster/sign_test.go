package cluster_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"wicket/strategy/cluster"
	"wicket/strategy/clustertest"
	"wicket/strategy/research"
)

// gated is a worker's real pool whose first chunk waits for open: the
// test decides what reaches the sweep before the chunk's genuine answer.
type gated struct {
	cluster.Runner
	open chan struct{}
}

func (g gated) Do(ctx context.Context, kind string, req, resp any) error {
	select {
	case <-g.open:
	case <-ctx.Done():
		return ctx.Err()
	}
	return g.Runner.Do(ctx, kind, req, resp)
}

// watchLog is a log a test can wait on for a line.
type watchLog struct {
	mu      sync.Mutex
	b       strings.Builder
	changed chan struct{} // closed at each write, then replaced
}

func newWatchLog() *watchLog { return &watchLog{changed: make(chan struct{})} }

func (l *watchLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.Write(p)
	close(l.changed)
	l.changed = make(chan struct{})
	return len(p), nil
}

func (l *watchLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitFor waits, within a bound on a hang, for a line holding want.
func (l *watchLog) waitFor(t *testing.T, what, want string) {
	t.Helper()
	select {
	case <-l.seen(t, want):
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no line with %q in 30s; the log:\n%s", what, want, l.String())
	}
}

// seen is closed once a line holding want is written (or t ends).
func (l *watchLog) seen(t *testing.T, want string) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		for {
			l.mu.Lock()
			found, changed := strings.Contains(l.b.String(), want), l.changed
			l.mu.Unlock()
			if found {
				return
			}
			select {
			case <-changed:
			case <-t.Context().Done():
				return
			}
		}
	}()
	return ch
}

// serveWith starts a one-slot cluster worker running chunks through r,
// and waits until it has joined.
func serveWith(t *testing.T, o cluster.Options, r cluster.Runner) *watchLog {
	t.Helper()
	return serveCaching(t, o, r, t.TempDir())
}

// serveCaching is serveWith with the worker's bars cache in cache.
func serveCaching(t *testing.T, o cluster.Options, r cluster.Runner, cache string) *watchLog {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	log := newWatchLog()
	served := make(chan error, 1)
	go func() {
		served <- cluster.Serve(ctx, cluster.WorkerOptions{Options: o, Pool: r, CacheDir: cache, Log: log})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Error(err)
		}
	})
	log.waitFor(t, "the worker", "joined the research cluster")
	return log
}

// TestForgedAnswerIsRefused: a client of the same NATS server that does
// not hold the cluster key reads a chunk off the stream's subject and
// answers it first with a forged error. The sweep refuses that answer,
// counts it (in its result, its progress and the log), and completes on
// the chunk's genuine answer with the in-process sweep's result.
func TestForgedAnswerIsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	url := clustertest.Server(t)
	o := cluster.Options{Key: testKey, URL: url}
	open := make(chan struct{})
	serveWith(t, o, gated{newPool(t), open})
	dlog := newWatchLog()
	d, err := cluster.Dial(t.Context(), cluster.DispatcherOptions{Options: o, Log: dlog})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()

	// The rogue answers the first chunk it sees, in the form a worker
	// answers, with a signature made up.
	rogue, _ := jetStream(t, url)
	var once sync.Once
	if _, err := rogue.Subscribe("wicket.chunks.>", func(m *nats.Msg) {
		once.Do(func() {
			forged := nats.NewMsg(m.Header.Get("Wicket-Reply"))
			for _, h := range []string{"Wicket-Chunk", "Wicket-Protocol"} {
				forged.Header.Set(h, m.Header.Get(h))
			}
			forged.Header.Set("Wicket-Worker", "rogue")
			forged.Header.Set("Wicket-Error", "1")
			forged.Header.Set("Wicket-Signature", strings.Repeat("ab", 32))
			forged.Data = []byte(`{"kind":"handler","message":"forged: the strategy crashed"}`)
			rogue.PublishMsg(forged)
		})
	}); err != nil {
		t.Fatal(err)
	}
	if err := rogue.Flush(); err != nil {
		t.Fatal(err)
	}

	p := demoProject(t)
	req := sweepReq(t, "SPY@1d")
	want, err := research.NewLocal(research.Config{ProofSeed: fixedProofSeed, Project: p, Pool: newPool(t)}).Sweep(t.Context(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		res research.SweepResult
		err error
	}
	done := make(chan outcome, 1)
	var mu sync.Mutex
	var last research.Progress
	go func() {
		res, err := research.NewLocal(research.Config{ProofSeed: fixedProofSeed, Project: p, Pool: newPool(t), Chunks: d}).Sweep(t.Context(), req, func(p research.Progress) {
			mu.Lock()
			last = p
			mu.Unlock()
		})
		done <- outcome{res, err}
	}()
	// The forged answer comes, and is refused, before any genuine one.
	var got outcome
	select {
	case <-dlog.seen(t, "refused an answer to chunk"):
		close(open)
		got = <-done
	case got = <-done:
		t.Fatalf("the sweep ended before any chunk ran (%v); its log:\n%s", got.err, dlog.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("the sweep refused no answer in 30s; its log:\n%s", dlog.String())
	}
	if got.err != nil {
		t.Fatalf("the sweep died on a forged answer: %v", got.err)
	}
	if n := d.Refused(); n != 1 {
		t.Errorf("refused %d answers, want 1", n)
	}
	i := slices.IndexFunc(got.res.Warnings, func(w string) bool { return strings.Contains(w, "refused 1 forged or altered chunk answer ") })
	if i < 0 {
		t.Fatalf("no warning of the refused answer: %q", got.res.Warnings)
	}
	mu.Lock()
	if !strings.Contains(last.Message, "forged cluster answers refused: 1") {
		t.Errorf("the last progress says nothing of the refused answer: %q", last.Message)
	}
	mu.Unlock()
	got.res.Warnings = slices.Delete(got.res.Warnings, i, i+1)
	a, _ := json.Marshal(want)
	b, _ := json.Marshal(got.res)
	if string(a) != string(b) || got.res.Evaluated != 100 {
		t.Errorf("the sweep with a forged answer differs from the in-process sweep:\n%s\n%s", a, b)
	}
	if l := dlog.String(); !strings.Contains(l, "does not verify with the cluster key") || !strings.Contains(l, "1 refused so far") {
		t.Errorf("the sweep's log: %s", l)
	}
}

// TestForgedOrAlteredChunkIsNotRun: a chunk queued without the cluster
// key's signature, or a signed one whose body was altered, is neither
// run nor answered; the worker says why.
func TestForgedOrAlteredChunkIsNotRun(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	url := clustertest.Server(t)
	o := cluster.Options{Key: testKey, URL: url}
	ran := make(chan struct{}, 4)
	log := serveWith(t, o, ranRunner{newPool(t), ran})
	nc, js := jetStream(t, url)
	replies, err := nc.SubscribeSync("wicket.results.rogue")
	if err != nil {
		t.Fatal(err)
	}
	chunk := func(id string, body string, sign, alter bool) {
		m := nats.NewMsg("wicket.chunks.rogue." + id)
		m.Header.Set("Wicket-Chunk", "rogue."+id)
		m.Header.Set("Wicket-Reply", "wicket.results.rogue")
		m.Header.Set("Wicket-Protocol", cluster.Protocol)
		m.Header.Set("Wicket-Sweep", "rogue")
		m.Data = []byte(body)
		if sign {
			cluster.Sign(testKey, m)
		}
		if alter {
			m.Data = []byte(strings.Replace(body, "x = 1", "x = 2", 1))
		}
		if _, err := js.PublishMsg(t.Context(), m); err != nil {
			t.Fatal(err)
		}
	}
	body := `{"chunk":{"name":"x.star","source":"x = 1\n","series":"SPY@1d","digest":"` + strings.Repeat("0", 64) + `","capital":"10000","combos":[{}]}}`
	for _, tt := range []struct {
		id          string
		sign, alter bool
	}{{"forged", false, false}, {"altered", true, true}} {
		chunk(tt.id, body, tt.sign, tt.alter)
		log.waitFor(t, tt.id, `chunk "rogue.`+tt.id+`": refused, not run`)
		if n, _, _ := replies.Pending(); n != 0 {
			t.Errorf("%s: the worker answered it", tt.id)
		}
		select {
		case <-ran:
			t.Errorf("%s: the worker ran it", tt.id)
		default:
		}
	}
	// A genuine one with the same body is run (and fails on its bars: no
	// bars of that digest in the store) and answered, signed.
	chunk("genuine", body, true, false)
	answer, err := replies.NextMsg(30 * time.Second)
	if err != nil {
		t.Fatalf("the genuine chunk got no answer: %v\n%s", err, log.String())
	}
	if answer.Header.Get("Wicket-Chunk") != "rogue.genuine" || len(answer.Header.Get("Wicket-Signature")) != 64 {
		t.Errorf("the genuine chunk's answer: %v %s", answer.Header, answer.Data)
	}
}

// ranRunner notes each chunk it runs.
type ranRunner struct {
	cluster.Runner
	ran chan struct{}
}

func (r ranRunner) Do(ctx context.Context, kind string, req, resp any) error {
	select {
	case r.ran <- struct{}{}:
	default:
	}
	return r.Runner.Do(ctx, kind, req, resp)
}

// TestFailedSweepPurgesItsChunks: a sweep whose chunks fail leaves none
// of them on the stream, even when the worker that answered them never
// acknowledged them (it died between its answer and its ack): none is
// run again for nobody.
func TestFailedSweepPurgesItsChunks(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	url := clustertest.Server(t)
	o := cluster.Options{Key: testKey, URL: url}
	d, err := cluster.Dial(t.Context(), cluster.DispatcherOptions{Options: o, WaitWorkers: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	// The worker: it says it is there when pinged, takes chunks, answers
	// each with a signed error, and never acks.
	nc, js := jetStream(t, url)
	seq := 0
	if _, err := nc.Subscribe("wicket.workers.ping", func(*nats.Msg) {
		seq++
		m := nats.NewMsg("wicket.workers")
		m.Header.Set("Wicket-Protocol", cluster.Protocol)
		m.Data, _ = json.Marshal(map[string]any{"id": "dying", "host": "h", "slots": 2, "seq": seq})
		cluster.Sign(testKey, m)
		nc.PublishMsg(m)
	}); err != nil {
		t.Fatal(err)
	}
	cons, err := js.CreateOrUpdateConsumer(t.Context(), cluster.StreamName, jetstream.ConsumerConfig{
		Durable: cluster.ConsumerName, AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Minute, MaxDeliver: -1, MaxAckPending: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	answered := make(chan struct{}, 64)
	cc, err := cons.Consume(func(m jetstream.Msg) {
		a := nats.NewMsg(m.Headers().Get("Wicket-Reply"))
		a.Header.Set("Wicket-Chunk", m.Headers().Get("Wicket-Chunk"))
		a.Header.Set("Wicket-Sweep", m.Headers().Get("Wicket-Sweep"))
		a.Header.Set("Wicket-Worker", "dying")
		a.Header.Set("Wicket-Protocol", cluster.Protocol)
		a.Header.Set("Wicket-Error", "1")
		a.Data = []byte(`{"kind":"handler","message":"the strategy worker failed"}`)
		cluster.Sign(testKey, a)
		nc.PublishMsg(a)
		answered <- struct{}{}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Stop()

	_, err = research.NewLocal(research.Config{ProofSeed: fixedProofSeed, Project: demoProject(t), Pool: newPool(t), Chunks: d}).Sweep(t.Context(), sweepReq(t, "SPY@1d"), nil)
	if err == nil || !strings.Contains(err.Error(), "the strategy worker failed") {
		t.Fatalf("the sweep: %v", err)
	}
	if len(answered) == 0 {
		t.Fatal("no chunk was answered")
	}
	st, err := js.Stream(t.Context(), cluster.StreamName)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 0 {
		t.Errorf("%d chunks of the failed sweep are still on the stream", info.State.Msgs)
	}
}

// TestClusterKeyIsRequired: without a cluster key, or with a short one,
// neither a sweep nor a worker connects, and the error says what to set.
func TestClusterKeyIsRequired(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	url := clustertest.Server(t)
	for _, key := range [][]byte{nil, []byte("short")} {
		_, err := cluster.Dial(t.Context(), cluster.DispatcherOptions{Options: cluster.Options{URL: url, Key: key}})
		if err == nil || !strings.Contains(err.Error(), "WICKET_CLUSTER_KEY") {
			t.Errorf("dial with key %q: %v", key, err)
		}
		err = cluster.Serve(t.Context(), cluster.WorkerOptions{Options: cluster.Options{URL: url, Key: key}, Pool: newPool(t), CacheDir: t.TempDir()})
		if err == nil || !strings.Contains(err.Error(), "WICKET_CLUSTER_KEY") {
			t.Errorf("serve with key %q: %v", key, err)
		}
	}
}

// TestTransportCheck: a cluster that is not on this machine needs TLS and
// a credential unless Insecure says otherwise; nothing is dialled to
// find out (a host name is never resolved).
func TestTransportCheck(t *testing.T) {
	for _, tt := range []struct {
		o    cluster.Options
		want []string // nil: allowed
	}{
		{cluster.Options{URL: "nats://127.0.0.1:4222"}, nil},
		{cluster.Options{URL: "nats://127.8.9.10:4222"}, nil},
		{cluster.Options{URL: "nats://localhost:4222"}, nil},
		{cluster.Options{URL: "nats://[::1]:4222"}, nil},
		{cluster.Options{URL: "nats://10.0.0.5:4222"}, []string{"is not on this machine", "without TLS (write it as tls://10.0.0.5:4222)", "without a credential", "WICKET_NATS_USER", "--insecure-cluster"}},
		{cluster.Options{URL: "nats://cluster.invalid:4222", NKeyFile: "user.nk"}, []string{"without TLS", "--insecure-cluster"}},
		{cluster.Options{URL: "tls://cluster.invalid:4222"}, []string{"without a credential", "--insecure-cluster"}},
		{cluster.Options{URL: "tls://cluster.invalid:4222", User: "u", Password: "p"}, nil},
		{cluster.Options{URL: "tls://cluster.invalid:4222", CredsFile: "u.creds"}, nil},
		{cluster.Options{URL: "tls://cluster.invalid:4222", Token: "t"}, nil},
		{cluster.Options{URL: "nats://10.0.0.5:4222", Insecure: true}, nil},
		{cluster.Options{URL: "nats://127.0.0.1.cluster.invalid:4222"}, []string{"is not on this machine"}},
	} {
		err := cluster.CheckTransport(tt.o)
		if tt.want == nil {
			if err != nil {
				t.Errorf("%s: %v", tt.o.URL, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s (%+v) was allowed", tt.o.URL, tt.o)
			continue
		}
		wantErr(t, tt.o.URL, err, tt.want...)
		if strings.Contains(tt.o.URL, "tls://") && strings.Contains(err.Error(), "without TLS") {
			t.Errorf("%s: %v", tt.o.URL, err)
		}
	}
	// Dial and Serve check it before anything is dialled.
	o := cluster.Options{URL: "nats://cluster.invalid:4222", Key: testKey}
	_, err := cluster.Dial(t.Context(), cluster.DispatcherOptions{Options: o})
	wantErr(t, "dial", err, "--insecure-cluster")
	err = cluster.Serve(t.Context(), cluster.WorkerOptions{Options: o, Pool: newPool(t), CacheDir: t.TempDir()})
	wantErr(t, "serve", err, "--insecure-cluster")
}
