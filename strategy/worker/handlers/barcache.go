package handlers

import (
	"context"
	"os"
	"slices"
	"sync"
	"time"

	"wicket/strategy"
	"wicket/strategy/backtest"
	"wicket/strategy/history"
	"wicket/strategy/script"
	"wicket/strategy/worker"
)

// barCache keeps a worker's recently loaded bar ranges, so the chunks of
// one sweep (and the next sweep over the same bars) do not read the store
// again. An entry serves a request only when its digest is the one the
// caller computed from the bars it loaded itself, so a store rewritten
// since is read again.
type barCache struct {
	mu      sync.Mutex
	entries []barEntry // most recently used first
	bytes   int64
	// stores are the stores preload read, kept open with a Watch so a
	// later preload of a range it holds reads nothing when the store has
	// not changed since (a warm session's next sweep).
	stores []*watchedStore // most recently used first
	// links is the worker's directory of links to the shared bars files
	// it wrote (links.go), made once.
	linkOnce sync.Once
	links    string
}

// watchedStore is a store preload keeps open, and the Watch that tells
// whether another connection committed to it since an entry was read.
type watchedStore struct {
	path  string
	file  os.FileInfo // the file opened at path
	store *history.Store
	watch *history.Watch
}

// maxWatchedStores bounds the stores a worker keeps open.
const maxWatchedStores = 4

type barEntry struct {
	key    string
	digest string
	bars   strategy.Bars
	keys   *script.BarKeys // the memo keys of the bars' columns, by their digest
	bytes  int64           // heap bytes (0 for mapped bars)
	// m, when set, is the mapping the bars are views of (mapped.go); a
	// request that got the entry from the cache holds it until release.
	m *mapping
	// version, when watched is set, is the store's data version as that
	// kept store's Watch saw it before preload read the bars: while it
	// still sees it, the bars are what the store holds.
	version int64
	watched *watchedStore
	// link is this worker's hard link to the shared bars file it wrote
	// (links.go), removed when the cache drops the entry.
	link string
}

// unlink removes e's link unless keep, the entry replacing it, has the
// same one.
func (e barEntry) unlink(keep barEntry) {
	if e.link != "" && e.link != keep.link {
		os.Remove(e.link)
	}
}

// release says the request that got e from the cache is done with its
// bars.
func (e barEntry) release() { e.m.release() }

// Bar cache bounds per worker process.
const (
	barCacheEntries = 8
	barCacheBytes   = 256 << 20
)

// load returns the entry of the bars of series in [from, to] from the
// store at path (the bars, their digest and their columns' memo keys),
// from the cache when an entry of that range has the digest want.
func (c *barCache) load(path, series string, from, to time.Time, want string) (barEntry, error) {
	key := storeKey(path, series, from, to)
	if e, ok := c.get(key, want); ok {
		return e, nil
	}
	bars, err := loadBars(path, series, from, to)
	if err != nil {
		return barEntry{}, err
	}
	e := newEntry(key, bars.Digest(), bars, nil)
	if want != "" && e.digest != want {
		return barEntry{}, &history.Error{Kind: history.KindStorage, Series: series,
			Msg: "the bars changed while the research ran (another import or fetch wrote the series); run it again"}
	}
	c.put(e)
	return e, nil
}

// get returns the cached entry of key with digest (never one for an
// empty digest), made the most recently used and held for the caller.
func (c *barCache) get(key, digest string) (barEntry, bool) {
	if digest == "" {
		return barEntry{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, e := range c.entries {
		if e.key == key && e.digest == digest {
			copy(c.entries[1:i+1], c.entries[:i])
			c.entries[0] = e
			e.m.acquire()
			return e, true
		}
	}
	return barEntry{}, false
}

// latestLen is the length of the bars the cache served last (0: none
// yet): a sweep chunk's, while it runs.
func (c *barCache) latestLen() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) == 0 {
		return 0
	}
	return c.entries[0].bars.Len()
}

// newEntry is the cache entry of bars under key: views of the mapping m,
// or, with m nil, a copy on the heap, whose bytes count against the
// cache's bound.
func newEntry(key, digest string, bars strategy.Bars, m *mapping) barEntry {
	// The digest names the bars' contents in every worker, so the memo
	// keys of what is computed from them match across the workers that
	// share columns (shared.go).
	e := barEntry{key: key, digest: digest, bars: bars, keys: script.SourceBarKeys(digest, bars), m: m}
	if m == nil {
		e.bytes = int64(bars.Len()) * 48
	}
	return e
}

