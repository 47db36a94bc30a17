//go:build unix

package handlers

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"wicket/strategy/history"
	"wicket/strategy/history/historytest"
	"wicket/strategy/worker"
)

// BenchmarkPreloadCold is the serial part of a cold million-bar sweep in
// the worker that answers its params request: preload with a fresh bar
// cache (the store opened anew, nothing kept) sharing the bars, and its
// steps on their own: the store's blocks read through SQLite and written
// to the shared file, and the file's SHA-256. preload reads a series
// written whole, whose digest the store keeps; preload-hashed one
// appended to since, whose file it hashes. It reports the process's
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
	preload := func(path string) func(b *testing.B) {
		return func(b *testing.B) {
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
		}
	}
	// The series written whole: the store keeps its digest.
	b.Run("preload", preload(path))
	// The same bars, the last thousand appended: the file is hashed.
	b.Run("preload-hashed", preload(writeAppended(b, 1_000_000)))
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
			if _, _, err := store.WriteEncodedAt(context.Background(), f, "BENCH@1h", time.Time{}, time.Time{}); err != nil {
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

// writeAppended is writeBench's store of n bars, the last thousand of
// them appended after the Write by a handle left open (its Close would
// store their digest): the store keeps no digest of them.
func writeAppended(b *testing.B, n int) string {
	path := filepath.Join(b.TempDir(), "history.db")
	s, err := history.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	bars := historytest.Sine("BENCH@1h", n)
	if err := s.Write(context.Background(), "BENCH@1h", bars.Slice(0, n-1000), history.WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	if err := s.Append(context.Background(), "BENCH@1h", bars.Slice(n-1000, n), history.AppendOptions{Source: history.SourceImport}); err != nil {
		b.Fatal(err)
	}
	return path
}
