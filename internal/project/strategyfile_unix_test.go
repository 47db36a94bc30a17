//go:build unix

package project

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// refuseFIFO: a FIFO in strategies/ is refused at once, by name and by
// path, without blocking on a writer that never comes.
func refuseFIFO(t *testing.T, p Project) {
	t.Helper()
	fifo := filepath.Join(p.StrategiesDir(), "fifo.star")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 2)
	go func() { _, _, err := p.ReadStrategy("fifo"); done <- err }()
	go func() { _, _, err := ReadStrategyFile(fifo); done <- err }()
	for range 2 {
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file (a named pipe (FIFO))") {
				t.Errorf("fifo: %v", err)
			}
		case <-ctx.Done():
			t.Fatal("reading a FIFO blocked")
		}
	}
}
