package history

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// encodedDigest reads the bars of series in [from, to] through
// WriteEncodedAt and checks the bytes against Load's encoding; it
// returns the digest the store gave, and the SHA-256 of the bytes.
func encodedDigest(t *testing.T, s *Store, series string, from, to time.Time) (stored, hashed string) {
	t.Helper()
	var enc bytesAt
	n, stored, err := s.WriteEncodedAt(ctx, &enc, series, from, to)
	if err != nil {
		t.Fatal(err)
	}
	want, err := s.Load(series, from, to)
	if err != nil || n != want.Len() || !bytes.Equal(enc, want.Encode()) {
		t.Fatalf("WriteEncodedAt wrote %d bars (%d bytes), Load %d, %v", n, len(enc), want.Len(), err)
	}
	sum := sha256.Sum256(enc)
	return stored, hex.EncodeToString(sum[:])
}

// TestStoredDigest: the store gives the digest of a series written whole
// for a read of the whole series, the bars' own digest, and none where
// it would be stale or is not the range's: after an append, a block
// changed by hand, a delete, for a part of the series; a replacing Write
// stores the new bars' digest.
func TestStoredDigest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const step = 3600
	b := synth(2*blockBars+17, 1_700_000_000-1_700_000_000%step, step)
	if err := s.Write(ctx, "X@1h", b, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	all := time.Time{}
	if stored, hashed := encodedDigest(t, s, "X@1h", all, all); stored != hashed || stored != b.Digest() {
		t.Fatalf("written whole: stored digest %q, the bytes hash to %s, Digest %s", stored, hashed, b.Digest())
	}
	// A range that holds every bar is the whole series.
	first, last := time.Unix(b.Time[0], 0), time.Unix(b.Time[b.Len()-1], 0)
	if stored, hashed := encodedDigest(t, s, "X@1h", first.Add(-time.Hour), last.Add(time.Hour)); stored != hashed {
		t.Errorf("a range around the whole series: stored %q, hashed %s", stored, hashed)
	}
	if stored, _ := encodedDigest(t, s, "X@1h", first.Add(time.Hour), all); stored != "" {
		t.Errorf("a part of the series: stored digest %q, want none", stored)
	}
	if stored, _ := encodedDigest(t, s, "X@1h", all, last.Add(-time.Hour)); stored != "" {
		t.Errorf("a part of the series: stored digest %q, want none", stored)
	}

	// Another connection, read-only, sees it too; and after an append by
	// the writer, none: the appended series is hashed.
	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if stored, hashed := encodedDigest(t, ro, "X@1h", all, all); stored != hashed {
		t.Errorf("read-only: stored %q, hashed %s", stored, hashed)
	}
	if err := s.Append(ctx, "X@1h", synth(3, b.Time[b.Len()-1]+step, step), AppendOptions{Source: SourceImport}); err != nil {
		t.Fatal(err)
	}
	for name, st := range map[string]*Store{"writer": s, "read-only": ro} {
		if stored, _ := encodedDigest(t, st, "X@1h", all, all); stored != "" {
			t.Errorf("%s, after an append: stored digest %q, want none", name, stored)
		}
	}

	// Written whole again: the new bars' digest.
	c := synth(blockBars+3, 1_800_000_000-1_800_000_000%step, step)
	if err := s.Write(ctx, "X@1h", c, WriteOptions{Replace: true}); err != nil {
		t.Fatal(err)
	}
	if stored, hashed := encodedDigest(t, ro, "X@1h", all, all); stored != hashed || stored != c.Digest() {
		t.Errorf("replaced: stored %q, hashed %s, Digest %s", stored, hashed, c.Digest())
	}

	// A block changed behind the store's back (same size: still readable).
	if _, err := s.db.Exec(`UPDATE blocks SET close = open WHERE n = 3`); err != nil {
		t.Fatal(err)
	}
	if stored, _ := encodedDigest(t, ro, "X@1h", all, all); stored != "" {
		t.Errorf("a block changed by hand: stored digest %q, want none", stored)
	}

	// Deleted and made again by appends: none.
	if err := s.Write(ctx, "X@1h", c, WriteOptions{Replace: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "X@1h"); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, "X@1h", c, AppendOptions{Source: SourceImport}); err != nil {
		t.Fatal(err)
	}
	if stored, _ := encodedDigest(t, ro, "X@1h", all, all); stored != "" {
		t.Errorf("deleted and appended: stored digest %q, want none", stored)
	}
	var rows int
	s.db.QueryRow(`SELECT count(*) FROM digests`).Scan(&rows)
	if rows != 0 {
		t.Errorf("%d digests left for no series written whole", rows)
	}
}

