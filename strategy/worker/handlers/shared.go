//go:build unix

package handlers

import (
	"encoding/binary"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"wicket/strategy/ta"
)

// The workers of one sweep share the long indicator columns they compute
// (sharedColumns, a ta.Shared): the first worker whose memo misses a
// column claims it with a lock file in the sweep's shared directory (the
// one the shared bars file is in), computes it and writes it there, and
// every other worker maps that file read-only instead of computing the
// column again; a worker that asks while the column is claimed waits for
// it. The files are named by the column's memo key, which is the same in
// every worker (ta.Memo.Key, script.SourceBarKeys: the bars' digest, the
// indicator's name and arguments), so equal names are equal columns.

// A shared column file: a header page (sharedMagic, the result's Start,
// its number of outputs and each output's length, little-endian int64s),
// then each output at a page boundary.
const (
	sharedMagic  = "wkcol\x00\x00\x01"
	sharedHeader = 4096
)

// sharedColumns is a worker's view of the shared columns of the sweep it
// serves now (setDir). The mappings it hands out stay mapped until reset
// (between requests, once the memo dropped their views). In a worker they
// go into address space reserved before the worker's limits are set
// (reserve), as the spill's does: the strategy's allowance is its own,
// and when the room is spent a column is computed instead.
type sharedColumns struct {
	mu       sync.Mutex
	dir      string // "" shares nothing
	region   []byte // the reserved room (nil: mappings go where the kernel puts them)
	used     int    // bytes of region handed out
	maps     [][]byte
	mapped   int
	minBytes int
	// held are the columns mapped since the last reset, by key: a later
	// Take of one (a memo that does not hold it, as a proof's) views the
	// same pages again, not another mapping of another sweep's file.
	held map[ta.Key]ta.Result
	// links, when set, gives the worker's own directory (links.go), in
	// which it keeps a hard link to each column file it mapped until the
	// reset, and from which it links them into the next sweep's
	// directory (setDir): the session's next sweep is cut into chunks
	// anew, and the other worker then finds there, instead of computing,
	// a column only this one used before.
	links func() string
	// readOnly: the request under way is not one of the sweep's chunks
	// (the winner's proof, a backtest): it reads the columns published
	// in dir but claims and publishes none, so the proof's prefix
	// columns, which no chunk asks for, take neither the directory nor
	// the reserved room, and the next request does not find it spent.
	readOnly bool
}

// reserve sets size bytes of address space aside (inaccessible, no
// memory) for the mappings to come.
func (s *sharedColumns) reserve(size int) error {
	r, err := unix.Mmap(-1, 0, size, unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return fmt.Errorf("reserve room for shared columns: %w", err)
	}
	s.mu.Lock()
	s.region, s.used = r, 0
	s.mu.Unlock()
	return nil
}

// newSharedColumns shares the columns of at least minBytes.
func newSharedColumns(minBytes int) *sharedColumns {
	return &sharedColumns{minBytes: minBytes}
}

// setDir makes dir (a sweep's private directory; "" for none) the one
// columns are shared in, by a sweep's chunk: it reads and publishes. A
// directory new to the worker gets a link to each column it holds.
func (s *sharedColumns) setDir(dir string) {
	s.mu.Lock()
	fresh := dir != "" && dir != s.dir
	s.dir, s.readOnly = dir, false
	var keys []ta.Key
	if fresh && s.links != nil {
		keys = slices.Collect(maps.Keys(s.held))
	}
	s.mu.Unlock()
	if len(keys) == 0 {
		return
	}
	from := s.links()
	if from == "" {
		return
	}
	for _, k := range keys {
		os.Link(filepath.Join(from, columnFile(k)), filepath.Join(dir, columnFile(k))) // one there already is the same column
	}
}

// columnName is the name of key's shared column file without its
// extension (.col; its lock, .lock).
func columnName(key ta.Key) string { return fmt.Sprintf("%016x%016x", key.Hi, key.Lo) }

// columnFile is the name of key's shared column file.
func columnFile(key ta.Key) string { return columnName(key) + ".col" }

// readOnlyNow makes the request under way read the columns of the
// directory set last, and publish none (until setDir).
func (s *sharedColumns) readOnlyNow() {
	s.mu.Lock()
	s.readOnly = true
	s.mu.Unlock()
}

// Take implements ta.Shared.
func (s *sharedColumns) Take(key ta.Key) (ta.Result, bool, func(*ta.Result) bool) {
	none := func(*ta.Result) bool { return false }
	s.mu.Lock()
	dir, readOnly := s.dir, s.readOnly
	res, held := s.held[key]
	s.mu.Unlock()
	if held {
		return res, true, nil
	}
	if dir == "" {
		return ta.Result{}, false, none
	}
	name := filepath.Join(dir, columnName(key))
	if res, ok := s.read(key, name+".col"); ok {
		return res, true, nil
	}
	if readOnly {
		return ta.Result{}, false, none
	}
	unlock, err := lockFile(name + ".lock")
	if err != nil {
		return ta.Result{}, false, none // the directory is gone: compute, share nothing
	}
	// Published while this worker waited for the claim?
	if res, ok := s.read(key, name+".col"); ok {
		unlock()
		return res, true, nil
	}
	return ta.Result{}, false, func(res *ta.Result) bool {
		defer unlock()
		if res == nil || resultBytes(*res) < s.minBytes {
			return false
		}
		if _, err := os.Stat(name + ".col"); err != nil { // there when this worker had no room to map it
			if err := writeColumns(dir, name+".col", *res); err != nil {
				return false
			}
		}
		views, ok := s.read(key, name+".col")
		if !ok {
			return false
		}
		res.Outputs = views.Outputs
		return true
	}
}

