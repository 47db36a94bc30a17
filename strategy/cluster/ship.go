package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"
	"wicket/strategy/backtest"
	"wicket/strategy/history"
	"wicket/strategy/worker"

	"github.com/nats-io/nats.go/jetstream"
)

// shipBars makes sure the bars of the chunk's range are in the bars
// store, and returns their digest. Each range is read and shipped once
// per Dispatcher; the store keeps bars another sweep shipped.
func (d *Dispatcher) shipBars(ctx context.Context, req worker.SweepChunk) (string, error) {
	if req.HistoryPath == "" {
		if req.BarsFile != "" || req.Digest == "" {
			return "", &worker.Error{Kind: worker.KindRequest, Msg: "a cluster chunk needs the history store its bars come from"}
		}
		return req.Digest, nil
	}
	key := req.HistoryPath + "\x00" + req.Series + "\x00" + req.From + "\x00" + req.To
	d.barsMu.Lock()
	defer d.barsMu.Unlock()
	d.mu.Lock()
	digest, ok := d.bars[key]
	d.mu.Unlock()
	if ok && (req.Digest == "" || req.Digest == digest) {
		return digest, nil
	}
	if !ok && req.Digest != "" {
		// The caller read these bars and knows their digest: when the store
		// holds them already (another sweep shipped them), there is nothing
		// to read or send. The worker checks what it fetches against the
		// digest.
		if err := hasBars(ctx, d.obj, req.Digest, d.o.connectTimeout()); err == nil {
			d.remember(key, req.Digest)
			return req.Digest, nil
		} else if !errors.Is(err, jetstream.ErrObjectNotFound) {
			return "", &worker.Error{Kind: worker.KindStart, Msg: fmt.Sprintf("look for the bars of %s on the research cluster at %s: %v", req.Series, d.where, err)}
		}
	}
	from, err := backtest.ParseTime("from", req.From, false)
	if err != nil {
		return "", err
	}
	to, err := backtest.ParseTime("to", req.To, true)
	if err != nil {
		return "", err
	}
	store, err := history.OpenReadOnly(req.HistoryPath)
	if err != nil {
		return "", err
	}
	bars, err := store.Load(req.Series, from, to)
	store.Close()
	if err != nil {
		return "", err
	}
	data := bars.Encode()
	digest = bars.Digest()
	if req.Digest != "" && req.Digest != digest {
		return "", &history.Error{Kind: history.KindStorage, Msg: fmt.Sprintf("the bars of %s changed while the sweep ran; run it again", req.Series)}
	}
	if err := putBars(ctx, d.obj, digest, data, d.o.connectTimeout(), barsChunk(d.nc.MaxPayload())); err != nil {
		return "", &worker.Error{Kind: worker.KindStart, Msg: fmt.Sprintf("ship the bars of %s to the research cluster at %s: %v", req.Series, d.where, err)}
	}
	d.remember(key, digest)
	return digest, nil
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
// is there already.
func putBars(ctx context.Context, obj jetstream.ObjectStore, digest string, data []byte, timeout time.Duration, chunk uint32) error {
	ctx, cancel := context.WithTimeout(ctx, timeout+time.Duration(len(data)>>20)*time.Second)
	defer cancel()
	if info, err := obj.GetInfo(ctx, digest); err == nil && info.Size == uint64(len(data)) {
		return nil
	} else if err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
		return err
	}
	_, err := obj.Put(ctx, jetstream.ObjectMeta{Name: digest, Opts: &jetstream.ObjectMetaOptions{ChunkSize: chunk}}, bytes.NewReader(data))
	return err
}
