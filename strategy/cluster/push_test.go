package cluster_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"wicket/strategy/cluster"
	"wicket/strategy/clustertest"
	"wicket/strategy/history"
	"wicket/strategy/research"
	"wicket/strategy/templates"
	"wicket/strategy/worker"
)

// storedBars are the demo's bars of series, encoded as they are shipped,
// and their digest.
func storedBars(t *testing.T, series string) ([]byte, string) {
	t.Helper()
	s, err := history.OpenReadOnly(demoProject(t).HistoryPath())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	bars, err := s.Load(series, time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	return bars.Encode(), bars.Digest()
}

// TestPushedBarsAreVerified: bars pushed to the workers are kept only
// when the note that names them is signed with the cluster key and they
// hash to the digest it names (the copy written meanwhile is removed);
// then the worker keeps them, fetching nothing from the store.
func TestPushedBarsAreVerified(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	url := clustertest.Server(t)
	cache := t.TempDir()
	log := serveCaching(t, cluster.Options{Key: testKey, URL: url}, newPool(t), cache)
	nc, _ := jetStream(t, url)
	data, digest := storedBars(t, "SPY@1d")
	kept := filepath.Join(cache, digest+".bars")
	push := func(key []byte, body []byte) {
		t.Helper()
		m := nats.NewMsg(cluster.BarsPushSubject)
		note := fmt.Sprintf(`{"digest":%q,"series":"SPY@1d"}`, digest)
		m.Data = []byte(note) // the note is what the signature covers
		m.Header.Set("Wicket-Protocol", cluster.Protocol)
		cluster.Sign(key, m)
		m.Header.Set("Wicket-Note", note)
		m.Data = body
		if err := nc.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	push(clustertest.NewKey(), data) // another key's
	log.waitFor(t, "bars pushed under another key", "ignored a message on "+cluster.BarsPushSubject)
	push(testKey, append([]byte{1}, data[1:]...)) // the cluster key's, but not the bars it names
	log.waitFor(t, "other bars than the push names", "do not hash to their name")
	if _, err := os.Stat(kept); !os.IsNotExist(err) {
		t.Fatalf("bars refused are in the cache: %v", err)
	}
	// Nor is their copy, written while they were hashed.
	if left, err := os.ReadDir(cache); err != nil || len(left) != 0 {
		t.Fatalf("the cache holds %v after the bars were refused (%v)", left, err)
	}
	push(testKey, data)
	log.waitFor(t, "a genuine push", "bars "+digest[:12]+" pushed (")
	if got, err := os.ReadFile(kept); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the kept bars: %v (%d bytes, want %d)", err, len(got), len(data))
	}
	if l := log.String(); strings.Contains(l, " fetched (") {
		t.Errorf("the worker fetched the pushed bars; its log:\n%s", l)
	}
}

// TestChunkWaitsForItsUpload: a chunk may reach a worker before its bars
// reach the store (a sweep queues its first chunks while it uploads
// them): the worker waits for them instead of failing the chunk, and
// runs it once they are there.
func TestChunkWaitsForItsUpload(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	url := clustertest.Server(t)
	o := cluster.Options{Key: testKey, URL: url}
	log := serveWith(t, o, newPool(t))
	d, err := cluster.Dial(t.Context(), cluster.DispatcherOptions{Options: o})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	data, digest := storedBars(t, "SPY@1d")
	src, err := templates.Source("sma_cross")
	if err != nil {
		t.Fatal(err)
	}
	type answer struct {
		res worker.SweepChunkResult
		err error
	}
	answered := make(chan answer, 1)
	go func() {
		res, err := d.Sweep(t.Context(), worker.SweepChunk{Name: "sma_cross.star", Source: src, Series: "SPY@1d", Digest: digest,
			Capital: "10000", Combos: []map[string]any{{"fast": 5, "slow": 20}}})
		answered <- answer{res, err}
	}()
	log.waitFor(t, "a chunk whose bars are not stored", "bars "+digest[:12]+": not in the research cluster's store yet")
	_, js := jetStream(t, url)
	obj, err := js.ObjectStore(t.Context(), cluster.BarsBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := obj.PutBytes(t.Context(), digest, data); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-answered:
		if a.err != nil || len(a.res.Trials) != 1 || a.res.Trials[0].Error != "" || a.res.Bars.Digest != digest {
			t.Fatalf("the chunk: %v, %+v", a.err, a.res)
		}
	case <-time.After(time.Minute): // a bound on a hang, not a timing assertion
		t.Fatalf("no answer; the worker's log:\n%s", log.String())
	}
}

// TestFailedUploadFailsTheSweep: Warm does not wait for the upload of
// bars too large to push, and a sweep whose upload fails (here: the
// server's store is too small for them) fails with the upload's error,
// never waiting for bars that will not come.
//
// (The store is the account's: an upload that filled it may also keep
// the chunk off the queue.)
func TestFailedUploadFailsTheSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	url := clustertest.ServerWith(t, func(o *server.Options) { o.MaxPayload = 64 << 10; o.JetStreamMaxStore = 256 << 10 })
	d, log := joinWorker(t, cluster.Options{Key: testKey, URL: url})
	_, err := research.NewLocal(research.Config{ProofSeed: fixedProofSeed, Project: demoProject(t), Pool: newPool(t), Chunks: d}).Sweep(t.Context(), sweepReq(t, "SPY@1h"), nil)
	// The upload's error, or, when it filled the store first, the
	// chunk's that could not be queued.
	if err == nil || !strings.Contains(err.Error(), "ship the bars of SPY@1h to the research cluster") && !strings.Contains(err.Error(), "insufficient resources") {
		t.Fatalf("a sweep whose bars cannot be stored: %v; the worker's log:\n%s", err, log.String())
	}
	if strings.Contains(log.String(), " pushed (") {
		t.Errorf("bars over max_payload were pushed; the worker's log:\n%s", log.String())
	}
}

// TestWarmOfARangeNamesItsBars: Warm of a part of a series (whose digest
// the store does not keep) hashes what the store wrote, and says what
// Load would have read; of the whole series it takes the store's digest,
// which is the same hash.
func TestWarmOfARangeNamesItsBars(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	url := clustertest.Server(t)
	d, _ := joinWorker(t, cluster.Options{Key: testKey, URL: url})
	p := demoProject(t)
	s, err := history.OpenReadOnly(p.HistoryPath())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, r := range [][2]string{{"", ""}, {"2024-03-01T00:00:00Z", "2024-06-30T00:00:00Z"}, {"2024-05-01T00:00:00Z", ""}} {
		seen, err := d.Warm(t.Context(), worker.BarsRange{HistoryPath: p.HistoryPath(), Series: "SPY@1d", From: r[0], To: r[1]})
		if err != nil {
			t.Fatal(err)
		}
		var from, to time.Time
		if r[0] != "" {
			from, _ = time.Parse(time.RFC3339, r[0])
		}
		if r[1] != "" {
			to, _ = time.Parse(time.RFC3339, r[1])
		}
		bars, err := s.Load("SPY@1d", from, to)
		if err != nil {
			t.Fatal(err)
		}
		if n := bars.Len(); seen.Digest != bars.Digest() || seen.Count != n || seen.First != bars.Time[0] || seen.Last != bars.Time[n-1] {
			t.Errorf("Warm of %v read %+v; the store holds %d bars from %d to %d there, digest %s", r, seen, n, bars.Time[0], bars.Time[n-1], bars.Digest())
		}
	}
}
