package history

import (
	"database/sql"
	"errors"
	"io"
	"sync/atomic"
)

// blockWriter writes the pieces of the blocks WriteEncodedAt reads to
// their places in w from a goroutine of its own, so the writes (a file's:
// the kernel copying them into the page cache) run beside SQLite's reads
// of the next blocks instead of after them. A piece is copied out of the
// blocks' blobs, which are valid only until the next row is read, into
// one of a few buffers the writer hands back once written.
type blockWriter struct {
	w      io.WriterAt
	n      int // bars in the encoding (a column's length)
	full   chan *blockPiece
	free   chan *blockPiece
	done   chan struct{}
	failed atomic.Bool
	err    error // the first write's error; read once done is closed
}

// blockPiece is the bars [at, at+len) of every column, as bytes.
type blockPiece struct {
	at   int
	cols [6][]byte
}

// blockPieces is how many pieces are in flight: enough that neither side
// waits for the other while both keep pace.
const blockPieces = 4

// errWriteFailed stops a scan whose writer failed; the writer's own
// error is the one returned.
var errWriteFailed = errors.New("the write failed")

func newBlockWriter(w io.WriterAt, n int) *blockWriter {
	bw := &blockWriter{w: w, n: n, full: make(chan *blockPiece, blockPieces), free: make(chan *blockPiece, blockPieces), done: make(chan struct{})}
	for range blockPieces {
		bw.free <- &blockPiece{}
	}
	go bw.run()
	return bw
}

func (bw *blockWriter) run() {
	defer close(bw.done)
	for p := range bw.full {
		if bw.err == nil {
			for k, c := range p.cols {
				if _, err := bw.w.WriteAt(c, int64(8+8*(k*bw.n+p.at))); err != nil {
					bw.err = err
					bw.failed.Store(true)
					break
				}
			}
		}
		bw.free <- p
	}
}

// put hands the bars [a, b) of a block's columns, which go at bar at of
// each column, to the writer; false when a write failed (close says why).
func (bw *blockWriter) put(at int, cols *[6]sql.RawBytes, a, b int) bool {
	if bw.failed.Load() {
		return false
	}
	p := <-bw.free
	p.at = at
	for k, c := range cols {
		p.cols[k] = append(p.cols[k][:0], c[8*a:8*b]...)
	}
	bw.full <- p
	return true
}

// close waits for the pieces handed over to be written, and returns the
// first write's error.
func (bw *blockWriter) close() error {
	close(bw.full)
	<-bw.done
	return bw.err
}
