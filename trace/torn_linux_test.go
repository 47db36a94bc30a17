package trace

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"wicket/internal/testkit"
)

// TestTornWriteCostsNoNeighbour cuts a write short for real (RLIMIT_FSIZE,
// in a helper process: the limit is the whole process's) while a second
// Writer shares the month file, as a second server does. The torn entry
// and the one written while the limit holds are lost; every other entry,
// the other Writer's included, is read back, and the failure is reported
// once, followed by the resumption.
func TestTornWriteCostsNoNeighbour(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperTornWriter$")
	cmd.Env = append(os.Environ(), "TRACE_TORN_DIR="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil {
		t.Fatalf("helper: %v\n%s\n%s", err, out, stderr.Bytes())
	}
	r := &Reader{Dir: filepath.Join(dir, "agent")}
	var skipped []error
	r.Skipped = func(err error) { skipped = append(skipped, err) }
	got, err := r.Read(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var seqs []string
	for _, e := range got {
		seqs = append(seqs, fmt.Sprintf("%s%d", e.Tool, e.Seq))
	}
	if strings.Join(seqs, " ") != "w11 w24 w15" {
		t.Errorf("read %v (skipped %v); want w1 1, w2 4, w1 5", seqs, skipped)
	}
	if n := strings.Count(stderr.String(), "tool calls go on"); n != 1 {
		t.Errorf("the failure is reported %d times, want once:\n%s", n, stderr.String())
	}
	if !strings.Contains(stderr.String(), "resumed; 2 entries were lost") {
		t.Errorf("stderr does not report the resumption and the loss:\n%s", stderr.String())
	}
}

// TestHelperTornWriter is the process of TestTornWriteCostsNoNeighbour.
func TestHelperTornWriter(t *testing.T) {
	dir := os.Getenv("TRACE_TORN_DIR")
	if dir == "" {
		t.Skip("helper process for TestTornWriteCostsNoNeighbour")
	}
	c := testkit.NewClock(testkit.Time("2026-05-10T00:00:00Z"))
	trace := filepath.Join(dir, "agent")
	w1, err := Open(trace, Options{Now: c.Now, Stderr: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	w2, err := Open(trace, Options{Now: c.Now, Stderr: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	w1.Write(entry(1, "w1", OK))
	fi, err := os.Stat(filepath.Join(trace, "2026-05.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	limit := old
	limit.Cur = uint64(fi.Size()) + 20
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
		t.Fatal(err)
	}
	w1.Write(entry(2, "w1", OK)) // 20 bytes land: a torn line
	w1.Write(entry(3, "w1", OK)) // the file is still full
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	w2.Write(entry(4, "w2", OK)) // the other server writes first
	w1.Write(entry(5, "w1", OK))
	if err := w1.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w2.Close(); err != nil {
		t.Fatal(err)
	}
}
