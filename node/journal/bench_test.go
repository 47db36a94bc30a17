package journal

import (
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkAppend measures the journal's append of one accepted
// submit_order (its audit row and order_accepted event) for each way of
// making it durable before the order is acknowledged, one commit at a
// time, and reports orders/s:
//
//   - wal: WAL with synchronous=FULL, as wicket was: a commit is in
//     node.db-wal only, and is lost with that file.
//   - wal+checkpoint: the same with a checkpoint (TRUNCATE) into node.db
//     after each commit, before the acknowledgement.
//   - wal+anchor: WAL with the anchor, which detects a lost commit rather
//     than keeping it.
//   - delete, truncate: a rollback journal with synchronous=FULL, the
//     journal file deleted or truncated after each commit.
//   - chosen: what Open uses (durable).
func BenchmarkAppend(b *testing.B) {
	for _, c := range []struct {
		name       string
		d          durability
		checkpoint bool
	}{
		{"wal", durability{journalMode: "WAL"}, false},
		{"wal+checkpoint", durability{journalMode: "WAL"}, true},
		{"wal+anchor", durability{journalMode: "WAL", anchor: true}, false},
		{"delete", durability{journalMode: "DELETE"}, false},
		{"truncate", durability{journalMode: "TRUNCATE"}, false},
		{"chosen", durable, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			j, err := openWith(filepath.Join(b.TempDir(), "node.db"), c.d)
			if err != nil {
				b.Fatal(err)
			}
			defer j.Close()
			start := time.Now()
			i := 0
			for b.Loop() {
				submit(b, j, i, int64(i+1))
				i++
				if c.checkpoint {
					var busy, log, moved int
					if err := j.w.QueryRow("PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &log, &moved); err != nil || busy != 0 {
						b.Fatalf("checkpoint: busy %d, %v", busy, err)
					}
				}
			}
			b.ReportMetric(float64(i)/time.Since(start).Seconds(), "orders/s")
		})
	}
}

// BenchmarkGroupCommit measures the journal's group commit: writers
// goroutines each append a submit_order (as the node's fold admits them,
// one at a time) and wait for it to be durable, over and over, and it
// reports orders/s and batches/commit, the appends one transaction (one
// set of fsyncs and one anchor write) carried. With one writer each
// commit carries one order; with more, the orders that arrive while a
// commit is in flight share the next. chosen is what Open uses;
// wal+anchor is WAL with synchronous=FULL for comparison.
//
//	go test ./node/journal -run '^$' -bench GroupCommit
func BenchmarkGroupCommit(b *testing.B) {
	for _, c := range []struct {
		name string
		d    durability
	}{
		{"chosen", durable},
		{"wal+anchor", durability{journalMode: "WAL", anchor: true}},
	} {
		for _, writers := range []int{1, 8, 64} {
			b.Run(fmt.Sprintf("%s/writers=%d", c.name, writers), func(b *testing.B) {
				j, err := openWith(filepath.Join(b.TempDir(), "node.db"), c.d)
				if err != nil {
					b.Fatal(err)
				}
				defer j.Close()
				a := &admitter{j: j}
				var left atomic.Int64
				left.Store(int64(b.N))
				start := time.Now()
				var wg sync.WaitGroup
				for range writers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for left.Add(-1) >= 0 {
							_, done := a.admit(b)
							if err := <-done; err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				s := j.Stats()
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "orders/s")
				b.ReportMetric(float64(s.Batches)/float64(max(s.Transactions, 1)), "batches/commit")
			})
		}
	}
}
