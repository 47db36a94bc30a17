package cluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/strategy/cluster"
	"wicket/strategy/clustertest"
	"wicket/strategy/history"
	"wicket/strategy/research"
	"wicket/strategy/worker"
)

// fundingProject is a demo project whose store also holds BTC-USD's
// funding: a settlement every 8 hours over the hourly series' span, at
// rates that change sign.
func fundingProject(t *testing.T) project.Project {
	t.Helper()
	p := project.Project{Root: t.TempDir()}
	s, err := history.Open(p.HistoryPath())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := history.SeedDemo(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	writeFunding(t, s)
	return p
}

// writeFunding writes the funding of fundingProject into s.
func writeFunding(t *testing.T, s *history.Store) {
	t.Helper()
	ctx := context.Background()
	bars, err := s.Load("BTC-USD@1h", time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var rates []history.FundingRate
	for i, at := 0, time.Unix(bars.Time[0], 0).UTC(); at.Unix() <= bars.Time[bars.Len()-1]; i, at = i+1, at.Add(8*time.Hour) {
		rates = append(rates, history.FundingRate{Time: at.Add(1500 * time.Millisecond), Rate: decimal.New(int64(i%11-3), -4)})
	}
	if err := s.WriteFunding(ctx, "BTC-USD", rates); err != nil {
		t.Fatal(err)
	}
}

// TestClusterSweepSeesFundingFetchedSince: funding written into the store
// after a cluster sweep found none is charged by the next sweep of the
// same dispatcher.
func TestClusterSweepSeesFundingFetchedSince(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	p := project.Project{Root: t.TempDir()}
	s, err := history.Open(p.HistoryPath())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := history.SeedDemo(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	d, _ := joinWorker(t, cluster.Options{Key: testKey, URL: clustertest.Server(t)})
	sweep := func() string {
		t.Helper()
		req := sweepReq(t, "BTC-USD@1d")
		req.FundingAuto = true // charged when the store holds it (the default is off)
		res, err := research.NewLocal(research.Config{ProofSeed: fixedProofSeed, Project: p, Pool: newPool(t), Chunks: d}).Sweep(t.Context(), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res.Top)
		return string(b)
	}
	if before := sweep(); strings.Contains(before, `"funding_paid"`) {
		t.Fatal("funding charged before the store held any")
	}
	writeFunding(t, s)
	if after := sweep(); !strings.Contains(after, `"funding_paid"`) {
		t.Fatalf("the funding fetched since is not charged: %.300s", after)
	}
}

// TestClusterSweepChargesTheStoresFunding: a sweep on the cluster charges
// the funding of the sweep's store (shipped to the worker with its bars)
// exactly as the same sweep in process does, whether funding is asked
// for or left to the store (auto); the funding makes a difference.
func TestClusterSweepChargesTheStoresFunding(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	p := fundingProject(t)
	d, _ := joinWorker(t, cluster.Options{Key: testKey, URL: clustertest.Server(t)})
	sweep := func(chunks research.Dispatcher, funding *bool) string {
		t.Helper()
		req := sweepReq(t, "BTC-USD@1h")
		req.Funding, req.FundingAuto = funding, funding == nil // nil: auto, left to the store
		res, err := research.NewLocal(research.Config{ProofSeed: fixedProofSeed, Project: p, Pool: newPool(t), Chunks: chunks}).Sweep(t.Context(), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Evaluated != 100 || res.Failed != 0 {
			t.Fatalf("evaluated %d, failed %d: %v", res.Evaluated, res.Failed, res.Errors)
		}
		b, err := json.Marshal(res.Top)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	on, off := true, false
	without := sweep(nil, &off)
	for _, funding := range []*bool{nil, &on} {
		local := sweep(nil, funding)
		if local == without {
			t.Fatal("the store's funding changed nothing in process: the test proves nothing")
		}
		if !strings.Contains(local, `"funding_paid"`) {
			t.Fatalf("no funding_paid in the metrics: %.300s", local)
		}
		if remote := sweep(d, funding); remote != local {
			t.Errorf("funding %v: the cluster sweep differs from the sweep in process\ncluster:    %.400s\nin process: %.400s", funding, remote, local)
		}
	}
	if remote := sweep(d, &off); remote != without {
		t.Error("funding off: the cluster sweep differs from the sweep in process")
	}
}

// TestShippedFundingNotMatchingItsDigestIsRefused: funding altered in
// the cluster's store under the name of the store's funding (same size,
// so the sweep takes it for shipped) is refused by the worker, and the
// chunk fails with an error that says so instead of charging it.
func TestShippedFundingNotMatchingItsDigestIsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	p := fundingProject(t)
	url := clustertest.Server(t)
	d, _ := joinWorker(t, cluster.Options{Key: testKey, URL: url})
	f, err := worker.StoreFunding(p.HistoryPath(), "BTC-USD@1d", "auto", time.Time{}, time.Time{})
	if err != nil || !f.Held || len(f.Rates) == 0 {
		t.Fatalf("the store's funding: %v, %+v", err, f)
	}
	data := f.Encode()
	name := worker.FundingDigest(data)
	forged := bytes.Replace(data, []byte(`"r":"0.0007"`), []byte(`"r":"0.0070"`), 1)
	if bytes.Equal(forged, data) || len(forged) != len(data) {
		t.Fatal("the forged funding is the same as the store's, or of another size")
	}
	_, js := jetStream(t, url)
	obj, err := js.ObjectStore(t.Context(), cluster.BarsBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := obj.PutBytes(t.Context(), name, forged); err != nil {
		t.Fatal(err)
	}
	_, err = d.Sweep(t.Context(), worker.SweepChunk{Name: "x.star", Source: "x = 1\n", HistoryPath: p.HistoryPath(), Series: "BTC-USD@1d", Capital: "10000", Combos: []map[string]any{{}}})
	if err == nil || !strings.Contains(err.Error(), "the funding "+name[:12]+" in the research cluster is not what its name says") {
		t.Fatalf("forged funding under the store funding's name: %v", err)
	}
}

// TestFundingIsShippedOnceBySweepsChunks: the chunks of one sweep,
// dispatched at once, put the range's funding into the cluster's store
// once. Two puts of one name replace the object, and its first chunks
// are purged while a worker may be reading them: the worker then waited
// a minute and failed with "nats: timeout".
func TestFundingIsShippedOnceBySweepsChunks(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	p := fundingProject(t)
	url := clustertest.Server(t)
	d, _ := joinWorker(t, cluster.Options{Key: testKey, URL: url})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			_, err := d.Sweep(t.Context(), worker.SweepChunk{Name: "x.star", Source: "x = 1\n", HistoryPath: p.HistoryPath(), Series: "BTC-USD@1h", Capital: "10000", Combos: []map[string]any{{}}})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// An object put again replaces the one before: its pieces are purged
	// and its description rolled up, so the store then holds fewer
	// messages than it was ever sent.
	_, js := jetStream(t, url)
	stream, err := js.Stream(t.Context(), "OBJ_"+cluster.BarsBucket)
	if err != nil {
		t.Fatal(err)
	}
	info, err := stream.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if st := info.State; st.LastSeq < 4 || st.Msgs != st.LastSeq {
		t.Fatalf("the store holds %d of the %d messages put into it: one sweep's chunks put an object more than once (bars and funding take at least 4)", st.Msgs, st.LastSeq)
	}
}
