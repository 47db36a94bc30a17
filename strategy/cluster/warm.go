package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"sync"

	"wicket/strategy"
	"wicket/strategy/backtest"
	"wicket/strategy/history"
	"wicket/strategy/worker"
)

// Warm reads the bars of r, ships them to the cluster unless it holds
// them, and asks its workers to fetch them now: a sweep over them is
// about to start, and its first chunks need not wait for them. It says
// what it read, which the sweep plans by (its chunks name the digest,
// and find the bars shipped): the sweep's machine reads and hashes its
// bars once, and not at all while the store is unchanged since it last
// did. Bars the cluster may not hold are pushed to the workers present
// at once (push) and put in the store meanwhile, in the background: Warm
// does not wait for the upload, and the sweep's chunks wait for it only
// on the queue (Sweep). An error is the store's (no such series, no bars
// in the range); an upload's error fails the sweep's chunks.
func (d *Dispatcher) Warm(ctx context.Context, r worker.BarsRange) (worker.BarsSeen, error) {
	d.barsMu.Lock()
	defer d.barsMu.Unlock()
	if d.nc.IsClosed() { // and its stores too: none is opened again
		return worker.BarsSeen{}, fmt.Errorf("the connection to the research cluster at %s is closed", d.where)
	}
	seen, data, err := d.warmed.load(r.HistoryPath, r.Series, r.From, r.To, false)
	if err != nil {
		return worker.BarsSeen{}, err
	}
	key := rangeKey(r.HistoryPath, r.Series, r.From, r.To)
	if d.holds(seen.Digest) {
		d.announce(seen.Digest, r.Series, false)
		d.remember(key, seen.Digest)
		return seen, nil
	}
	if d.uploading(seen.Digest) != nil {
		return seen, nil // another sweep pushed them and puts them in the store
	}
	if data == nil { // read before, and the store may have dropped them since
		if seen, data, err = d.warmed.load(r.HistoryPath, r.Series, r.From, r.To, true); err != nil {
			return worker.BarsSeen{}, err
		}
	}
	// Pushed, or else announced, before the store is asked whether it
	// holds them: the workers need not wait for that round trip, nor for
	// the upload. A worker the push does not reach (the bars are larger
	// than a message, or it joins later) fetches them from the store.
	if !d.push(seen.Digest, r.Series, data) {
		d.announce(seen.Digest, r.Series, true)
	}
	d.upload(ctx, key, r.Series, seen.Digest, data)
	return seen, nil
}

// upload is bars being put in the cluster's store in the background
// (Dispatcher.upload); err is set once done is closed.
type upload struct {
	done chan struct{}
	err  error
}

// upload puts the bars data of digest, the range key's, in the store in
// the background, unless it holds them: then the workers are told to
// fetch them, and the range is remembered as shipped. Until it is done,
// uploading returns it.
func (d *Dispatcher) upload(ctx context.Context, key, series, digest string, data []byte) {
	u := &upload{done: make(chan struct{})}
	d.mu.Lock()
	d.uploads[digest] = u
	d.mu.Unlock()
	go func() {
		sent, err := d.put(context.WithoutCancel(ctx), series, digest, data)
		if err == nil {
			if sent {
				d.announce(digest, series, false)
			}
			d.remember(key, digest)
		}
		d.mu.Lock()
		u.err = err
		delete(d.uploads, digest)
		d.mu.Unlock()
		close(u.done)
	}()
}

// uploading is the upload of the bars of digest under way; nil when
// there is none.
func (d *Dispatcher) uploading(digest string) *upload {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.uploads[digest]
}

// push sends the bars data of digest to the workers present, in one
// core NATS message (barsPushSubj), and reports whether it did: bars
// larger than maxPush or the server's max_payload are only put in the
// store. The
// message's body is the bars, and its headerNote a barsNote, signed as
// the body of its frame: the signature covers the note, which names the
// bars' digest, and a worker keeps the bars only if they hash to it (so
// neither side spends an HMAC on the bars, nor a copy of them).
func (d *Dispatcher) push(digest, series string, data []byte) bool {
	note, _ := json.Marshal(barsNote{Digest: digest, Series: series})
	if len(data) > maxPush || int64(len(note)+len(data)+maxPushHeaders) > d.nc.MaxPayload() {
		return false
	}
	m := d.sig.signed(barsPushSubj, note)
	m.Header.Set(headerNote, string(note))
	m.Data = data
	return d.nc.PublishMsg(m) == nil
}

// maxPush bounds the bars pushed: the push saves a small series' sweep
// the upload's and the fetch's round trips, while a large one's time
// goes to moving its bytes, which the store does in pieces that every
// worker need not hold in memory at once.
const maxPush = 4 << 20

// headerNote is a bars push's barsNote (JSON, which holds no line
// break).
const headerNote = "Wicket-Note"

// maxPushHeaders bounds the headers of a bars push, for its size.
const maxPushHeaders = 1 << 10

// announce tells the workers to fetch the bars of digest now; unsure,
// the cluster's store may not hold them yet, and a worker that finds
// nothing says nothing (a chunk's own fetch reports a real failure).
func (d *Dispatcher) announce(digest, series string, unsure bool) {
	note, _ := json.Marshal(barsNote{Digest: digest, Series: series, Unsure: unsure})
	d.nc.PublishMsg(d.sig.signed(barsSubj, note))
}

