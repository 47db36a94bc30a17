package ta

import (
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"hash/maphash"
	"math"
	"sync"
	"unsafe"
)

// Key identifies a column of values by content or by provenance (the
// function and the keys and parameters it was computed from). Keys are
// 128-bit hashes. A content key (ValuesKey) is only meaningful within the
// Memo that made it; a provenance key (Key) is the same in every Memo and
// every process of this build for the same name, inputs and parameters,
// so processes that share results (Shared) name them alike.
type Key struct{ Hi, Lo uint64 }

// Memo caches computation results by Key, up to a byte budget, evicting the
// least recently used. It is safe for concurrent use; concurrent requests
// for one key compute it once. Results are shared: callers must never
// modify a returned column.
//
// A Memo is meant to outlive a single run: a worker that keeps one Memo and
// the same bars across many parameter combinations computes each distinct
// indicator once, and Stats proves it.
//
// The results of the helper entries (crosses, shifts, highest/lowest: cheap
// to compute and, in a sweep, mostly particular to one combination) are
// kept in a segment of their own, at most an eighth of the budget, and
// push out only each other once the budget is full, never the indicators
// the combinations share.
//
// With a Spill (SetSpill), an indicator pushed out of the budget is kept
// there instead of dropped, off the Go heap, and a later request for it
// reads it back from there rather than computing it again: a sweep whose
// grid asks for more long columns than the budget holds computes each
// once (the budget then bounds what is resident, not what is kept). A
// result larger than the whole budget, which a Memo without a Spill never
// keeps, goes straight to the Spill.
type Memo struct {
	seedHi, seedLo maphash.Seed
	limit          int64

	mu       sync.Mutex
	entries  map[Key]*list.Element
	segs     [3]segment // major (indicators, series operations), minor (helpers), spilled
	spill    Spill
	spillMin int64 // the smallest result, in bytes, that is spilled
	shared   Shared
	inflight map[Key]*memoCall
	hits     uint64
	misses   uint64
	taken    uint64 // misses served from shared
	computed map[string]uint64
}

type memoEntry struct {
	key   Key
	res   Result
	bytes int64
	seg   int
	// spilled: res.Outputs are the Spill's views, not heap columns.
	spilled bool
}

// segment is one LRU list of entries and its budget.
type segment struct {
	lru         *list.List // of *memoEntry, most recent first
	size, limit int64
}

// The segments.
const (
	segMajor = iota
	segMinor
	segSpilled // entries evicted from the major segment into the Spill; no budget of the Memo's
)

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
	m := &Memo{
		seedHi: maphash.MakeSeed(), seedLo: maphash.MakeSeed(),
		limit:    limitBytes,
		entries:  map[Key]*list.Element{},
		inflight: map[Key]*memoCall{},
		computed: map[string]uint64{},
	}
	m.segs[segMinor] = segment{lru: list.New(), limit: limitBytes / 8}
	m.segs[segMajor] = segment{lru: list.New(), limit: limitBytes}
	m.segs[segSpilled] = segment{lru: list.New(), limit: math.MaxInt64}
	return m
}

// Columns is how many indicator results of one column of bars values a
// Memo of limitBytes keeps at once: what its major segment holds once the
// helpers' eighth is set aside, or, when one column is larger than that
// eighth (the helpers' segment can then hold none of that length), what
// the whole budget holds.
func Columns(limitBytes int64, bars int) int {
	if limitBytes <= 0 {
		limitBytes = DefaultMemoBytes
	}
	col := int64(bars)*8 + 64
	if col > limitBytes/8 {
		return int(limitBytes / col)
	}
	return int((limitBytes - limitBytes/8) / col)
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
// inputs with params: a SHA-256 of them, the same in every process, so
// another process's result for it (Shared) is the same value, and no
// strategy can make two provenances collide.
func (m *Memo) Key(name string, inputs []Key, params []float64) Key {
	var stack [256]byte
	b := stack[:0]
	b = binary.LittleEndian.AppendUint64(b, uint64(len(name)))
	b = append(b, name...)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(inputs)))
	for _, k := range inputs {
		b = binary.LittleEndian.AppendUint64(b, k.Hi)
		b = binary.LittleEndian.AppendUint64(b, k.Lo)
	}
	for _, p := range params {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(p))
	}
	sum := sha256.Sum256(b)
	return Key{binary.LittleEndian.Uint64(sum[:8]), binary.LittleEndian.Uint64(sum[8:16])}
}

