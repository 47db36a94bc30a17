//go:build unix

package script

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"wicket/internal/project"
)

// TestIndicatorReadBounded: load("indicators/<name>") reads under the one
// strategy reader's rules: a FIFO is refused at once (opening it would
// block the run past any limit), and so is a file above
// project.MaxStrategyBytes, each naming the file; a plain file loads.
func TestIndicatorReadBounded(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.star"), 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	big := "# " + strings.Repeat("x", project.MaxStrategyBytes) + "\ndef big(s):\n    return s\n"
	if err := os.WriteFile(filepath.Join(dir, "big.star"), []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ok.star"), []byte("def ok(s):\n    return ta.sma(s, 3)\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for name, want := range map[string]string{"pipe": "not a regular file", "big": "larger than 1024 KiB", "ok": ""} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		done := make(chan Report, 1)
		go func() {
			src := "load('indicators/" + name + "', '" + name + "')\ndef signals(bars):\n    return {'long': " + name + "(bars.close) > bars.close}\n"
			done <- Validate(ctx, Source{Name: "s.star", Text: src}, Options{Indicators: root.FS()})
		}()
		select {
		case rep := <-done:
			if want == "" {
				if !rep.Valid {
					t.Errorf("%s: %+v", name, rep.Problems)
				}
				break
			}
			if rep.Valid || len(rep.Problems) != 1 || rep.Problems[0].Kind != KindLoad || !strings.Contains(rep.Problems[0].Message, want) || !strings.Contains(rep.Problems[0].Message, "indicators/"+name+".star") {
				t.Errorf("%s: %+v, want a load problem saying %q", name, rep.Problems, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: loading the indicator hangs", name)
		}
		cancel()
	}
}
