//go:build unix

package handlers

import (
	"fmt"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// SpillBytes is the room of a worker's indicator spill (fileSpill): 24
// columns of a million bars, more than the distinct lengths of the SMA
// cross reference grid (18). It is address space and the temporary
// file's pages (page cache, reclaimable once written back when TMPDIR is
// on a disk), not the worker's heap; only the columns in use are
// resident in the worker.
const SpillBytes = 192 << 20

// SpillMinBytes is the smallest column a worker spills: a column of
// 131,072 bars (1 MB). Shorter ones cost less to compute again.
const SpillMinBytes = 1 << 20

// fileSpill is a ta.Spill over a temporary file, unlinked as soon as it
// is made, mapped read-only and shared: Put writes a column into the
// file (the page cache) with pwrite, never through the worker's heap, and
// hands out a view of the mapping; Cool drops a view's pages from the
// worker's memory (the file keeps them, and the next read maps them
// again, a minor fault per page). Room is handed out once: reset (between
// requests, when nothing holds a view) takes it all back.
type fileSpill struct {
	mu   sync.Mutex
	f    *os.File
	data []byte
	used int
}

// newFileSpill makes a spill of size bytes under dir (os.TempDir when
// empty).
func newFileSpill(dir string, size int) (*fileSpill, error) {
	f, err := os.CreateTemp(dir, "wicket-memo-")
	if err != nil {
		return nil, fmt.Errorf("indicator spill: %w", err)
	}
	os.Remove(f.Name()) // the open file lives until the worker exits
	if err := f.Truncate(int64(size)); err != nil {
		f.Close()
		return nil, fmt.Errorf("indicator spill: %w", err)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("indicator spill: map: %w", err)
	}
	return &fileSpill{f: f, data: data}, nil
}

// Put copies cols into the file, each at a page boundary, and returns
// views of them in the mapping.
func (s *fileSpill) Put(cols [][]float64) ([][]float64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	need := 0
	for _, c := range cols {
		need += pageUp(len(c) * 8)
	}
	if s.used+need > len(s.data) {
		return nil, false
	}
	views := make([][]float64, len(cols))
	off := s.used
	for i, c := range cols {
		if len(c) == 0 {
			views[i] = c[:0:0]
			continue
		}
		b := unsafe.Slice((*byte)(unsafe.Pointer(&c[0])), len(c)*8)
		if n, err := s.f.WriteAt(b, int64(off)); err != nil || n != len(b) {
			return nil, false // the room stays spent: a partial write is never read
		}
		views[i] = unsafe.Slice((*float64)(unsafe.Pointer(&s.data[off])), len(c))
		off += pageUp(len(b))
	}
	s.used = off
	return views, true
}

// Cool lets the views' pages go from the worker's resident memory.
func (s *fileSpill) Cool(views [][]float64) { coolViews(views) }

// coolViews lets the pages of views of mapped files go from the
// worker's resident memory; the files keep them, and the next read maps
// them in again (a minor fault a page).
func coolViews(views [][]float64) {
	for _, v := range views {
		if len(v) == 0 {
			continue
		}
		b := unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), pageUp(len(v)*8))
		unix.Madvise(b, unix.MADV_DONTNEED) // a hint: the views stay readable whatever it says
	}
}

// coolShared lets the pages of every shared column cols has mapped go
// from the worker's resident memory (coolViews): those its memo holds,
// and those a proof's memo of its own read and dropped, which no evict
// of the worker's memo ever cools.
func coolShared(cols *sharedColumns) {
	if cols == nil {
		return
	}
	cols.mu.Lock()
	var views [][]float64
	for _, res := range cols.held {
		views = append(views, res.Outputs...)
	}
	cols.mu.Unlock()
	coolViews(views)
}

// coolBars lets the pages of bars go from the worker's resident memory
// when they are views of a shared bars file (m, mapped.go: read-only and
// shared, so the page cache keeps them and a read maps them in again);
// bars on the heap (m nil) are left alone.
func coolBars(m *mapping) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.data != nil {
		unix.Madvise(m.data, unix.MADV_DONTNEED) // a hint, as coolViews's
	}
}

// full says whether less than a quarter of the room is left.
func (s *fileSpill) full() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used > len(s.data)*3/4
}

// reset takes all the room back and frees the file's pages. Only when no
// view is in use: a view of the old room reads zeros after it.
func (s *fileSpill) reset() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	unix.Madvise(s.data, unix.MADV_DONTNEED)
	if err := s.f.Truncate(0); err != nil {
		return err
	}
	s.used = 0
	return s.f.Truncate(int64(len(s.data)))
}

func pageUp(n int) int {
	p := os.Getpagesize()
	return (n + p - 1) / p * p
}

// close unmaps the spill and closes its file (a worker's lives as long as
// the worker; a benchmark's does not).
func (s *fileSpill) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := syscall.Munmap(s.data)
	s.data = nil
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	return err
}
