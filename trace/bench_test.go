package trace

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"
)

// benchEntry is a typical traced call: a gated write's preview.
func benchEntry() Entry {
	return Entry{
		TS: time.Date(2026, 5, 14, 9, 30, 0, 0, time.UTC), Session: "0198f0a2-7c1e-7a00-9a51-5b0c3d2e1f00", Seq: 1,
		Tool: "submit_order", Write: true, Profile: "full",
		Args:    json.RawMessage(`{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"limit","quantity":"0.5","price":"41000.00","reason":"breakout"}`),
		Verdict: Preview, Token: "pt-0198f0a3-0000-7000-8000-000000000001", ClientOrderID: "wk-0198f0a3-1111-7000-8000-000000000002", MS: 3.1,
	}
}

func benchWrite(b *testing.B, opts Options, parallel bool) {
	dir := filepath.Join(b.TempDir(), "agent")
	opts.Now = func() time.Time { return time.Date(2026, 5, 14, 9, 30, 0, 0, time.UTC) }
	w, err := Open(dir, opts)
	if err != nil {
		b.Fatal(err)
	}
	e := benchEntry()
	b.ReportAllocs()
	b.ResetTimer()
	if parallel {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				w.Write(e)
			}
		})
	} else {
		for i := 0; i < b.N; i++ {
			e.Seq = int64(i)
			w.Write(e)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkWrite is the cost of tracing one call with the default options
// (no fsync): ns/op is what a tools/call pays for its trace line.
func BenchmarkWrite(b *testing.B) { benchWrite(b, Options{}, false) }

// BenchmarkWriteParallel is Write from concurrent calls.
func BenchmarkWriteParallel(b *testing.B) { benchWrite(b, Options{}, true) }

// BenchmarkWriteSync is Write with Options.Sync (an fsync per line).
func BenchmarkWriteSync(b *testing.B) { benchWrite(b, Options{Sync: true}, false) }

// BenchmarkWriteSyncParallel is Write with Sync from concurrent calls,
// whose fsyncs the file system may share.
func BenchmarkWriteSyncParallel(b *testing.B) { benchWrite(b, Options{Sync: true}, true) }

// BenchmarkEncode is the encoding part of Write alone.
func BenchmarkEncode(b *testing.B) {
	e := benchEntry()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		c := e
		if _, err := encodeLine(nil, &c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRead is reading a month of entries back with a filter.
func BenchmarkRead(b *testing.B) {
	dir := b.TempDir()
	w, err := Open(dir, Options{Now: func() time.Time { return time.Date(2026, 5, 14, 9, 30, 0, 0, time.UTC) }})
	if err != nil {
		b.Fatal(err)
	}
	e := benchEntry()
	const n = 10000
	for i := range n {
		e.Seq = int64(i)
		w.Write(e)
	}
	w.Close()
	r := &Reader{Dir: dir}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		got, err := r.Read(Filter{Tool: "submit_order"})
		if err != nil || len(got) != n {
			b.Fatal(len(got), err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "entries/s")
}