// TestStoredDigestOlderStore: a store no writer of this version opened
// (no digests table) reads as before, with no digest, and gets the table
// from its next writer.
func TestStoredDigestOlderStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	b := synth(50, 1_700_000_000-1_700_000_000%3600, 3600)
	if err := s.Write(ctx, "X@1h", b, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(`DROP TABLE digests`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	if stored, hashed := encodedDigest(t, ro, "X@1h", time.Time{}, time.Time{}); stored != "" || hashed != b.Digest() {
		t.Errorf("no digests table: stored %q, hashed %s", stored, hashed)
	}
	ro.Close()
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if stored, _ := encodedDigest(t, s, "X@1h", time.Time{}, time.Time{}); stored != "" {
		t.Errorf("table made again: stored %q for bars written before it", stored)
	}
	if err := s.Write(ctx, "X@1h", b, WriteOptions{Replace: true}); err != nil {
		t.Fatal(err)
	}
	if stored, _ := encodedDigest(t, s, "X@1h", time.Time{}, time.Time{}); stored != b.Digest() {
		t.Errorf("written whole on the upgraded store: stored %q", stored)
	}
}

// failingAt fails every write from the after-th on.
type failingAt struct {
	bytesAt
	after, writes int
}

var errDiskFull = errors.New("disk full")

func (f *failingAt) WriteAt(p []byte, off int64) (int, error) {
	f.writes++
	if f.writes > f.after {
		return 0, errDiskFull
	}
	return f.bytesAt.WriteAt(p, off)
}

// TestWriteEncodedAtWriteFails: a write that fails, the count's or a
// block's (written beside the reads), is WriteEncodedAt's error, wrapped.
func TestWriteEncodedAtWriteFails(t *testing.T) {
	s := openTemp(t)
	if err := s.Write(ctx, "X@1h", synth(5*blockBars, 1_700_000_000-1_700_000_000%3600, 3600), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, after := range []int{0, 1, 7, 20} {
		w := &failingAt{after: after}
		if _, _, err := s.WriteEncodedAt(ctx, w, "X@1h", time.Time{}, time.Time{}); !errors.Is(err, errDiskFull) || !strings.Contains(err.Error(), "X@1h") {
			t.Errorf("failing after %d writes: %v, want the write's error naming the series", after, err)
		}
	}
}

// TestDigestOnClose: a handle that appended to a series stores its
// digest when closed (a fetch's pages), the digest of the bars the
// series holds then, another handle's appends included; a series it
// deleted since gets none.
func TestDigestOnClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	a, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	const step = 60
	all := synth(3*blockBars+100, 1_700_000_040, step)
	opt := AppendOptions{Source: "binance"}
	for lo := 0; lo < 2*blockBars; lo += 1000 {
		if err := a.Append(ctx, "X@1m", all.Slice(lo, min(lo+1000, 2*blockBars)), opt); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Append(ctx, "GONE@1m", all.Slice(0, 10), opt); err != nil {
		t.Fatal(err)
	}
	if err := a.Delete(ctx, "GONE@1m"); err != nil {
		t.Fatal(err)
	}
	b, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Append(ctx, "X@1m", all.Slice(2*blockBars, all.Len()), opt); err != nil {
		t.Fatal(err)
	}
	if stored, _ := encodedDigest(t, b, "X@1m", time.Time{}, time.Time{}); stored != "" {
		t.Fatalf("appended, no handle closed: stored digest %q", stored)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if stored, hashed := encodedDigest(t, ro, "X@1m", time.Time{}, time.Time{}); stored != hashed || stored != all.Digest() {
		t.Errorf("after the appending handle closed: stored %q, hashed %s, Digest %s", stored, hashed, all.Digest())
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if stored, hashed := encodedDigest(t, ro, "X@1m", time.Time{}, time.Time{}); stored != hashed {
		t.Errorf("after the other handle closed: stored %q, hashed %s", stored, hashed)
	}
	var rows int
	ro.db.QueryRow(`SELECT count(*) FROM digests`).Scan(&rows)
	if rows != 1 {
		t.Errorf("%d digests, want X@1m's alone", rows)
	}
}

// TestDigestOnCloseRace: a commit by another connection between the
// closing handle's hash and its insert leaves no digest: the handle's
// transaction may not write over a snapshot that is no longer the
// newest, so a digest of the bars before that commit is never stored.
func TestDigestOnCloseRace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	a, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	all := synth(2*blockBars, 1_700_000_040, 60)
	opt := AppendOptions{Source: "binance"}
	if err := a.Append(ctx, "X@1m", all.Slice(0, blockBars), opt); err != nil {
		t.Fatal(err)
	}
	a.hashedHook = func(string) {
		if err := b.Append(ctx, "X@1m", all.Slice(blockBars, all.Len()), opt); err != nil {
			t.Error(err)
		}
	}
	a.Close()
	var rows int
	b.db.QueryRow(`SELECT count(*) FROM digests`).Scan(&rows)
	if rows != 0 {
		t.Errorf("%d digests stored over a snapshot another connection committed past", rows)
	}
	if stored, _ := encodedDigest(t, b, "X@1m", time.Time{}, time.Time{}); stored != "" {
		t.Errorf("stored digest %q of the bars before the other append", stored)
	}
}
