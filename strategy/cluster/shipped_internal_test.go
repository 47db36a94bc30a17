package cluster

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// stalledReader is an object-store reader whose data stopped coming: its
// Read returns only once released, as the store's does at its deadline.
type stalledReader struct {
	release chan struct{}
	closed  chan struct{}
}

func (r *stalledReader) Read([]byte) (int, error) {
	<-r.release
	return 0, io.EOF
}

func (r *stalledReader) Close() error {
	close(r.closed)
	return nil
}

// TestCopyUntilEndsWithItsContext: a fetch whose reader stalls ends when
// its context does (a stopping worker), not when the reader gives up,
// and the reader is still closed once it returns.
func TestCopyUntilEndsWithItsContext(t *testing.T) {
	r := &stalledReader{release: make(chan struct{}), closed: make(chan struct{})}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := copyUntil(ctx, io.Discard, r, make([]byte, 16))
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("copyUntil returned %v, want the context's error", err)
		}
	case <-time.After(time.Minute): // a bound on a hang
		t.Fatal("copyUntil went on reading after its context ended")
	}
	select {
	case <-r.closed:
		t.Fatal("the reader was closed while its Read still ran")
	default:
	}
	close(r.release)
	select {
	case <-r.closed:
	case <-time.After(time.Minute): // a bound on a hang
		t.Fatal("the reader was never closed after its Read returned")
	}
}

// TestCopyUntilCopies: without a cancel, copyUntil is io.CopyBuffer and
// closes its reader.
func TestCopyUntilCopies(t *testing.T) {
	var dst bytes.Buffer
	src := strings.Repeat("bars ", 1000)
	closed := false
	n, err := copyUntil(t.Context(), &dst, readCloser{strings.NewReader(src), func() { closed = true }}, make([]byte, 64))
	if err != nil || n != int64(len(src)) || dst.String() != src || !closed {
		t.Fatalf("copied %d bytes, err %v, closed %v; want %d bytes, the same, closed", n, err, closed, len(src))
	}
}

type readCloser struct {
	io.Reader
	close func()
}

func (r readCloser) Close() error { r.close(); return nil }