// warmedStores are the history stores a Dispatcher read bars from, kept
// open with a Watch, and what it read of each range: while a store's data
// version is unchanged, a range is not read again. Under
// Dispatcher.barsMu.
type warmedStores []*warmedStore

type warmedStore struct {
	path  string
	file  os.FileInfo
	store *history.Store
	watch *history.Watch
	read  map[string]warmedRange // range (rangeKey) → what was read
}

// warmedRange is what was read of a range, at a data version.
type warmedRange struct {
	version int64
	seen    worker.BarsSeen
}

// maxWarmedStores and maxWarmedRanges bound what a Dispatcher keeps.
const (
	maxWarmedStores = 4
	maxWarmedRanges = 256
)

// load is the bars of series in [from, to] (RFC 3339, empty: open) in
// the store at path: what they are, and their encoding
// (strategy.Bars.Encode), whose SHA-256 is the digest: written by the
// store from its blocks, and hashed once unless the store keeps the
// digest. Unless fresh, the encoding is nil when the range was read
// before and the store has not changed since: nothing is read.
func (ws *warmedStores) load(path, series, from, to string, fresh bool) (worker.BarsSeen, []byte, error) {
	f, err := backtest.ParseTime("from", from, false)
	if err != nil {
		return worker.BarsSeen{}, nil, err
	}
	t, err := backtest.ParseTime("to", to, true)
	if err != nil {
		return worker.BarsSeen{}, nil, err
	}
	s, version := ws.at(path)
	key := rangeKey(path, series, from, to)
	var store *history.Store
	if s != nil {
		if r, ok := s.read[key]; ok && r.version == version && !fresh {
			return r.seen, nil, nil
		}
		store = s.store
	} else {
		if store, err = history.OpenReadOnly(path); err != nil {
			return worker.BarsSeen{}, nil, err
		}
		defer store.Close()
	}
	// The store writes the range's encoding straight from its blocks, and
	// names its digest when it keeps it (a range of the whole series):
	// then nothing is decoded, encoded again or hashed here.
	var enc encoded
	n, digest, err := store.WriteEncodedAt(context.Background(), &enc, series, f, t)
	if err != nil {
		return worker.BarsSeen{}, nil, err
	}
	data := enc.b
	if len(data) != strategy.EncodedLen(n) {
		return worker.BarsSeen{}, nil, fmt.Errorf("the history store wrote %d bytes for %d bars of %s", len(data), n, series)
	}
	if digest == "" {
		sum := sha256.Sum256(data)
		digest = hex.EncodeToString(sum[:])
	}
	seen := worker.BarsSeen{Digest: digest, Count: n}
	if n > 0 { // the times are the encoding's first column
		seen.First, seen.Last = int64(binary.LittleEndian.Uint64(data[8:])), int64(binary.LittleEndian.Uint64(data[8*n:]))
	}
	if s != nil {
		if len(s.read) >= maxWarmedRanges {
			clear(s.read)
		}
		s.read[key] = warmedRange{version: version, seen: seen}
	}
	return seen, data, nil
}

// at is the store at path kept open, opened now if need be, and its data
// version; nil when it cannot be kept (read it without: the error shows
// there).
func (ws *warmedStores) at(path string) (*warmedStore, int64) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, 0
	}
	i := slices.IndexFunc(*ws, func(s *warmedStore) bool { return s.path == path })
	if i >= 0 && !os.SameFile((*ws)[i].file, fi) { // another file at path now
		(*ws)[i].close()
		*ws = slices.Delete(*ws, i, i+1)
		i = -1
	}
	if i < 0 {
		store, err := history.OpenReadOnly(path)
		if err != nil {
			return nil, 0
		}
		watch, err := store.Watch(context.Background())
		if err != nil {
			store.Close()
			return nil, 0
		}
		if len(*ws) >= maxWarmedStores {
			(*ws)[len(*ws)-1].close()
			*ws = (*ws)[:len(*ws)-1]
		}
		*ws = slices.Insert(*ws, 0, &warmedStore{path: path, file: fi, store: store, watch: watch, read: map[string]warmedRange{}})
		i = 0
	}
	s := (*ws)[i]
	version, err := s.watch.Version(context.Background())
	if err != nil { // the file may be gone: open it again next time
		s.close()
		*ws = slices.Delete(*ws, i, i+1)
		return nil, 0
	}
	return s, version
}

// encoded is a range's encoding, as the store writes it
// (history.Store.WriteEncodedAt): each block's columns at their place.
type encoded struct {
	mu sync.Mutex
	b  []byte
}

func (e *encoded) WriteAt(p []byte, off int64) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if off == 0 && len(p) == 8 && e.b == nil {
		// The count of bars comes first, and with it the encoding's size:
		// the columns land in place, not in copies grown twice over.
		if n := binary.LittleEndian.Uint64(p); n <= math.MaxInt32 {
			e.b = make([]byte, 0, strategy.EncodedLen(int(n)))
		}
	}
	end := int(off) + len(p)
	if end > cap(e.b) {
		b := make([]byte, len(e.b), max(end, 2*cap(e.b)))
		copy(b, e.b)
		e.b = b
	}
	if end > len(e.b) {
		e.b = e.b[:end]
	}
	copy(e.b[off:], p)
	return len(p), nil
}

func (s *warmedStore) close() {
	s.watch.Close()
	s.store.Close()
}

// close closes every store kept.
func (ws *warmedStores) close() {
	for _, s := range *ws {
		s.close()
	}
	*ws = nil
}