// read maps the shared column file of key at path and views its result;
// false when there is none (or it cannot be read, or the room is spent:
// then the column is computed).
func (s *sharedColumns) read(key ta.Key, path string) (ta.Result, bool) {
	data, err := s.mapColumns(path)
	if err != nil {
		return ta.Result{}, false
	}
	res, err := viewColumns(data)
	if err != nil {
		return ta.Result{}, false // the room stays spent, as the spill's does
	}
	s.mu.Lock()
	if s.held == nil {
		s.held = map[ta.Key]ta.Result{}
	}
	s.held[key] = res
	links := s.links
	s.mu.Unlock()
	if links != nil {
		if dir := links(); dir != "" {
			os.Link(path, filepath.Join(dir, columnFile(key))) // none: the column is not handed on
		}
	}
	return res, true
}

// mapColumns maps the file at path read-only, into the reserved room when
// there is one.
func (s *sharedColumns) mapColumns(path string) ([]byte, error) {
	s.mu.Lock()
	region := s.region
	s.mu.Unlock()
	if region == nil {
		data, _, err := mapFile(path)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		s.maps = append(s.maps, data)
		s.mapped += len(data)
		s.mu.Unlock()
		return data, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := int(st.Size())
	if !st.Mode().IsRegular() || size < sharedHeader {
		return nil, fmt.Errorf("%s is not a shared column file", path)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used+pageUp(size) > len(s.region) {
		return nil, fmt.Errorf("no room left for shared columns")
	}
	at := s.region[s.used : s.used+size]
	if _, err := unix.MmapPtr(int(f.Fd()), 0, unsafe.Pointer(&at[0]), uintptr(size), unix.PROT_READ, unix.MAP_SHARED|unix.MAP_FIXED); err != nil {
		return nil, err
	}
	s.used += pageUp(size)
	return at, nil
}

// full says whether less than a quarter of the reserved room is left, or
// without one, whether the mappings handed out hold more than limit bytes.
func (s *sharedColumns) full(limit int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.region != nil {
		return s.used > len(s.region)*3/4
	}
	return s.mapped > limit
}

// reset unmaps everything handed out (the reserved room is reserved
// again, whole). Only when no view is in use (the memo dropped them:
// ta.Memo.DropSpilled).
func (s *sharedColumns) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.region != nil && s.used > 0 {
		if _, err := unix.MmapPtr(-1, 0, unsafe.Pointer(&s.region[0]), uintptr(len(s.region)), unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_FIXED); err == nil {
			s.used = 0
		}
	}
	for _, m := range s.maps {
		syscall.Munmap(m)
	}
	s.maps, s.mapped = nil, 0
	if s.links != nil {
		if dir := s.links(); dir != "" {
			for k := range s.held {
				os.Remove(filepath.Join(dir, columnFile(k)))
			}
		}
	}
	clear(s.held)
}

func resultBytes(res ta.Result) int {
	n := 0
	for _, c := range res.Outputs {
		n += len(c) * 8
	}
	return n
}

// writeColumns writes res to a new file in dir and renames it to path,
// so a reader never maps a partial one. The columns go from the heap to
// the file with pwrite, not copied.
func writeColumns(dir, path string, res ta.Result) error {
	if len(res.Outputs) > (sharedHeader-24)/8 {
		return fmt.Errorf("%d outputs do not fit a shared column header", len(res.Outputs))
	}
	f, err := os.CreateTemp(dir, ".col-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	head := make([]byte, 0, sharedHeader)
	head = append(head, sharedMagic...)
	head = binary.LittleEndian.AppendUint64(head, uint64(res.Start))
	head = binary.LittleEndian.AppendUint64(head, uint64(len(res.Outputs)))
	for _, c := range res.Outputs {
		head = binary.LittleEndian.AppendUint64(head, uint64(len(c)))
	}
	_, err = f.WriteAt(head, 0)
	off := int64(sharedHeader)
	for _, c := range res.Outputs {
		if err != nil || len(c) == 0 {
			continue
		}
		b := unsafe.Slice((*byte)(unsafe.Pointer(&c[0])), len(c)*8)
		_, err = f.WriteAt(b, off)
		off += int64(pageUp(len(b)))
	}
	if err == nil {
		err = f.Truncate(off) // the last column's page whole, as mapped
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// viewColumns reads a shared column file's result in place: its outputs
// are views of data.
func viewColumns(data []byte) (ta.Result, error) {
	if len(data) < sharedHeader || string(data[:8]) != sharedMagic || uintptr(unsafe.Pointer(&data[0]))%8 != 0 {
		return ta.Result{}, fmt.Errorf("not a shared column file")
	}
	word := func(i int) uint64 { return binary.LittleEndian.Uint64(data[8*i:]) }
	start, n := word(1), word(2)
	if n > (sharedHeader-24)/8 || start > 1<<40 {
		return ta.Result{}, fmt.Errorf("a damaged shared column header")
	}
	res := ta.Result{Start: int(start), Outputs: make([][]float64, n)}
	off := sharedHeader
	for i := range int(n) {
		k := word(3 + i)
		if off > len(data) || k > uint64(len(data)-off)/8 {
			return ta.Result{}, fmt.Errorf("a shared column shorter than its header says")
		}
		if k == 0 {
			res.Outputs[i] = []float64{}
			continue
		}
		res.Outputs[i] = unsafe.Slice((*float64)(unsafe.Pointer(&data[off])), int(k))[:k:k]
		off += pageUp(int(k) * 8)
	}
	return res, nil
}

// lockFile takes an exclusive lock on the file at path (made when
// missing), waiting while another process holds it, and returns what lets
// it go. A process that dies holding it lets it go too.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil // closing the file lets the lock go
}
