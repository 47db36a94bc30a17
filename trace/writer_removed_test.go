package trace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wicket/internal/testkit"
)

// TestRemovedWhileWriting: the month file, and then the whole trace
// directory, removed while a Writer has the file open. The next entry
// recreates what is missing and lands in it, and each removal is said on
// stderr once.
func TestRemovedWhileWriting(t *testing.T) {
	c := testkit.NewClock(testkit.Time("2026-05-10T00:00:00Z"))
	w, dir, stderr := open(t, c, Options{})
	path := filepath.Join(dir, "2026-05.jsonl")
	w.Write(entry(1, "a", OK))

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	w.Write(entry(2, "a", OK))
	w.Write(entry(3, "a", OK))
	if got := seqsOf(t, path); got != "[2 3]" {
		t.Errorf("after the file was removed it holds %s, want [2 3]", got)
	}
	if n := strings.Count(stderr.String(), "recreated"); n != 1 || !strings.Contains(stderr.String(), path) {
		t.Errorf("stderr says %q; want the recreated file named once", stderr.String())
	}

	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	w.Write(entry(4, "a", OK))
	if got := seqsOf(t, path); got != "[4]" {
		t.Errorf("after the directory was removed the file holds %s, want [4]", got)
	}
	if n := strings.Count(stderr.String(), "recreated"); n != 2 {
		t.Errorf("stderr says %q; want each removal said once", stderr.String())
	}
	if strings.Contains(stderr.String(), "lost") {
		t.Errorf("stderr reports a loss: %q", stderr.String())
	}
}

func seqsOf(t *testing.T, path string) string {
	t.Helper()
	var seqs []int64
	for _, e := range decodeAll(t, path) {
		seqs = append(seqs, e.Seq)
	}
	return fmt.Sprint(seqs)
}