// Do returns the cached result for key, or runs compute once (counting it
// under name in Stats) and caches what it returns. Errors are not cached.
func (m *Memo) Do(key Key, name string, compute func() (Result, error)) (Result, error) {
	return m.do(key, name, segMajor, compute)
}

func (m *Memo) do(key Key, name string, seg int, compute func() (Result, error)) (Result, error) {
	m.mu.Lock()
	if el, ok := m.entries[key]; ok {
		e := el.Value.(*memoEntry)
		if e.seg == segSpilled {
			m.reheat(el)
		} else {
			m.segs[e.seg].lru.MoveToFront(el)
		}
		m.hits++
		res := e.res
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
	shared := m.shared
	if seg != segMajor {
		shared = nil
	}
	m.mu.Unlock()

	var views, taken bool
	c.res, views, taken, c.err = run(shared, key, compute)

	m.mu.Lock()
	delete(m.inflight, key)
	if taken {
		m.taken++
	} else {
		m.computed[name]++
	}
	if c.err == nil {
		m.insert(key, c.res, seg, views)
	}
	m.mu.Unlock()
	close(c.done)
	return c.res, c.err
}

// run computes key's result, or takes it from shared (nil: compute it)
// when another process published it. views says the result's columns are
// read-only views outside the heap (shared's), taken that no computation
// ran here.
func run(shared Shared, key Key, compute func() (Result, error)) (res Result, views, taken bool, err error) {
	if shared == nil {
		res, err = compute()
		return res, false, false, err
	}
	res, ok, publish := shared.Take(key)
	if ok {
		return res, true, true, nil
	}
	res, err = compute()
	if err != nil {
		publish(nil)
		return res, false, false, err
	}
	return res, publish(&res), false, nil
}

// insert caches res under key in segment seg; views says its columns are
// read-only views outside the heap (a Spill's or Shared's), which the
// Memo never copies into a Spill.
func (m *Memo) insert(key Key, res Result, seg int, views bool) {
	var bytes int64 = 64
	for _, col := range res.Outputs {
		bytes += int64(len(col)) * 8
	}
	sg := &m.segs[seg]
	if views {
		// In use now, so counted in the major segment like a spilled entry
		// read back; when pushed out, its pages are let go, not copied.
		e := &memoEntry{key: key, res: res, bytes: bytes, seg: seg, spilled: true}
		if bytes > sg.limit {
			e.seg = segSpilled
			sg = &m.segs[segSpilled]
		}
		m.entries[key] = sg.lru.PushFront(e)
		sg.size += bytes
		m.fit(sg)
		return
	}
	if bytes > sg.limit {
		// Larger than the budget: kept only in the Spill, from which each
		// request reads it.
		if seg == segMajor && m.spill != nil && bytes >= m.spillMin {
			if views, ok := m.spill.Put(res.Outputs); ok {
				res.Outputs = views
				cold := &m.segs[segSpilled]
				m.entries[key] = cold.lru.PushFront(&memoEntry{key: key, res: res, bytes: bytes, seg: segSpilled, spilled: true})
				cold.size += bytes
			}
		}
		return
	}
	m.entries[key] = sg.lru.PushFront(&memoEntry{key: key, res: res, bytes: bytes, seg: seg})
	sg.size += bytes
	m.fit(sg)
}

// fit evicts from sg until it is within its limit, then from either
// segment until both are within the Memo's.
func (m *Memo) fit(sg *segment) {
	for sg.size > sg.limit {
		m.evict(sg)
	}
	// Over the whole budget: the major segment gives back what it holds
	// beyond its share first, so the minor one always has its eighth.
	major, minor := &m.segs[segMajor], &m.segs[segMinor]
	for major.size+minor.size > m.limit {
		if major.size > m.limit-minor.limit && major.lru.Len() > 0 {
			m.evict(major)
		} else {
			m.evict(minor)
		}
	}
}

// evict drops sg's least recently used entry, or moves it into the
// Spill when it is a major one large enough and the Spill has room.
func (m *Memo) evict(sg *segment) {
	old := sg.lru.Back()
	e := old.Value.(*memoEntry)
	sg.lru.Remove(old)
	sg.size -= e.bytes
	if sg == &m.segs[segMajor] && e.spilled {
		// Views of a Spill or of Shared: kept (the file holds them), their
		// pages let go.
		if m.spill != nil {
			m.spill.Cool(e.res.Outputs)
		}
		e.seg = segSpilled
		cold := &m.segs[segSpilled]
		m.entries[e.key] = cold.lru.PushFront(e)
		cold.size += e.bytes
		return
	}
	if sg == &m.segs[segMajor] && m.spill != nil && e.bytes >= m.spillMin {
		if views, ok := m.spill.Put(e.res.Outputs); ok {
			e.res.Outputs, e.spilled = views, true
		}
		if e.spilled {
			e.seg = segSpilled
			cold := &m.segs[segSpilled]
			m.entries[e.key] = cold.lru.PushFront(e)
			cold.size += e.bytes
			return
		}
	}
	delete(m.entries, e.key)
}

// reheat moves a spilled entry back into the major segment, whose budget
// it counts against while it is used.
func (m *Memo) reheat(el *list.Element) {
	e := el.Value.(*memoEntry)
	cold := &m.segs[segSpilled]
	cold.lru.Remove(el)
	cold.size -= e.bytes
	e.seg = segMajor
	major := &m.segs[segMajor]
	m.entries[e.key] = major.lru.PushFront(e)
	major.size += e.bytes
	m.fit(major)
}

// Spill keeps the columns a Memo evicts outside the Go heap (a worker's
// is a mapped temporary file: strategy/worker/handlers).
type Spill interface {
	// Put copies cols into the spill and returns read-only views of the
	// copies, or false when it has no room for them.
	Put(cols [][]float64) ([][]float64, bool)
	// Cool says views returned by Put are not in use now: their pages may
	// leave the process's memory, and are read back when next used.
	Cool(views [][]float64)
}

// Shared holds results that other processes computing the same provenance
// keys read too (the workers of one sweep): the first to need a result
// computes and publishes it, the others read it. A worker's is a
// directory of mapped files (strategy/worker/handlers).
type Shared interface {
	// Take returns the result published under key, as read-only views,
	// or claims key for this process and returns false and publish. The
	// caller then computes the result and must call publish once, with
	// it (or nil when the computation failed): publish writes it for the
	// others when it is worth sharing, replaces its columns by views of
	// what it wrote and says whether it did, and gives the claim up.
	// Another process's Take of a claimed key waits for that publish.
	Take(key Key) (Result, bool, func(*Result) bool)
}

// SetShared makes m take the indicators its major segment misses from s,
// and publish there those it computes (nil: neither).
func (m *Memo) SetShared(s Shared) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.shared = s
}

