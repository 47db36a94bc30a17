//go:build unix

package handlers

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"wicket/strategy/history"
	"wicket/strategy/worker"
)

// BenchmarkPreloadCold is the serial part of a cold million-bar sweep in
// the worker that answers its params request: preload with a fresh bar
// cache (the store opened anew, nothing kept) sharing the bars, and its
// steps on their own: the store's blocks read through SQLite and written
// to the shared file, and the file's SHA-256. It reports the process's
// CPU time an op, which a busy machine disturbs less than the wall clock.
func BenchmarkPreloadCold(b *testing.B) {
	path := writeBench(b, 1_000_000)
	dir := b.TempDir()
	cpu := func(b *testing.B, op func(i int)) {
		before := cpuTime()
		i := 0
		for b.Loop() {
			op(i)
			i++
		}
		b.ReportMetric(float64((cpuTime()-before).Microseconds())/1000/float64(b.N), "cpu-ms/op")
	}
	b.Run("preload", func(b *testing.B) {
		cpu(b, func(i int) {
			share := filepath.Join(dir, "sweep")
			if err := os.Mkdir(share, 0o700); err != nil {
				b.Fatal(err)
			}
			c := &barCache{}
			if _, _, err := c.preload(worker.BarsRange{HistoryPath: path, Series: "BENCH@1h", ShareDir: share, ShareFrom: 1}); err != nil {
				b.Fatal(err)
			}
			c.mu.Lock()
			for _, e := range c.entries {
				e.m.drop()
				e.unlink(barEntry{})
			}
			for _, ws := range c.stores {
				ws.close()
			}
			c.mu.Unlock()
			os.RemoveAll(share)
		})
	})
	store, err := history.OpenReadOnly(path)
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	written := filepath.Join(dir, "written.bars")
	b.Run("read+write", func(b *testing.B) {
		cpu(b, func(int) {
			f, err := os.Create(written)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := store.WriteEncodedAt(context.Background(), f, "BENCH@1h", time.Time{}, time.Time{}); err != nil {
				b.Fatal(err)
			}
			f.Close()
		})
	})
	b.Run("sha256", func(b *testing.B) {
		cpu(b, func(int) {
			if _, err := digestFile(written); err != nil {
				b.Fatal(err)
			}
		})
	})
}
