package history

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"wicket/strategy"
)

var ctx = context.Background()

func openTemp(t testing.TB) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "state", "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// synth makes n valid bars, step seconds apart from start.
func synth(n int, start, step int64) strategy.Bars {
	b := strategy.Bars{Time: make([]int64, n), Open: make([]float64, n), High: make([]float64, n),
		Low: make([]float64, n), Close: make([]float64, n), Volume: make([]float64, n)}
	for i := range n {
		p := 100 + float64(i%977)/7
		b.Time[i] = start + int64(i)*step
		b.Open[i], b.High[i], b.Low[i], b.Close[i], b.Volume[i] = p, p+1, p-1, p+0.25, float64(i%13)
	}
	return b
}

func kindOf(err error) Kind {
	var he *Error
	if errors.As(err, &he) {
		return he.Kind
	}
	return 0
}

func TestWriteLoadRoundTrip(t *testing.T) {
	s := openTemp(t)
	const start, step = 1_700_000_000, 3600
	n := 2*blockBars + 7 // three blocks, the last one short
	in := synth(n, start, step)
	if err := s.Write(ctx, "X@1h", in, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	at := func(i int) time.Time { return time.Unix(start+int64(i)*step, 0) }
	for _, tc := range []struct {
		name     string
		from, to time.Time
		lo, hi   int // expected bars [lo, hi)
	}{
		{"all", time.Time{}, time.Time{}, 0, n},
		{"from", at(5000), time.Time{}, 5000, n},
		{"to", time.Time{}, at(10), 0, 11},
		{"inside one block", at(100), at(200), 100, 201},
		{"across blocks", at(blockBars - 3), at(2*blockBars + 2), blockBars - 3, 2*blockBars + 3},
		{"between bars", at(10).Add(time.Minute), at(12).Add(-time.Minute), 11, 12},
		{"before start", at(-100), at(2), 0, 3},
		{"past end", at(n - 2), at(n + 100), n - 2, n},
	} {
		got, err := s.Load("X@1h", tc.from, tc.to)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		want := in.Slice(tc.lo, tc.hi)
		want.Series = "X@1h"
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: (-want +got)\n%s", tc.name, diff)
		}
		if c, err := s.Count("X@1h", tc.from, tc.to); err != nil || c != want.Len() {
			t.Errorf("%s: Count = %d, %v; want %d", tc.name, c, err, want.Len())
		}
		var enc bytesAt
		if c, _, err := s.WriteEncodedAt(ctx, &enc, "X@1h", tc.from, tc.to); err != nil || c != want.Len() || !bytes.Equal(enc, want.Encode()) {
			t.Errorf("%s: WriteEncodedAt wrote %d bars (%d bytes), %v; want Encode's %d bars", tc.name, c, len(enc), err, want.Len())
		}
	}
	for _, tc := range []struct {
		name     string
		from, to time.Time
	}{
		{"empty range", at(10).Add(time.Minute), at(11).Add(-time.Minute)},
		{"after end", at(n + 1), time.Time{}},
		{"reversed", at(20), at(10)},
	} {
		if _, err := s.Load("X@1h", tc.from, tc.to); kindOf(err) != KindInvalid {
			t.Errorf("%s: %v, want an Invalid error", tc.name, err)
		}
		if _, err := s.Count("X@1h", tc.from, tc.to); kindOf(err) != KindInvalid {
			t.Errorf("%s: Count: %v, want an Invalid error", tc.name, err)
		}
		var enc bytesAt
		if _, _, err := s.WriteEncodedAt(ctx, &enc, "X@1h", tc.from, tc.to); kindOf(err) != KindInvalid || len(enc) != 0 {
			t.Errorf("%s: WriteEncodedAt: %v after %d bytes, want an Invalid error before any", tc.name, err, len(enc))
		}
	}
}

// bytesAt is an io.WriterAt that grows to hold what is written.
type bytesAt []byte

func (b *bytesAt) WriteAt(p []byte, off int64) (int, error) {
	if end := int(off) + len(p); end > len(*b) {
		*b = append(*b, make([]byte, end-len(*b))...)
	}
	return copy((*b)[off:], p), nil
}

