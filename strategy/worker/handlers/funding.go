package handlers

import (
	"errors"
	"fmt"
	"time"

	"wicket/strategy"
	"wicket/strategy/backtest"
	"wicket/strategy/history"
)

// fundingCosts gives cfg the funding settlements of the bars' span from
// the history store at path, as o asks: "auto" charges them when the
// store holds the pair's funding, "on" requires it, "off" never reads.
func fundingCosts(cfg *backtest.Config, path, series string, o backtest.CostOptions, bars strategy.Bars) error {
	rates, ok, err := fundingRates(path, series, o, bars)
	if err != nil || !ok {
		return err
	}
	cfg.Costs.Funding = true
	cfg.Costs.FundingRates = rates
	return cfg.Costs.Check()
}

// fundingRates reads the funding settlements of series over the bars'
// span from the store at path, as o asks (fundingCosts); ok is false
// when there are none to charge.
func fundingRates(path, series string, o backtest.CostOptions, bars strategy.Bars) (_ []backtest.FundingRate, ok bool, _ error) {
	want := o.FundingWanted()
	if want == "off" || bars.Len() == 0 {
		return nil, false, nil
	}
	sym, g, err := history.CheckSeries(series)
	if err != nil {
		return nil, false, err
	}
	if path == "" { // a cluster worker's copy of the bars: no store to read
		if want == "on" {
			return nil, false, &backtest.Error{Kind: backtest.KindInvalid, Msg: "funding needs the history store, and this worker has only a copy of the bars; run it on the project's own workers"}
		}
		return nil, false, nil
	}
	store, err := history.OpenReadOnly(path)
	var he *history.Error
	if errors.As(err, &he) && he.Kind == history.KindNotFound && want == "auto" {
		return nil, false, nil // bars from the worker's cache, the store gone since: no funding to find
	}
	if err != nil {
		return nil, false, err
	}
	defer store.Close()
	info, err := store.FundingInfo(sym)
	if err != nil {
		return nil, false, err
	}
	if info.Count == 0 {
		if want == "on" {
			return nil, false, &backtest.Error{Kind: backtest.KindInvalid, Msg: fmt.Sprintf("funding: the history store holds no funding rates for %s; fetch them with `wicket data fetch --funding %s`, or leave funding out", sym, sym)}
		}
		return nil, false, nil
	}
	from := time.Unix(bars.Time[0], 0)
	to := time.Unix(bars.Time[bars.Len()-1], 0).Add(g.Duration() - time.Millisecond)
	stored, err := store.Funding(sym, from, to)
	if err != nil {
		return nil, false, err
	}
	rates := make([]backtest.FundingRate, len(stored))
	for i, r := range stored {
		f, _ := r.Rate.Float64()
		rates[i] = backtest.FundingRate{Time: r.Time.Unix(), Rate: f}
	}
	return rates, true, nil
}
