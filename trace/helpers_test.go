package trace

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"wicket/internal/testkit"
)

// syncBuffer is a bytes.Buffer safe for the Writer's concurrent reports.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// open opens a Writer on a fresh directory with the clock and a captured
// stderr.
func open(t *testing.T, c *testkit.Clock, opts Options) (*Writer, string, *syncBuffer) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "agent")
	var stderr syncBuffer
	opts.Now, opts.Stderr = c.Now, &stderr
	w, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w, dir, &stderr
}

// lines returns the lines of a file; every line must end in a newline.
func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Fatalf("%s does not end in a newline", path)
	}
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// decodeAll decodes every line of path, failing on any that is not an entry.
func decodeAll(t *testing.T, path string) []Entry {
	t.Helper()
	var out []Entry
	for i, l := range lines(t, path) {
		if l == "" {
			// A blank line is no entry and no damage (the Decoder skips it):
			// a writer opening the file ends a last line that lacks its
			// newline (terminate), and when that line is another process's
			// write still in progress (the file's size grows page by page
			// during one write), the newline lands after it, as a blank line.
			continue
		}
		var e Entry
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			if len(l) > 300 {
				l = l[:300] + "..."
			}
			t.Fatalf("%s line %d: %v: %q", path, i+1, err, l)
		}
		out = append(out, e)
	}
	return out
}

func entry(seq int64, tool string, v Verdict) Entry {
	return Entry{Session: "s1", Seq: seq, Tool: tool, Profile: "full", Args: json.RawMessage(`{}`), Verdict: v, MS: 1.5}
}
