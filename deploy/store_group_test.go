package deploy

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// storeIntent is an intent of deployment dep-<k> at bar.
func storeIntent(k int, bar time.Time) Intent {
	return Intent{ClientOrderID: fmt.Sprintf("dep-%02d-%d", k, bar.Unix()), Deployment: fmt.Sprintf("dep-%02d", k), Bar: bar,
		Side: "buy", Quantity: decimal.NewFromInt(1), Target: 1, Status: IntentSending, Updated: bar}
}

// storedIntents copies the store's files as a crash leaves them
// (deployments.db and its WAL) and returns the client order ids of the
// intents the copy holds.
func storedIntents(t *testing.T, path string) map[string]bool {
	t.Helper()
	dir := t.TempDir()
	for _, suffix := range []string{"", "-wal"} {
		data, err := os.ReadFile(path + suffix)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if err == nil {
			if err := os.WriteFile(filepath.Join(dir, "deployments.db"+suffix), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	s, err := OpenStore(filepath.Join(dir, "deployments.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows, err := s.read.Query(`SELECT client_order_id FROM intents`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var cid string
		if err := rows.Scan(&cid); err != nil {
			t.Fatal(err)
		}
		out[cid] = true
	}
	return out
}

// TestStoreGroupsConcurrentCommits: deployments committing while a commit
// is in flight are written together in the next transaction; each Commit
// returns only once its own batch is durable, and a batch that fails
// fails alone.
func TestStoreGroupsConcurrentCommits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "deployments.db")
	s, err := OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sizes, release, queued := make(chan int), make(chan struct{}), make(chan struct{})
	s.write = func(n int) { sizes <- n; <-release }
	s.queued = func() { queued <- struct{}{} }
	bar := time.Date(2025, 3, 4, 5, 6, 0, 0, time.UTC)

	first := make(chan error, 1)
	go func() { first <- s.Commit(Batch{Intents: []Intent{storeIntent(0, bar)}}) }()
	if n := <-sizes; n != 1 {
		t.Fatalf("the first group holds %d batches, want 1", n)
	}
	// While it is in flight, n more deployments commit; one batch fails.
	const n = 40
	const bad = 17
	errs := make([]error, n+1)
	var wg sync.WaitGroup
	for k := 1; k <= n; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := storeIntent(k, bar)
			if k == bad {
				in.Target = math.NaN() // does not encode
			}
			errs[k] = s.Commit(Batch{Intents: []Intent{in}})
		}()
	}
	for range n {
		<-queued
	}
	release <- struct{}{}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if got := <-sizes; got != n {
		t.Fatalf("the second group holds %d batches, want the %d that waited", got, n)
	}
	if held := storedIntents(t, path); len(held) != 1 || !held[storeIntent(0, bar).ClientOrderID] {
		t.Fatalf("with the second group not written the store holds %v, want the first intent only", held)
	}
	release <- struct{}{}
	wg.Wait()
	held := storedIntents(t, path)
	for k := 1; k <= n; k++ {
		cid := storeIntent(k, bar).ClientOrderID
		switch {
		case k == bad && (errs[k] == nil || held[cid]):
			t.Errorf("the batch that cannot be encoded: %v, stored %v", errs[k], held[cid])
		case k != bad && (errs[k] != nil || !held[cid]):
			t.Errorf("deployment %d: %v, stored %v", k, errs[k], held[cid])
		}
	}
	if st := s.Stats(); st.Transactions != 2 || st.Batches != n+1 {
		t.Errorf("stats %+v, want %d batches in 2 transactions", st, n+1)
	}
}
