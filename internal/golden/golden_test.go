package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps what Check reports.
type recorder struct {
	testing.TB
	msgs  []string
	fatal bool
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.msgs = append(r.msgs, format)
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = true
	r.msgs = append(r.msgs, format)
}
func (r *recorder) Fatal(args ...any) { r.fatal = true }

// TestCheck: update writes the file, an equal output passes, a different
// one and a missing file fail.
func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "x.json")
	r := &recorder{TB: t}
	Check(r, path, []byte("one"), true, "go test -update")
	if b, err := os.ReadFile(path); err != nil || string(b) != "one" || len(r.msgs) > 0 {
		t.Fatalf("update wrote %q (%v), reported %v", b, err, r.msgs)
	}
	Check(r, path, []byte("one"), false, "go test -update")
	if len(r.msgs) > 0 {
		t.Fatalf("the same output failed: %v", r.msgs)
	}
	Check(r, path, []byte("two"), false, "go test -update")
	if len(r.msgs) != 1 || r.fatal || !strings.Contains(r.msgs[0], "differs") {
		t.Fatalf("a different output: %v", r.msgs)
	}
	r = &recorder{TB: t}
	Check(r, filepath.Join(t.TempDir(), "none.json"), []byte("x"), false, "go test -update")
	if !r.fatal {
		t.Fatal("a missing golden file passed")
	}
}
