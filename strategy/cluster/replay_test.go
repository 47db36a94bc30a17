package cluster_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"wicket/internal/testkit"
	"wicket/strategy/cluster"
	"wicket/strategy/clustertest"
	"wicket/strategy/research"
)

// countRunner counts the chunks it runs.
type countRunner struct {
	cluster.Runner
	n *atomic.Int64
}

func (r countRunner) Do(ctx context.Context, kind string, req, resp any) error {
	r.n.Add(1)
	return r.Runner.Do(ctx, kind, req, resp)
}

// capture records copies of the messages on subject a client without the
// cluster key reads off the server.
func capture(t *testing.T, nc *nats.Conn, subject string) func() []*nats.Msg {
	t.Helper()
	var mu sync.Mutex
	var got []*nats.Msg
	if _, err := nc.Subscribe(subject, func(m *nats.Msg) {
		c := nats.NewMsg(m.Subject)
		for k, v := range m.Header {
			if k != nats.MsgIdHdr { // the replay dodges JetStream's duplicate window
				c.Header[k] = append([]string(nil), v...)
			}
		}
		c.Data = append([]byte(nil), m.Data...)
		mu.Lock()
		got = append(got, c)
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return func() []*nats.Msg {
		mu.Lock()
		defer mu.Unlock()
		return append([]*nats.Msg(nil), got...)
	}
}

// TestReplayedChunkIsNotRunAgain is issue 44's item 2, chunks: a client
// without the cluster key re-published the signed chunks it had read,
// and the worker ran each again (3 of 3). A worker runs a chunk id once.
func TestReplayedChunkIsNotRunAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	url := clustertest.Server(t)
	o := cluster.Options{Key: testKey, URL: url}
	var runs atomic.Int64
	wlog := serveWith(t, o, countRunner{newPool(t), &runs})
	d, err := cluster.Dial(t.Context(), cluster.DispatcherOptions{Options: o})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	rogue, js := jetStream(t, url)
	chunks := capture(t, rogue, "wicket.chunks.>")
	if _, err := research.NewLocal(research.Config{Project: demoProject(t), Pool: newPool(t), Chunks: d}).Sweep(t.Context(), sweepReq(t, "SPY@1d"), nil); err != nil {
		t.Fatal(err)
	}
	ran := runs.Load()
	got := chunks()
	if len(got) == 0 || ran == 0 {
		t.Fatalf("the sweep sent %d chunks and ran %d", len(got), ran)
	}
	replays := min(3, len(got))
	for _, m := range got[:replays] {
		if _, err := js.PublishMsg(t.Context(), m); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range got[:replays] {
		wlog.waitFor(t, "a replayed chunk", "chunk "+m.Header.Get("Wicket-Chunk")+": run here already, not run again")
	}
	if n := runs.Load(); n != ran {
		t.Errorf("the worker ran %d chunks after %d replays (it had run %d)", n-ran, replays, ran)
	}
}

// TestReplayedHeartbeatsKeepNoWorker is issue 44's item 2, heartbeats:
// replayed heartbeats of a stopped worker held a sweep 42.6 s (10.2 s
// normally). A sweep takes a worker's heartbeat only with a higher
// sequence number than it saw, and none after it expires.
func TestReplayedHeartbeatsKeepNoWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	url := clustertest.Server(t)
	o := cluster.Options{Key: testKey, URL: url}
	rogue, _ := jetStream(t, url)
	beats := capture(t, rogue, "wicket.workers")
	clock := testkit.NewClock(time.Now())
	dlog := newWatchLog()
	d, err := cluster.Dial(t.Context(), cluster.DispatcherOptions{Options: o, Now: clock.Now, Log: dlog})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, stop := serveWorker(t, url, newPool(t))
	waitFor(t, func() bool { return len(beats()) >= 2 && cluster.Present(d) }, func() string { return "no heartbeats of the worker" })
	stop()
	clock.Advance(cluster.LiveFor + time.Second)
	d.Size() // as a sweep does: a worker gone quiet is forgotten
	if cluster.Present(d) {
		t.Fatal("a stopped worker is present")
	}

	// replay publishes the heartbeats again 30 times over, then a
	// heartbeat nobody signed: once the dispatcher logs that one, it has
	// read the replays before it (one publisher, one subscription: in
	// order).
	replay := func(log *watchLog) {
		t.Helper()
		got := beats()
		for i := range 30 {
			if err := rogue.PublishMsg(got[i%len(got)]); err != nil {
				t.Fatal(err)
			}
		}
		marker := nats.NewMsg("wicket.workers")
		marker.Data, _ = json.Marshal(map[string]any{"id": "marker", "seq": 1})
		if err := rogue.PublishMsg(marker); err != nil {
			t.Fatal(err)
		}
		log.waitFor(t, "the replayed heartbeats", "ignored a heartbeat")
	}
	replay(dlog)
	if cluster.Present(d) {
		t.Error("replayed heartbeats of a stopped worker keep it present for the sweep that saw them")
	}

	// A sweep that never saw them: they have expired by its clock.
	late := testkit.NewClock(time.Now().Add(time.Minute))
	llog := newWatchLog()
	d2, err := cluster.Dial(t.Context(), cluster.DispatcherOptions{Options: o, Now: late.Now, Log: llog})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	replay(llog)
	if cluster.Present(d2) {
		t.Error("replayed heartbeats of a stopped worker make it present for a new sweep")
	}
	if l := llog.String(); !strings.Contains(l, "ignored a heartbeat") {
		t.Errorf("the new sweep's log: %s", l)
	}
}
