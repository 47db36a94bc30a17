package handlers

import (
	"os"
	"sync"
	"time"

	"wicket/strategy"
	"wicket/strategy/history"
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
}

type barEntry struct {
	key    string
	digest string
	bars   strategy.Bars
	bytes  int64
}

// Bar cache bounds per worker process.
const (
	barCacheEntries = 8
	barCacheBytes   = 256 << 20
)

// load returns the bars of series in [from, to] from the store at path,
// from the cache when an entry of that range has the digest want.
func (c *barCache) load(path, series string, from, to time.Time, want string) (strategy.Bars, error) {
	key := path + "\x00" + series + "\x00" + from.String() + "\x00" + to.String()
	c.mu.Lock()
	for i, e := range c.entries {
		if e.key == key && e.digest == want && want != "" {
			copy(c.entries[1:i+1], c.entries[:i])
			c.entries[0] = e
			c.mu.Unlock()
			return e.bars, nil
		}
	}
	c.mu.Unlock()

	store, err := history.OpenReadOnly(path)
	if err != nil {
		return strategy.Bars{}, err
	}
	bars, err := store.Load(series, from, to)
	store.Close()
	if err != nil {
		return strategy.Bars{}, err
	}
	c.put(barEntry{key: key, digest: bars.Digest(), bars: bars, bytes: int64(bars.Len()) * 48})
	return bars, nil
}

// loadFile returns the bars encoded in the file at path (a cluster
// worker's shipped copy), which must hash to digest.
func (c *barCache) loadFile(path, series, digest string) (strategy.Bars, error) {
	if digest == "" {
		return strategy.Bars{}, &worker.Error{Kind: worker.KindRequest, Msg: "sweep request with a bars file but no digest"}
	}
	key := "file\x00" + path + "\x00" + series
	c.mu.Lock()
	for i, e := range c.entries {
		if e.key == key && e.digest == digest {
			copy(c.entries[1:i+1], c.entries[:i])
			c.entries[0] = e
			c.mu.Unlock()
			return e.bars, nil
		}
	}
	c.mu.Unlock()
	data, err := os.ReadFile(path)
	if err != nil {
		return strategy.Bars{}, &worker.Error{Kind: worker.KindRequest, Msg: "read the shipped bars: " + err.Error()}
	}
	bars, err := strategy.DecodeBars(data, series, digest)
	if err != nil {
		return strategy.Bars{}, &worker.Error{Kind: worker.KindRequest, Msg: "the shipped bars are damaged: " + err.Error()}
	}
	c.put(barEntry{key: key, digest: digest, bars: bars, bytes: int64(bars.Len()) * 48})
	return bars, nil
}

// put adds e, replacing an entry of its key, and evicts to the bounds.
func (c *barCache) put(e barEntry) {
	key := e.key
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := 0; i < len(c.entries); i++ {
		if c.entries[i].key == key {
			c.bytes -= c.entries[i].bytes
			c.entries = append(c.entries[:i], c.entries[i+1:]...)
			i--
		}
	}
	if e.bytes <= barCacheBytes {
		c.entries = append([]barEntry{e}, c.entries...)
		c.bytes += e.bytes
	}
	for len(c.entries) > barCacheEntries || c.bytes > barCacheBytes {
		last := c.entries[len(c.entries)-1]
		c.bytes -= last.bytes
		c.entries = c.entries[:len(c.entries)-1]
	}
}
