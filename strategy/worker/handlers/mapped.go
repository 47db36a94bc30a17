package handlers

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"unsafe"

	"wicket/strategy"
)

// A shared bars file holds a range's bars in the form strategy.Bars.Encode
// writes. The worker that answers a sweep's params request writes it once
// (writeShared), and every worker of the machine maps it read-only
// (mapShared): their bars are views of one copy in the page cache instead
// of a copy each on their heaps. A mapping is unmapped only once the
// cache has dropped it and no request still reads it (mapping.refs).

// mapping is one read-only mapping of a shared bars file.
type mapping struct {
	mu      sync.Mutex
	data    []byte
	refs    int  // requests reading the bars now
	dropped bool // the cache no longer holds it
	unmap   func([]byte) error
}

func (m *mapping) acquire() {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.refs++
	m.mu.Unlock()
}

func (m *mapping) release() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.refs--
	m.free()
}

// drop says the cache no longer holds m.
func (m *mapping) drop() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dropped = true
	m.free()
}

// free unmaps m once nothing reads it; m.mu is held.
func (m *mapping) free() {
	if m.dropped && m.refs == 0 && m.data != nil {
		m.unmap(m.data)
		m.data = nil
	}
}

// sharedName is the file a range's bars are shared in, inside the
// directory the caller gave: named by their digest.
func sharedName(dir, digest string) string { return filepath.Join(dir, digest+".bars") }

// writeShared writes a shared bars file in dir (created by the caller,
// private to it) with write, which lays bars out as strategy.Bars.Encode
// does and returns their digest when it knows it (the store keeps it:
// history.Store.WriteEncodedAt), else "", maps it, and names it by the
// digest of the bars it holds. It returns the file's path and its cache
// entry under key; write's own error is returned as it is. The file is
// written whole under a temporary name and renamed, so a reader never
// maps a partial copy.
func writeShared(dir, key, series string, write func(*os.File) (string, error)) (string, barEntry, error) {
	f, err := os.CreateTemp(dir, ".bars-*")
	if err != nil {
		return "", barEntry{}, fmt.Errorf("share the bars with the other workers: %w", err)
	}
	tmp := f.Name()
	digest, err := write(f)
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return "", barEntry{}, err
	}
	e, err := mapWritten(f, dir, key, series, digest)
	if err != nil {
		os.Remove(tmp)
		return "", barEntry{}, fmt.Errorf("share the bars with the other workers: %w", err)
	}
	return sharedName(dir, e.digest), e, nil
}

// mapWritten closes f, the shared bars file just written in dir, makes it
// read-only, takes its digest (unless known: the store's, of the bars it
// wrote), maps it, renames it by the digest and returns its cache entry
// under key. The digest is read from the file, not through the mapping:
// a page of it is resident here only once the worker reads that column.
func mapWritten(f *os.File, dir, key, series, digest string) (barEntry, error) {
	tmp := f.Name()
	if err := f.Close(); err != nil {
		return barEntry{}, err
	}
	if err := os.Chmod(tmp, 0o400); err != nil {
		return barEntry{}, err
	}
	if digest == "" {
		var err error
		if digest, err = digestFile(tmp); err != nil {
			return barEntry{}, err
		}
	}
	bars, m, err := mapShared(tmp, series)
	if err != nil {
		return barEntry{}, err
	}
	if err := os.Rename(tmp, sharedName(dir, digest)); err != nil {
		m.drop()
		return barEntry{}, err
	}
	return newEntry(key, digest, bars, m), nil
}

// reshare names the shared bars file of e, a mapped entry, in dir,
// linking it there from the worker's link (links.go), or else writing
// it from the mapping, when dir has none yet: a warm
// session's next sweep has a new directory, and a worker whose cache no
// longer holds the bars maps that file. Without a mapping or dir it
// names nothing.
func reshare(dir string, e barEntry) (string, error) {
	if dir == "" || e.m == nil {
		return "", nil
	}
	path := sharedName(dir, e.digest)
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if e.link != "" && os.Link(e.link, path) == nil {
		return path, nil
	}
	f, err := os.CreateTemp(dir, ".bars-*")
	if err != nil {
		return "", fmt.Errorf("share the bars with the other workers: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(e.m.data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o400)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("share the bars with the other workers: %w", err)
	}
	return path, nil
}

// digestFile is the digest of the bars encoded in the file at path.
func digestFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return strategy.DigestEncoded(f)
}

// viewBars reads encoded bars in place: the columns are slices of data
// (which must stay mapped while they are used), not copies. It checks
// the layout, not the digest: the file was written on this machine by a
// worker of the same caller, which hashed it or took the digest the store
// keeps of the bars it wrote, read with them.
func viewBars(data []byte, series string) (strategy.Bars, error) {
	if len(data) < 8 || uintptr(unsafe.Pointer(&data[0]))%8 != 0 {
		return strategy.Bars{}, fmt.Errorf("shared bars of %d bytes are too short or misaligned", len(data))
	}
	n := binary.LittleEndian.Uint64(data)
	if n > uint64(len(data)-8)/48 || uint64(len(data)-8) != 48*n {
		return strategy.Bars{}, fmt.Errorf("shared bars of %d bytes do not hold %d bars", len(data), n)
	}
	if n == 0 {
		return strategy.Bars{Series: series}, nil
	}
	col := func(i int) unsafe.Pointer { return unsafe.Pointer(&data[8+i*8*int(n)]) }
	k := int(n)
	b := strategy.Bars{Series: series, Time: unsafe.Slice((*int64)(col(0)), k)[:k:k]}
	b.Open = unsafe.Slice((*float64)(col(1)), k)[:k:k]
	b.High = unsafe.Slice((*float64)(col(2)), k)[:k:k]
	b.Low = unsafe.Slice((*float64)(col(3)), k)[:k:k]
	b.Close = unsafe.Slice((*float64)(col(4)), k)[:k:k]
	b.Volume = unsafe.Slice((*float64)(col(5)), k)[:k:k]
	return b, nil
}

// mapShared maps the shared bars file at path read-only and views its
// bars. Where files cannot be mapped (or numbers are stored the other way
// round), it reads a copy instead, with m nil.
func mapShared(path, series string) (strategy.Bars, *mapping, error) {
	if strategy.NativeEncoding() {
		data, unmap, err := mapFile(path)
		if err == nil {
			bars, err := viewBars(data, series)
			if err != nil {
				unmap(data)
				return strategy.Bars{}, nil, err
			}
			return bars, &mapping{data: data, unmap: unmap}, nil
		}
		if err != errNoMmap {
			return strategy.Bars{}, nil, err
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return strategy.Bars{}, nil, err
	}
	bars, err := strategy.DecodeBars(data, series, "")
	return bars, nil, err
}
