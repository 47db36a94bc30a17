//go:build unix

package history

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestImportFileRefusesDevicesAndFIFOs: /dev/zero through a symlink, and
// a FIFO with no writer, are refused at once; neither is read nor waited
// on. (Before, the first grew without bound and the second hung in open.)
func TestImportFileRefusesDevicesAndFIFOs(t *testing.T) {
	dir := t.TempDir()
	zero := filepath.Join(dir, "zero.csv")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "pipe.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		zero: "zero.csv is a symlink to /dev/zero, a character device, not a regular file; import reads regular files only",
		fifo: "pipe.csv is a named pipe (FIFO), not a regular file",
	} {
		done := make(chan error, 1)
		go func() {
			f, err := ImportFile(path, 0)
			if err == nil {
				f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: err = %v, want %q", path, err, want)
			}
		case <-time.After(20 * time.Second): // a hang guard, not a timing assertion
			if path == fifo { // release the blocked open
				if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
					w.Close()
				}
			}
			t.Fatalf("%s: ImportFile blocked", path)
		}
	}
	// The non-blocking open itself does not wait for a FIFO's writer.
	f, err := openNonBlocking(fifo)
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.Stat()
	f.Close()
	if err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO opened as %v, %v", st, err)
	}
}
