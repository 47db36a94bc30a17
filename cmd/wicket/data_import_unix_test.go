//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDataImportRefusesDevicesAndFIFOs: a symlink to /dev/zero and a FIFO
// with no writer are refused at once with what they are, instead of
// growing without bound or hanging in open (where no signal stopped it).
func TestDataImportRefusesDevicesAndFIFOs(t *testing.T) {
	proj, dir := importProject(t)
	zero := filepath.Join(dir, "zero.csv")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "pipe.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		zero: "zero.csv is a symlink to /dev/zero, a character device, not a regular file; import reads regular files only (copy the data into a file first)",
		fifo: "pipe.csv is a named pipe (FIFO), not a regular file",
	} {
		type result struct {
			code   int
			stderr string
		}
		done := make(chan result, 1)
		go func() {
			code, _, stderr := wicket(t, "--project", proj, "data", "import", path, "--series", "ZERO@1h")
			done <- result{code, stderr}
		}()
		select {
		case r := <-done:
			if r.code != exitFailure || !strings.Contains(r.stderr, want) {
				t.Errorf("%s: exit %d, stderr %q; want %q", path, r.code, r.stderr, want)
			}
		case <-time.After(20 * time.Second): // a hang guard, not a timing assertion
			if path == fifo { // release the blocked open: EOF
				if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
					w.Close()
				}
			}
			t.Fatalf("data import %s did not return", path)
		}
	}
}
