// Package golden compares what a test produced with a file kept under
// testdata, and rewrites the file when the test is run with -update. It
// is for tests only (it fails them through testing.TB) and must never be
// imported by the binary's own code.
package golden

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// shown bounds how much of a differing output a failure prints.
const shown = 4 << 10

// Check compares got with the file at path. With update it writes got
// there instead, creating the folder. rerun is the command that accepts a
// change (go test ./pkg -run Golden -update), named in every failure.
func Check(t testing.TB, path string, got []byte, update bool, rerun string) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run %s to create it)", err, rerun)
	}
	if bytes.Equal(got, want) {
		return
	}
	if len(got) <= shown {
		t.Errorf("%s differs from what the test produced; if the change is intended, run %s\ngot:\n%s", filepath.Base(path), rerun, got)
		return
	}
	t.Errorf("%s differs from what the test produced; if the change is intended, run %s", filepath.Base(path), rerun)
}