// TestCorruptBlockRefused: a block whose column does not hold 8 bytes a
// bar is a Storage error that says how to repair it, from Load and from
// WriteEncodedAt.
func TestCorruptBlockRefused(t *testing.T) {
	s := openTemp(t)
	if err := s.Write(ctx, "X@1h", synth(blockBars+5, 1_700_000_000, 3600), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(`UPDATE blocks SET volume = x'00' WHERE n = 5`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load("X@1h", time.Time{}, time.Time{}); kindOf(err) != KindStorage || !strings.Contains(err.Error(), "--replace") {
		t.Errorf("Load: %v, want a Storage error naming --replace", err)
	}
	var enc bytesAt
	if _, _, err := s.WriteEncodedAt(ctx, &enc, "X@1h", time.Time{}, time.Time{}); kindOf(err) != KindStorage || !strings.Contains(err.Error(), "--replace") {
		t.Errorf("WriteEncodedAt: %v, want a Storage error naming --replace", err)
	}
}

func TestWriteRefusesAndReplaces(t *testing.T) {
	s := openTemp(t)
	a, b := synth(10, 1_000_000, 60), synth(20, 2_000_000, 60)
	if err := s.Write(ctx, "A@1m", a, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	err := s.Write(ctx, "A@1m", b, WriteOptions{})
	if kindOf(err) != KindExists || !strings.Contains(err.Error(), "--replace") {
		t.Fatalf("second write: %v, want Exists naming --replace", err)
	}
	if info, _ := s.Info("A@1m"); info.Bars != 10 {
		t.Fatalf("refused write changed the series: %+v", info)
	}
	if err := s.Write(ctx, "A@1m", b, WriteOptions{Replace: true}); err != nil {
		t.Fatal(err)
	}
	info, err := s.Info("A@1m")
	if err != nil {
		t.Fatal(err)
	}
	want := SeriesInfo{Name: "A@1m", Symbol: "A", Granularity: "1m", Source: SourceImport, Bars: 20,
		First: time.Unix(2_000_000, 0).UTC(), Last: time.Unix(2_000_000+19*60, 0).UTC()}
	if diff := cmp.Diff(want, info); diff != "" {
		t.Errorf("info (-want +got)\n%s", diff)
	}
	c, at, err := s.LastClose("A@1m")
	if err != nil || c != b.Close[19] || !at.Equal(info.Last) {
		t.Errorf("LastClose = %v %v %v", c, at, err)
	}

	// Invalid bars are refused and change nothing.
	bad := synth(5, 3_000_000, 60)
	bad.Low[3] = bad.High[3] + 1
	err = s.Write(ctx, "A@1m", bad, WriteOptions{Replace: true})
	if kindOf(err) != KindInvalid || !strings.Contains(err.Error(), "row 4: low") {
		t.Errorf("bad bars: %v", err)
	}
	if info2, _ := s.Info("A@1m"); info2 != info {
		t.Errorf("refused write changed the series: %+v", info2)
	}
}

func TestListDelete(t *testing.T) {
	s := openTemp(t)
	if l, err := s.List(); err != nil || len(l) != 0 {
		t.Fatalf("empty store lists %v %v", l, err)
	}
	for _, name := range []string{"ZZ@1d", "AA@1h", "MM@5m"} {
		if err := s.Write(ctx, name, synth(3, 0, 60), WriteOptions{Source: SourceDemo}); err != nil {
			t.Fatal(err)
		}
	}
	l, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, i := range l {
		names = append(names, i.Name+":"+i.Source)
	}
	if got := strings.Join(names, " "); got != "AA@1h:demo MM@5m:demo ZZ@1d:demo" {
		t.Errorf("list %s", got)
	}
	if err := s.Delete(ctx, "MM@5m"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Info("MM@5m"); kindOf(err) != KindNotFound || !strings.Contains(err.Error(), "wicket data list") {
		t.Errorf("deleted series: %v", err)
	}
	if err := s.Delete(ctx, "MM@5m"); kindOf(err) != KindNotFound {
		t.Errorf("delete twice: %v", err)
	}
	if _, err := s.Load("NOPE@1h", time.Time{}, time.Time{}); kindOf(err) != KindNotFound {
		t.Errorf("load missing: %v", err)
	}
	if _, _, err := s.LastClose("NOPE@1h"); kindOf(err) != KindNotFound {
		t.Errorf("last close missing: %v", err)
	}
}

func TestSeriesNamesValidated(t *testing.T) {
	s := openTemp(t)
	for _, name := range []string{"", "../x@1h", "a/b@1h", "BTC-USD", "BTC@2h", "@1h", "x@1h; DROP TABLE series", strings.Repeat("a", 70) + "@1h"} {
		if err := s.Write(ctx, name, synth(2, 0, 60), WriteOptions{}); kindOf(err) != KindInvalid {
			t.Errorf("Write(%q): %v, want Invalid", name, err)
		}
		if _, err := s.Load(name, time.Time{}, time.Time{}); kindOf(err) != KindInvalid {
			t.Errorf("Load(%q): %v, want Invalid", name, err)
		}
	}
}

func TestReadOnly(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "history.db")
	_, err := OpenReadOnly(path)
	if kindOf(err) != KindNotFound || !strings.Contains(err.Error(), "seed-demo") {
		t.Fatalf("missing store: %v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("OpenReadOnly created the file")
	}
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(ctx, "A@1h", synth(3, 0, 3600), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// A reader sees the writer's data while the writer stays open (WAL).
	if b, err := r.Load("A@1h", time.Time{}, time.Time{}); err != nil || b.Len() != 3 {
		t.Errorf("read-only load: %d bars, %v", b.Len(), err)
	}
	if err := r.Write(ctx, "B@1h", synth(3, 0, 3600), WriteOptions{}); kindOf(err) != KindInvalid {
		t.Errorf("read-only write: %v", err)
	}
	w.Close()
}

func TestConcurrentReaders(t *testing.T) {
	s := openTemp(t)
	if err := s.Write(ctx, "A@1h", synth(10000, 0, 3600), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			b, err := s.Load("A@1h", time.Time{}, time.Time{})
			if err == nil && b.Len() != 10000 {
				err = fmt.Errorf("%d bars", b.Len())
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// BenchmarkLoad1M loads a million one-minute bars, the store's hot path.
func BenchmarkLoad1M(b *testing.B) {
	s := openTemp(b)
	const n = 1_000_000
	if err := s.Write(ctx, "BENCH@1m", synth(n, 1_500_000_000, 60), WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		bars, err := s.Load("BENCH@1m", time.Time{}, time.Time{})
		if err != nil || bars.Len() != n {
			b.Fatal(err)
		}
	}
	perLoad := time.Since(start).Seconds() / float64(b.N)
	b.ReportMetric(n/perLoad, "bars/s")
	b.ReportMetric(perLoad, "s/1M-bars")
	reportRatio(b, "history-load-1M-bars/1s", perLoad)
}

// BenchmarkWrite1M writes a million bars in one transaction.
func BenchmarkWrite1M(b *testing.B) {
	s := openTemp(b)
	bars := synth(1_000_000, 1_500_000_000, 60)
	for b.Loop() {
		if err := s.Write(ctx, "BENCH@1m", bars, WriteOptions{Replace: true}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(1e6*float64(b.N)/b.Elapsed().Seconds(), "bars/s")
}