// SetSpill makes m keep the indicators it evicts from its budget in s,
// those of at least minBytes (smaller ones cost less to compute again
// than to keep).
func (m *Memo) SetSpill(s Spill, minBytes int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.spill, m.spillMin = s, minBytes
}

// DropSpilled forgets every entry whose columns are in the Spill or
// Shared, so the Spill may reuse its room and Shared unmap its files. The
// caller must know that no column the Memo returned from either is in
// use (a worker calls it between requests).
func (m *Memo) DropSpilled() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, seg := range []int{segMajor, segSpilled} {
		sg := &m.segs[seg]
		for el := sg.lru.Front(); el != nil; {
			next := el.Next()
			if e := el.Value.(*memoEntry); e.spilled {
				sg.lru.Remove(el)
				sg.size -= e.bytes
				delete(m.entries, e.key)
			}
			el = next
		}
	}
}

// Compute is Compute(e, inputs, p) through the cache, keyed by e's name,
// the inputs' keys and p. It returns the key of the result; the key of
// output j is m.Key("out", []Key{key}, []float64{j}) when there are several.
func (m *Memo) Compute(e *Entry, inputs [][]float64, keys []Key, p []float64) (Result, Key, error) {
	key := m.Key("ta."+e.Name, keys, p)
	seg := segMajor
	if e.Category == Helper {
		seg = segMinor
	}
	res, err := m.do(key, e.Name, seg, func() (Result, error) { return Compute(e, inputs, p) })
	return res, key, err
}

// Stats is a snapshot of a Memo's counters.
type Stats struct {
	Hits    uint64 `json:"hits"`
	Misses  uint64 `json:"misses"`
	Entries int    `json:"entries"`
	Bytes   int64  `json:"bytes"`
	// Spilled is the bytes of the entries kept in the Spill or taken from
	// Shared and not in use, not counted in Bytes.
	Spilled int64 `json:"spilled,omitempty"`
	// Taken counts the misses served by another process's result
	// (Shared), not computed here.
	Taken uint64 `json:"taken,omitempty"`
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
	return Stats{Hits: m.hits, Misses: m.misses, Entries: len(m.entries), Bytes: m.segs[segMajor].size + m.segs[segMinor].size, Spilled: m.segs[segSpilled].size, Taken: m.taken, Computed: c}
}
