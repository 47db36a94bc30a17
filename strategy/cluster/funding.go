package cluster

import (
	"context"
	"fmt"

	"wicket/strategy/backtest"
	"wicket/strategy/history"
	"wicket/strategy/worker"
)

// maxShippedFunding bounds the funding digests a Dispatcher remembers
// shipping.
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
	f, err := worker.StoreFunding(req.HistoryPath, req.Series, want, from, to)
	if err != nil || !f.Held {
		return "", err
	}
	data := f.Encode()
	digest := worker.FundingDigest(data)
	d.mu.Lock()
	done := d.funding[digest]
	d.mu.Unlock()
	if done {
		return digest, nil
	}
	if err := putBars(ctx, d.obj, digest, data, d.o.connectTimeout(), barsChunk(d.nc.MaxPayload())); err != nil {
		return "", &worker.Error{Kind: worker.KindStart, Msg: fmt.Sprintf("ship the funding of %s to the research cluster at %s: %v", req.Series, d.where, err)}
	}
	d.mu.Lock()
	if len(d.funding) >= maxShippedFunding {
		clear(d.funding)
	}
	d.funding[digest] = true
	d.mu.Unlock()
	return digest, nil
}
