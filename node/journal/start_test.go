package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wicket/node"
)

// TestStartSaysNewOrRecovered: a missing file and a zero-byte file start a
// new journal; a reopened one says how many commands it holds and when the
// last was taken.
func TestStartSaysNewOrRecovered(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "node.db")
	j, err := Open(missing)
	if err != nil {
		t.Fatal(err)
	}
	if s := j.Start(); !s.New || s.String() != "new journal" {
		t.Errorf("missing file: %+v %q, want a new journal", s, s.String())
	}
	for i := range 3 {
		if err := j.Commit(&Batch{Entry: entry(fmt.Sprintf("tk-%d", i), t0.Add(time.Duration(i)*time.Minute), node.Accepted)}); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()

	j = open(t, missing)
	want := "recovered 3 commands, last at 2025-03-04T05:08:07Z"
	if s := j.Start(); s.New || s.Commands != 3 || s.String() != want {
		t.Errorf("reopened: %+v %q, want %q", s, s.String(), want)
	}
	j.Close()

	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if s := open(t, empty).Start(); !s.New || s.String() != "new journal" {
		t.Errorf("zero-byte file: %+v %q, want a new journal", s, s.String())
	}

	// A journal opened before but holding no command yet is not new.
	again := open(t, filepath.Join(dir, "node.db.2"))
	again.Close()
	if s := open(t, filepath.Join(dir, "node.db.2")).Start(); s.New || s.String() != "recovered 0 commands" {
		t.Errorf("reopened without commands: %+v %q", s, s.String())
	}
}

// TestOpenRefusesADamagedJournal: a journal whose pages are damaged fails
// SQLite's quick_check at Open, and the error names the file and what to
// do.
func TestOpenRefusesADamagedJournal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node.db")
	j := open(t, path)
	for i := range 300 {
		if err := j.Commit(&Batch{Entry: entry(fmt.Sprintf("tk-%03d", i), t0, node.Accepted)}); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	if len(data) < 8*page {
		t.Fatalf("journal is only %d bytes", len(data))
	}
	// Scribble over one page near the end of the file (a leaf of the
	// commands table), leaving the schema's pages, so SQLite opens the file
	// and only a check finds the damage.
	for i := len(data) - 2*page; i < len(data)-page; i++ {
		data[i] = byte(i * 7)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Open(path)
	if err == nil {
		t.Fatal("a damaged journal opened")
	}
	for _, want := range []string{path, "quick_check", "backup"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// TestOpenRefusesAFileThatIsNoDatabase: text where the journal should be is
// refused with the file named and what to do.
func TestOpenRefusesAFileThatIsNoDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node.db")
	if err := os.WriteFile(path, []byte(strings.Repeat("not a database; ", 20)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "move it aside") {
		t.Errorf("Open = %v, want the file named and what to do", err)
	}
}
