package cluster_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"wicket/strategy/cluster"
	"wicket/strategy/clustertest"
	"wicket/strategy/history"
	"wicket/strategy/research"
	"wicket/strategy/worker"
)

// jetStream connects to the server at url as a client of its own (a
// stand-in for another program on the cluster), closed when t ends.
func jetStream(t *testing.T, url string) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}

// TestBarsUnderAWrongName: bars stored under a digest that is not
// theirs are refused by the worker, and the chunk fails with a clear
// error instead of running on them.
func TestBarsUnderAWrongName(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	url := clustertest.Server(t)
	d, _ := joinWorker(t, cluster.Options{Key: testKey, URL: url})
	_, js := jetStream(t, url)
	obj, err := js.ObjectStore(t.Context(), cluster.BarsBucket)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("some other bars"))
	name := hex.EncodeToString(sum[:])
	if _, err := obj.PutBytes(t.Context(), name, []byte("not those bars")); err != nil {
		t.Fatal(err)
	}
	_, err = d.Sweep(t.Context(), worker.SweepChunk{Name: "x.star", Source: "x = 1\n", Series: "SPY@1d", Digest: name, Capital: "10000", Combos: []map[string]any{{}}})
	if err == nil || !strings.Contains(err.Error(), "are not what their name says") {
		t.Fatalf("bars under a wrong name: %v", err)
	}
}

// TestAnswerOverMaxPayload: on a server with a small max_payload the
// bars travel in pieces that fit, and an answer too large for it fails
// the sweep with an error that says so, never a chunk redelivered for
// ever.
func TestAnswerOverMaxPayload(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	url := clustertest.ServerWith(t, func(o *server.Options) { o.MaxPayload = 16 << 10 })
	d, _ := joinWorker(t, cluster.Options{Key: testKey, URL: url})
	_, err := research.NewLocal(research.Config{ProofSeed: fixedProofSeed, Project: demoProject(t), Pool: newPool(t), Chunks: d}).Sweep(t.Context(), sweepReq(t, "SPY@1d"), nil)
	if err == nil || !strings.Contains(err.Error(), "larger than the NATS server's max_payload (16384 bytes)") {
		t.Fatalf("an answer over max_payload: %v", err)
	}
}

// TestWarmFetchesBarsAhead: Warm ships a range's bars and the workers
// get them into their cache (pushed to them) before any chunk asks for
// them, and it says what it read; a range with no bars is the store's
// error, and warms nothing; after Close it fails, and opens no store
// again.
func TestWarmFetchesBarsAhead(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	url := clustertest.Server(t)
	cache := t.TempDir()
	d, log := joinWorkerCaching(t, cluster.Options{Key: testKey, URL: url}, cache)
	ctx := t.Context()
	p := demoProject(t)
	if _, err := d.Warm(ctx, worker.BarsRange{HistoryPath: p.HistoryPath(), Series: "NOSUCH@1d"}); err == nil || !strings.Contains(err.Error(), "no such series") {
		t.Errorf("Warm of a series that is not stored: %v", err)
	}
	seen, err := d.Warm(ctx, worker.BarsRange{HistoryPath: p.HistoryPath(), Series: "SPY@1d"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := history.OpenReadOnly(p.HistoryPath())
	if err != nil {
		t.Fatal(err)
	}
	bars, err := s.Load("SPY@1d", time.Time{}, time.Time{})
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	if seen.Digest != bars.Digest() || seen.Count != bars.Len() || seen.First != bars.Time[0] || seen.Last != bars.Time[bars.Len()-1] {
		t.Errorf("Warm read %+v, the store holds %d bars from %d to %d, digest %s", seen, bars.Len(), bars.Time[0], bars.Time[bars.Len()-1], bars.Digest())
	}
	want := filepath.Join(cache, bars.Digest()+".bars")
	kept := "bars " + bars.Digest()[:12] + " pushed (" // logged once they are in the cache
	deadline := time.Now().Add(30 * time.Second)       // a bound on a hang, not a timing assertion
	for {
		if strings.Contains(log.String(), kept) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the warmed bars never reached the worker's cache; its log:\n%s", log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got, err := os.ReadFile(want); err != nil || !bytes.Equal(got, bars.Encode()) {
		t.Errorf("the worker's cache holds other bars under their digest (%v)", err)
	}
	if strings.Contains(log.String(), "fetch announced bars") {
		t.Errorf("a fetch failed: %s", log.String())
	}
	// Bars small enough are pushed to the worker: it fetches nothing.
	if l := log.String(); strings.Contains(l, " fetched (") {
		t.Errorf("the pushed bars were fetched as well; the worker's log:\n%s", l)
	}
	d.Close()
	if _, err := d.Warm(ctx, worker.BarsRange{HistoryPath: p.HistoryPath(), Series: "SPY@1d"}); err == nil || !strings.Contains(err.Error(), "is closed") {
		t.Errorf("Warm after Close: %v", err)
	}
}

// TestChunkOfAnotherVersion: a chunk queued by a dispatcher of another
// wire version (here: none, an older wicket, which signs nothing) is
// answered with an unsigned error that says so, and taken off the queue
// rather than handed to worker after worker.
func TestChunkOfAnotherVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	url := clustertest.Server(t)
	_, log := joinWorker(t, cluster.Options{Key: testKey, URL: url})
	nc, js := jetStream(t, url)
	replies, err := nc.SubscribeSync("wicket.results.old")
	if err != nil {
		t.Fatal(err)
	}
	m := nats.NewMsg("wicket.chunks.old.1")
	m.Header.Set("Wicket-Chunk", "old.1")
	m.Header.Set("Wicket-Reply", "wicket.results.old")
	m.Data = []byte(`{"chunk":{}}`)
	if _, err := js.PublishMsg(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	answer, err := replies.NextMsg(30 * time.Second)
	if err != nil {
		t.Fatalf("no answer: %v; the worker's log:\n%s", err, log.String())
	}
	if answer.Header.Get("Wicket-Error") != "1" || !strings.Contains(string(answer.Data), "cluster wire version none, an older wicket") ||
		!strings.Contains(string(answer.Data), "run the same wicket version on every machine") {
		t.Fatalf("answer %v: %s", answer.Header, answer.Data)
	}
	// Unsigned, as the chunk was: a sweep of this version would refuse it,
	// so a chunk forged to name its chunk cannot have it fail.
	if s := answer.Header.Get("Wicket-Signature"); s != "" {
		t.Errorf("the answer to an unsigned chunk is signed: %s", s)
	}
	// Taken off the queue: acknowledged, not waiting for another worker.
	cons, err := js.Consumer(t.Context(), cluster.StreamName, cluster.ConsumerName)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second) // a bound on a hang, not a timing assertion
	for {
		info, err := cons.Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if info.NumAckPending == 0 && info.NumPending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the chunk is still queued: %d pending, %d unacknowledged", info.NumPending, info.NumAckPending)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// fixedProofSeed fixes the lookahead proofs' seed, so a cluster sweep and
// an in-process one report the same verdict (each draws its own seed
// otherwise).
func fixedProofSeed() uint64 { return 1 }
