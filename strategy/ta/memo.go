package ta

import (
	"container/list"
	"encoding/binary"
	"hash/maphash"
	"math"
	"sync"
	"unsafe"
)

// Key identifies a column of values by content or by provenance (the
// function and the keys and parameters it was computed from). Keys are
// 128-bit hashes and only meaningful within the Memo that made them.
type Key struct{ Hi, Lo uint64 }

// Memo caches computation results by Key, up to a byte budget, evicting the
// least recently used. It is safe for concurrent use; concurrent requests
// for one key compute it once. Results are shared: callers must never
// modify a returned column.
//
// A Memo is meant to outlive a single run: a worker that keeps one Memo and
// the same bars across many parameter combinations computes each distinct
// indicator once, and Stats proves it.
type Memo struct {
	seedHi, seedLo maphash.Seed
	limit          int64

	mu       sync.Mutex
	size     int64
	entries  map[Key]*list.Element
	lru      *list.List // of *memoEntry, most recent first
	inflight map[Key]*memoCall
	hits     uint64
	misses   uint64
	computed map[string]uint64
}

type memoEntry struct {
	key   Key
	res   Result
	bytes int64
}

type memoCall struct {
	done chan struct{}
	res  Result
	err  error
}

// DefaultMemoBytes is the cache budget NewMemo uses for a limit <= 0.
const DefaultMemoBytes = 256 << 20

// NewMemo returns an empty cache holding at most limitBytes of results
// (DefaultMemoBytes when limitBytes <= 0).
func NewMemo(limitBytes int64) *Memo {
	if limitBytes <= 0 {
		limitBytes = DefaultMemoBytes
	}
	return &Memo{
		seedHi: maphash.MakeSeed(), seedLo: maphash.MakeSeed(),
		limit:    limitBytes,
		entries:  map[Key]*list.Element{},
		lru:      list.New(),
		inflight: map[Key]*memoCall{},
		computed: map[string]uint64{},
	}
}

// ValuesKey is the content key of v: equal contents give equal keys.
func (m *Memo) ValuesKey(v []float64) Key {
	var b []byte
	if len(v) > 0 {
		b = unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*8)
	}
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(v)))
	var h1, h2 maphash.Hash
	h1.SetSeed(m.seedHi)
	h2.SetSeed(m.seedLo)
	h1.Write(n[:])
	h2.Write(n[:])
	h1.Write(b)
	h2.Write(b)
	return Key{h1.Sum64(), h2.Sum64()}
}

// Key is the provenance key of a value computed by the operation name from
// inputs with params.
func (m *Memo) Key(name string, inputs []Key, params []float64) Key {
	var h1, h2 maphash.Hash
	h1.SetSeed(m.seedHi)
	h2.SetSeed(m.seedLo)
	var buf [16]byte
	write := func(b []byte) { h1.Write(b); h2.Write(b) }
	binary.LittleEndian.PutUint64(buf[:8], uint64(len(name)))
	write(buf[:8])
	write([]byte(name))
	binary.LittleEndian.PutUint64(buf[:8], uint64(len(inputs)))
	write(buf[:8])
	for _, k := range inputs {
		binary.LittleEndian.PutUint64(buf[:8], k.Hi)
		binary.LittleEndian.PutUint64(buf[8:], k.Lo)
		write(buf[:])
	}
	for _, p := range params {
		binary.LittleEndian.PutUint64(buf[:8], math.Float64bits(p))
		write(buf[:8])
	}
	return Key{h1.Sum64(), h2.Sum64()}
}

// Do returns the cached result for key, or runs compute once (counting it
// under name in Stats) and caches what it returns. Errors are not cached.
func (m *Memo) Do(key Key, name string, compute func() (Result, error)) (Result, error) {
	m.mu.Lock()
	if el, ok := m.entries[key]; ok {
		m.lru.MoveToFront(el)
		m.hits++
		res := el.Value.(*memoEntry).res
		m.mu.Unlock()
		return res, nil
	}
	if c, ok := m.inflight[key]; ok {
		m.hits++
		m.mu.Unlock()
		<-c.done
		return c.res, c.err
	}
	c := &memoCall{done: make(chan struct{})}
	m.inflight[key] = c
	m.misses++
	m.computed[name]++
	m.mu.Unlock()

	c.res, c.err = compute()

	m.mu.Lock()
	delete(m.inflight, key)
	if c.err == nil {
		m.insert(key, c.res)
	}
	m.mu.Unlock()
	close(c.done)
	return c.res, c.err
}

func (m *Memo) insert(key Key, res Result) {
	var bytes int64 = 64
	for _, col := range res.Outputs {
		bytes += int64(len(col)) * 8
	}
	if bytes > m.limit {
		return
	}
	m.entries[key] = m.lru.PushFront(&memoEntry{key: key, res: res, bytes: bytes})
	m.size += bytes
	for m.size > m.limit {
		old := m.lru.Back()
		e := old.Value.(*memoEntry)
		m.lru.Remove(old)
		delete(m.entries, e.key)
		m.size -= e.bytes
	}
}

// Compute is Compute(e, inputs, p) through the cache, keyed by e's name,
// the inputs' keys and p. It returns the key of the result; the key of
// output j is m.Key("out", []Key{key}, []float64{j}) when there are several.
func (m *Memo) Compute(e *Entry, inputs [][]float64, keys []Key, p []float64) (Result, Key, error) {
	key := m.Key("ta."+e.Name, keys, p)
	res, err := m.Do(key, e.Name, func() (Result, error) { return Compute(e, inputs, p) })
	return res, key, err
}

// Stats is a snapshot of a Memo's counters.
type Stats struct {
	Hits    uint64 `json:"hits"`
	Misses  uint64 `json:"misses"`
	Entries int    `json:"entries"`
	Bytes   int64  `json:"bytes"`
	// Computed counts the computations per operation name (catalog
	// entries by their name): a sweep in which one indicator's inputs never
	// change shows 1 for it however many runs it served.
	Computed map[string]uint64 `json:"computed"`
}

// Stats returns the counters.
func (m *Memo) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := make(map[string]uint64, len(m.computed))
	for k, v := range m.computed {
		c[k] = v
	}
	return Stats{Hits: m.hits, Misses: m.misses, Entries: len(m.entries), Bytes: m.size, Computed: c}
}