// storeKey is the cache key of the bars of series in [from, to] in the
// store at path.
func storeKey(path, series string, from, to time.Time) string {
	return path + "\x00" + series + "\x00" + from.String() + "\x00" + to.String()
}

// preload reads the range r names into the cache, fresh from the store
// (a sweep about to start must see the bars as they are now), and
// describes what it read. With r.ShareDir, and at least r.ShareFrom bars,
// it writes them from the store straight to a shared bars file there,
// which it names, and serves them from that file's mapping: the worker
// that shares the bars never holds a copy of its own.
func (c *barCache) preload(r worker.BarsRange) (worker.BarsSeen, string, error) {
	cfg, err := backtest.Request{From: r.From, To: r.To}.Config(backtest.DefaultConfig())
	if err != nil {
		return worker.BarsSeen{}, "", err
	}
	ws, err := c.storeAt(r.HistoryPath)
	if err != nil {
		return worker.BarsSeen{}, "", err
	}
	version, err := ws.watch.Version(context.Background())
	if err != nil {
		c.forget(ws)
		return worker.BarsSeen{}, "", err
	}
	key := storeKey(r.HistoryPath, r.Series, cfg.From, cfg.To)
	if e, ok := c.unchanged(key, ws, version, r); ok {
		defer e.release()
		path, err := reshare(r.ShareDir, e)
		if err != nil {
			return worker.BarsSeen{}, "", err
		}
		return e.seen(), path, nil
	}
	path, e, err := c.share(ws.store, key, r, cfg.From, cfg.To)
	if err != nil {
		return worker.BarsSeen{}, "", err
	}
	if path == "" {
		bars, err := ws.store.Load(r.Series, cfg.From, cfg.To)
		if err != nil {
			return worker.BarsSeen{}, "", err
		}
		e = newEntry(key, bars.Digest(), bars, nil)
	}
	e.version, e.watched = version, ws
	if path != "" {
		e.link = c.keepLink(path, e.digest)
	}
	c.put(e)
	e.release()
	return e.seen(), path, nil
}

// storeAt returns the store at path, opened read-only with its Watch,
// kept open for later preloads (at most maxWatchedStores).
func (c *barCache) storeAt(path string) (*watchedStore, error) {
	fi, statErr := os.Stat(path)
	if statErr == nil {
		if ws := c.kept(path, fi); ws != nil {
			return ws, nil
		}
	}
	store, err := history.OpenReadOnly(path)
	if err != nil {
		return nil, err
	}
	if statErr != nil {
		store.Close()
		return nil, &history.Error{Kind: history.KindStorage, Msg: "read the history store: " + statErr.Error()}
	}
	watch, err := store.Watch(context.Background())
	if err != nil {
		store.Close()
		return nil, err
	}
	ws := &watchedStore{path: path, file: fi, store: store, watch: watch}
	c.mu.Lock()
	c.stores = append([]*watchedStore{ws}, c.stores...)
	var old []*watchedStore
	if len(c.stores) > maxWatchedStores {
		old = c.stores[maxWatchedStores:]
		c.stores = c.stores[:maxWatchedStores:maxWatchedStores]
	}
	c.mu.Unlock()
	for _, o := range old {
		o.close()
	}
	return ws, nil
}

// kept returns the store kept open at path, made the most recently used,
// when it is still the file fi; one of another file at path (a store
// removed and made again, which its pinned connection does not see) is
// closed.
func (c *barCache) kept(path string, fi os.FileInfo) *watchedStore {
	c.mu.Lock()
	i := slices.IndexFunc(c.stores, func(ws *watchedStore) bool { return ws.path == path })
	if i < 0 {
		c.mu.Unlock()
		return nil
	}
	ws := c.stores[i]
	if !os.SameFile(ws.file, fi) {
		c.stores = slices.Delete(c.stores, i, i+1)
		c.mu.Unlock()
		ws.close()
		return nil
	}
	copy(c.stores[1:i+1], c.stores[:i])
	c.stores[0] = ws
	c.mu.Unlock()
	return ws
}

// forget closes ws (its Watch failed: the file may be gone) so the next
// preload of its path opens the store again.
func (c *barCache) forget(ws *watchedStore) {
	c.mu.Lock()
	c.stores = slices.DeleteFunc(c.stores, func(o *watchedStore) bool { return o == ws })
	c.mu.Unlock()
	ws.close()
}

func (ws *watchedStore) close() {
	ws.watch.Close()
	ws.store.Close()
}

