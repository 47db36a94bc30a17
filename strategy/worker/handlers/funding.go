package handlers

import (
	"time"

	"wicket/strategy"
	"wicket/strategy/backtest"
	"wicket/strategy/history"
	"wicket/strategy/worker"
)

// fundingSource is where a run's funding comes from: the history store
// at path, or a copy shipped into file from another machine, named by
// its digest (worker.SweepChunk.FundingFile).
type fundingSource struct {
	path, file, digest string
	// stores, when set, keeps the store at path open between requests
	// (the worker's bar cache): opening it took 0.4-0.6 ms a chunk.
	stores *barCache
}

// fundingCosts gives cfg the funding settlements of the bars' span, as
// o asks: "auto" charges them when the store holds the pair's funding,
// "on" requires it, "off" never reads. Shipped funding is the store's
// as its sender read it, and is clipped to the same span.
func fundingCosts(cfg *backtest.Config, src fundingSource, series string, o backtest.CostOptions, bars strategy.Bars) error {
	rates, ok, err := fundingRates(src, series, o, bars)
	if err != nil || !ok {
		return err
	}
	cfg.Costs.Funding = true
	cfg.Costs.FundingRates = rates
	return cfg.Costs.Check()
}

// fundingRates reads the funding settlements of series over the bars'
// span from src, as o asks (fundingCosts); ok is false when there are
// none to charge.
func fundingRates(src fundingSource, series string, o backtest.CostOptions, bars strategy.Bars) (_ []backtest.FundingRate, ok bool, _ error) {
	want := o.FundingWanted()
	if want == "off" || bars.Len() == 0 {
		return nil, false, nil
	}
	_, g, err := history.CheckSeries(series)
	if err != nil {
		return nil, false, err
	}
	from := time.Unix(bars.Time[0], 0)
	to := time.Unix(bars.Time[bars.Len()-1], 0).Add(g.Duration() - time.Millisecond)
	var f worker.Funding
	switch {
	case src.file != "":
		f, err = worker.ReadFundingFile(src.file, src.digest)
		f = f.Clip(from, to)
	case src.path == "": // a cluster worker's copy of the bars, and no funding shipped with them
		if want == "on" {
			return nil, false, &backtest.Error{Kind: backtest.KindInvalid, Msg: "funding needs the history store, and this worker has only a copy of the bars; run it on the project's own workers"}
		}
		return nil, false, nil
	case src.stores != nil:
		f, err = src.keptFunding(series, want, from, to)
	default:
		f, err = worker.StoreFunding(src.path, series, want, from, to)
	}
	if err != nil || !f.Held {
		return nil, false, err
	}
	rates := make([]backtest.FundingRate, len(f.Rates))
	for i, r := range f.Rates {
		rate, _ := r.Rate.Float64()
		rates[i] = backtest.FundingRate{Time: r.Time.Unix(), Rate: rate}
	}
	return rates, true, nil
}

// keptFunding is worker.StoreFunding from the store src.stores keeps
// open at src.path.
func (src fundingSource) keptFunding(series, want string, from, to time.Time) (worker.Funding, error) {
	if want == "off" {
		return worker.Funding{}, nil
	}
	sym, _, err := history.CheckSeries(series)
	if err != nil {
		return worker.Funding{}, err
	}
	ws, err := src.stores.storeAt(src.path)
	if history.IsNotFound(err) && want == "auto" {
		return worker.Funding{}, nil // bars from a cache, the store gone since: no funding to find
	}
	if err != nil {
		return worker.Funding{}, err
	}
	return worker.FundingOf(ws.store, sym, want, from, to)
}
