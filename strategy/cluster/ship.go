package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"
	"wicket/strategy/history"
	"wicket/strategy/worker"

	"github.com/nats-io/nats.go/jetstream"
)

// shipBars makes sure the bars of the chunk's range are in the bars
// store, and returns their digest. A chunk that names its digest (the
// sweep's Warm read them) finds them shipped, or being put in the store
// (up, to wait for: Sweep); else each range is read and shipped once per
// Dispatcher. The store keeps bars another sweep shipped.
func (d *Dispatcher) shipBars(ctx context.Context, req worker.SweepChunk) (digest string, up *upload, err error) {
	if req.HistoryPath == "" {
		if req.BarsFile != "" || req.Digest == "" {
			return "", nil, &worker.Error{Kind: worker.KindRequest, Msg: "a cluster chunk needs the history store its bars come from"}
		}
		return req.Digest, nil, nil
	}
	if req.Digest != "" {
		if up := d.uploading(req.Digest); up != nil {
			return req.Digest, up, nil
		}
		if d.holds(req.Digest) {
			return req.Digest, nil, nil
		}
	}
	key := rangeKey(req.HistoryPath, req.Series, req.From, req.To)
	d.barsMu.Lock()
	defer d.barsMu.Unlock()
	d.mu.Lock()
	digest, ok := d.bars[key]
	d.mu.Unlock()
	if ok && (req.Digest == "" || req.Digest == digest) {
		return digest, nil, nil
	}
	if !ok && req.Digest != "" {
		// The caller read these bars and knows their digest: when the store
		// holds them already (another sweep shipped them), there is nothing
		// to read or send. The worker checks what it fetches against the
		// digest.
		if err := hasBars(ctx, d.obj, req.Digest, d.o.connectTimeout()); err == nil {
			d.hold(req.Digest)
			d.remember(key, req.Digest)
			return req.Digest, nil, nil
		} else if !errors.Is(err, jetstream.ErrObjectNotFound) {
			return "", nil, &worker.Error{Kind: worker.KindStart, Msg: fmt.Sprintf("look for the bars of %s on the research cluster at %s: %v", req.Series, d.where, err)}
		}
	}
	seen, data, err := d.warmed.load(req.HistoryPath, req.Series, req.From, req.To, true)
	if err != nil {
		return "", nil, err
	}
	if req.Digest != "" && req.Digest != seen.Digest {
		return "", nil, &history.Error{Kind: history.KindStorage, Msg: fmt.Sprintf("the bars of %s changed while the sweep ran; run it again", req.Series)}
	}
	if _, err := d.put(ctx, req.Series, seen.Digest, data); err != nil {
		return "", nil, err
	}
	d.remember(key, seen.Digest)
	return seen.Digest, nil, nil
}

// rangeKey names a range of a series in a history store.
func rangeKey(path, series, from, to string) string {
	return path + "\x00" + series + "\x00" + from + "\x00" + to
}

// put stores the bars data under digest unless the store holds them, and
// notes that it does; sent says whether it stored them.
func (d *Dispatcher) put(ctx context.Context, series, digest string, data []byte) (sent bool, err error) {
	sent, err = putBars(ctx, d.obj, digest, data, d.o.connectTimeout(), barsChunk(d.nc.MaxPayload()))
	if err != nil {
		return false, &worker.Error{Kind: worker.KindStart, Msg: fmt.Sprintf("ship the bars of %s to the research cluster at %s: %v", series, d.where, err)}
	}
	if sent {
		d.shipped.Add(1)
	}
	d.hold(digest)
	return sent, nil
}

// hold notes that the store holds the bars of digest.
func (d *Dispatcher) hold(digest string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.held) >= maxShippedRanges {
		clear(d.held)
	}
	d.held[digest] = d.o.Now()
}

// heldFor is how long a Dispatcher takes bars it put in the store, or
// found there, to be there still without asking: far less than the
// store keeps them (barsMaxAge).
const heldFor = time.Hour

// holds reports whether this Dispatcher put the bars of digest in the
// store, or found them there, within heldFor.
func (d *Dispatcher) holds(digest string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	at, ok := d.held[digest]
	return ok && d.o.Now().Sub(at) < heldFor
}

// remember notes that the bars of a range are in the store.
func (d *Dispatcher) remember(key, digest string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.bars) >= maxShippedRanges {
		clear(d.bars) // a long-lived server forgets old ranges; the store still has their bars
	}
	d.bars[key] = digest
}

// hasBars is nil when the store holds an object named digest, and
// jetstream.ErrObjectNotFound when it does not.
func hasBars(ctx context.Context, obj jetstream.ObjectStore, digest string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err := obj.GetInfo(ctx, digest)
	return err
}

// barsChunk is the size of the pieces bars are stored in: large, so a
// worker fetches them in few messages, and well within the server's
// max_payload.
func barsChunk(maxPayload int64) uint32 {
	return uint32(max(1, min(512<<10, maxPayload/2)))
}

// putBars stores data under digest, in pieces of chunk bytes, unless it
// is there already; sent says whether it stored them.
func putBars(ctx context.Context, obj jetstream.ObjectStore, digest string, data []byte, timeout time.Duration, chunk uint32) (sent bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, timeout+time.Duration(len(data)>>20)*time.Second)
	defer cancel()
	if info, err := obj.GetInfo(ctx, digest); err == nil && info.Size == uint64(len(data)) {
		return false, nil
	} else if err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
		return false, err
	}
	_, err = obj.Put(ctx, jetstream.ObjectMeta{Name: digest, Opts: &jetstream.ObjectMetaOptions{ChunkSize: chunk}}, bytes.NewReader(data))
	return err == nil, err
}
