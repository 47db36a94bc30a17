package cluster

import (
	"context"
	"fmt"
	"os"

	"wicket/strategy/backtest"
	"wicket/strategy/history"
	"wicket/strategy/worker"
)

// maxShippedFunding bounds the ranges whose funding a Dispatcher
// remembers.
const maxShippedFunding = 4096

// shipFunding makes sure the perpetual funding a chunk charges is in the
// cluster's store, and returns its digest, which the signed chunk
// carries: the history store's settlements of the chunk's pair over its
// range (through its last bar's end), read as a run in process reads
// them (worker.StoreFunding). The worker fetches them, checks them
// against the digest and clips them to the bars' span. It returns ""
// when the chunk charges no funding: off, or "auto" and the store holds
// none for the pair.
func (d *Dispatcher) shipFunding(ctx context.Context, req worker.SweepChunk) (string, error) {
	want := req.FundingWanted()
	if want == "off" || req.HistoryPath == "" {
		return "", nil
	}
	_, g, err := history.CheckSeries(req.Series)
	if err != nil {
		return "", err
	}
	from, err := backtest.ParseTime("from", req.From, false)
	if err != nil {
		return "", err
	}
	to, err := backtest.ParseTime("to", req.To, true)
	if err != nil {
		return "", err
	}
	if !to.IsZero() {
		to = to.Add(g.Duration()) // the last bar's settlements; the worker clips to the bars
	}
	// A sweep's chunks share a range: it is read once while the store's
	// files are unchanged, and put once. Two chunks putting one object at
	// once would replace it, purging the pieces a worker may be reading.
	d.fundingMu.Lock()
	defer d.fundingMu.Unlock()
	key := req.HistoryPath + "\x00" + req.Series + "\x00" + req.From + "\x00" + req.To + "\x00" + want
	stamp := storeStamp(req.HistoryPath)
	d.mu.Lock()
	seen, ok := d.fundingRead[key]
	d.mu.Unlock()
	if ok && seen.stamp == stamp {
		return seen.digest, nil
	}
	f, err := worker.StoreFunding(req.HistoryPath, req.Series, want, from, to)
	if err != nil {
		return "", err
	}
	digest := ""
	if f.Held {
		data := f.Encode()
		digest = worker.FundingDigest(data)
		if _, err := putBars(ctx, d.obj, digest, data, d.o.connectTimeout(), barsChunk(d.nc.MaxPayload())); err != nil {
			return "", &worker.Error{Kind: worker.KindStart, Msg: fmt.Sprintf("ship the funding of %s to the research cluster at %s: %v", req.Series, d.where, err)}
		}
	}
	d.mu.Lock()
	if len(d.fundingRead) >= maxShippedFunding {
		clear(d.fundingRead)
	}
	d.fundingRead[key] = fundingSeen{stamp: stamp, digest: digest}
	d.mu.Unlock()
	return digest, nil
}

// fundingSeen is the funding a range was found to charge (its digest,
// "" for none) while the store's files were as stamp says.
type fundingSeen struct {
	stamp, digest string
}

// storeStamp is the size and modification time of the history store's
// file and of its write-ahead log: a write to the store changes it.
func storeStamp(path string) string {
	stamp := ""
	for _, p := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			stamp += fmt.Sprintf("%d.%d;", fi.Size(), fi.ModTime().UnixNano())
		} else {
			stamp += "-;"
		}
	}
	return stamp
}
