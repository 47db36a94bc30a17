package journal

import (
	"path/filepath"
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