// unchanged returns the cached entry of key that preload read through
// ws at the store's data version version, held for the caller, when it serves r
// as a fresh read would: shared when r shares (its bars at least
// r.ShareFrom), on the heap when it does not.
func (c *barCache) unchanged(key string, ws *watchedStore, version int64, r worker.BarsRange) (barEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, e := range c.entries {
		if e.key != key {
			continue
		}
		sharing := r.ShareDir != "" && e.bars.Len() >= r.ShareFrom
		if e.watched != ws || e.version != version || sharing != (e.m != nil) {
			return barEntry{}, false
		}
		copy(c.entries[1:i+1], c.entries[:i])
		c.entries[0] = e
		e.m.acquire()
		return e, true
	}
	return barEntry{}, false
}

// share writes the bars of r in [from, to] from store to a shared bars
// file in r.ShareDir, and returns its path and the entry of its mapping
// under key. Without r.ShareDir, or with fewer than r.ShareFrom bars, it
// writes nothing and names no file.
func (c *barCache) share(store *history.Store, key string, r worker.BarsRange, from, to time.Time) (string, barEntry, error) {
	if r.ShareDir == "" {
		return "", barEntry{}, nil
	}
	n, err := store.Count(r.Series, from, to)
	if err != nil || n < r.ShareFrom {
		return "", barEntry{}, err
	}
	path, e, err := writeShared(r.ShareDir, key, r.Series, func(f *os.File) (string, error) {
		_, digest, err := store.WriteEncodedAt(context.Background(), f, r.Series, from, to)
		return digest, err
	})
	return path, e, err
}

// loadShared returns the entry of key (a range of the store, as load
// keys it) from the shared bars file at path, mapped read-only: from the
// cache when an entry of key has that digest, else mapped now and
// cached under key, so a later backtest of the range (the winner's
// lookahead check) finds it too.
func (c *barCache) loadShared(key, path, series, digest string) (barEntry, error) {
	if digest == "" {
		return barEntry{}, &worker.Error{Kind: worker.KindRequest, Msg: "sweep request with shared bars but no digest"}
	}
	if e, ok := c.get(key, digest); ok {
		return e, nil
	}
	return c.mapInto(key, path, series, digest)
}

// mapInto maps the shared bars file at path and caches it under key,
// replacing an entry of key.
func (c *barCache) mapInto(key, path, series, digest string) (barEntry, error) {
	bars, m, err := mapShared(path, series)
	if err != nil {
		return barEntry{}, &worker.Error{Kind: worker.KindRequest, Msg: "read the shared bars: " + err.Error()}
	}
	e := newEntry(key, digest, bars, m)
	c.put(e)
	return e, nil
}

// seen describes the entry's bars.
func (e barEntry) seen() worker.BarsSeen {
	s := worker.BarsSeen{Digest: e.digest, Count: e.bars.Len()}
	if n := e.bars.Len(); n > 0 {
		s.First, s.Last = e.bars.Time[0], e.bars.Time[n-1]
	}
	return s
}

// loadFile returns the bars encoded in the file at path: a cluster
// worker's copy of shipped bars, which it keeps under their digest only
// once they hash to it (strategy/cluster). It is mapped as it is, like
// shared bars, not read, hashed and decoded again.
func (c *barCache) loadFile(path, series, digest string) (barEntry, error) {
	if digest == "" {
		return barEntry{}, &worker.Error{Kind: worker.KindRequest, Msg: "sweep request with a bars file but no digest"}
	}
	key := "file\x00" + path + "\x00" + series
	if e, ok := c.get(key, digest); ok {
		return e, nil
	}
	bars, m, err := mapShared(path, series)
	if err != nil {
		return barEntry{}, &worker.Error{Kind: worker.KindRequest, Msg: "read the shipped bars: " + err.Error()}
	}
	e := newEntry(key, digest, bars, m)
	c.put(e)
	return e, nil
}

// put adds e, replacing an entry of its key, and evicts to the bounds.
func (c *barCache) put(e barEntry) {
	key := e.key
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := 0; i < len(c.entries); i++ {
		if c.entries[i].key == key {
			c.bytes -= c.entries[i].bytes
			c.entries[i].m.drop()
			c.entries[i].unlink(e)
			c.entries = append(c.entries[:i], c.entries[i+1:]...)
			i--
		}
	}
	if e.bytes <= barCacheBytes {
		c.entries = append([]barEntry{e}, c.entries...)
		c.bytes += e.bytes
		e.m.acquire() // the caller's, released when it is done
	} else {
		e.m.drop()
		e.unlink(barEntry{})
	}
	for len(c.entries) > barCacheEntries || c.bytes > barCacheBytes {
		last := c.entries[len(c.entries)-1]
		c.bytes -= last.bytes
		last.m.drop()
		last.unlink(barEntry{})
		c.entries = c.entries[:len(c.entries)-1]
	}
}
