package provider

import (
	"context"
	"fmt"
	"slices"
	"time"

	"wicket/strategy"
	"wicket/strategy/history"
)

// FetchOptions control Fetch.
type FetchOptions struct {
	// From and To bound the bars' open times (To inclusive); zero From
	// means DefaultDepth before now (or after the last stored bar), zero To
	// means up to the last closed bar.
	From, To time.Time
	// Full re-downloads [From, To] and replaces those bars in one
	// transaction; otherwise a fetch resumes after the last stored bar.
	Full bool
	// Now is the clock (time.Now when nil): a bar is closed, and stored,
	// once its open time plus its granularity is not after Now.
	Now func() time.Time
	// Progress, when set, hears each committed page.
	Progress func(Progress)
}

// Progress reports a fetch under way.
type Progress struct {
	Series      string
	Bars, Pages int
	Through     time.Time // open time of the newest bar fetched so far
	From, To    time.Time // the range being fetched
}

// Fraction is how much of the range is done, 0..1.
func (p Progress) Fraction() float64 {
	span := p.To.Sub(p.From)
	if span <= 0 || p.Through.IsZero() {
		return 0
	}
	return min(max(float64(p.Through.Sub(p.From))/float64(span), 0), 1)
}

// FetchResult is a fetch's summary.
type FetchResult struct {
	Series, Provider, ProviderSymbol string
	Added                            int
	First, Last                      time.Time // the added bars' open times (zero when none)
	Pages                            int
	Gaps                             history.GapStats // holes among the added bars and against the stored ones
	UpToDate                         bool             // nothing new was closed yet
	Replaced                         bool             // --full
}

// DefaultDepth is how far back a first fetch goes without --from.
var DefaultDepth = map[strategy.Granularity]time.Duration{
	"1m":  7 * 24 * time.Hour,
	"5m":  60 * 24 * time.Hour,
	"15m": 180 * 24 * time.Hour,
	"1h":  2 * 365 * 24 * time.Hour,
	"4h":  5 * 365 * 24 * time.Hour,
	"1d":  10 * 365 * 24 * time.Hour,
}

// Fetch downloads series from src into store. Incrementally (the default)
// it asks only for bars after the last stored one and appends each page in
// its own transaction as it arrives; with Full it collects the range and
// replaces it in one transaction. Only closed bars are stored. A series
// whose bars came from another source is refused.
func Fetch(ctx context.Context, store *history.Store, src Source, series string, opt FetchOptions) (FetchResult, error) {
	sym, g, err := history.CheckSeries(series)
	if err != nil {
		return FetchResult{}, err
	}
	res := FetchResult{Series: series, Provider: src.Name(), Replaced: opt.Full}
	if res.ProviderSymbol, err = src.Symbol(sym); err != nil {
		return res, err
	}
	now := time.Now
	if opt.Now != nil {
		now = opt.Now
	}
	step := g.Duration()
	fetchedAt := now().UTC()
	end := Floor(fetchedAt, g) // the bar opening here is still forming
	if !opt.To.IsZero() {
		if to := Floor(opt.To, g).Add(step); to.Before(end) {
			end = to
		}
	}
	info, err := store.Info(series)
	stored := err == nil
	if err != nil && !history.IsNotFound(err) {
		return res, err
	}
	if stored && info.Source != src.Name() {
		return res, &history.Error{Kind: history.KindInvalid, Series: series,
			Msg: fmt.Sprintf("holds %s bars, not %s ones; a series never mixes sources: `wicket data delete %s` first, or fetch into another series name", info.Source, src.Name(), series)}
	}
	start := opt.From
	if !start.IsZero() && Floor(start, g).Before(start) {
		start = Floor(start, g).Add(step)
	}
	switch {
	case opt.Full && start.IsZero() && stored:
		start = info.First
	case opt.Full && start.IsZero():
		start = Floor(end.Add(-DefaultDepth[g]), g)
	case opt.Full:
	case stored:
		if !start.IsZero() && start.Before(info.First) {
			return res, &history.Error{Kind: history.KindInvalid, Series: series,
				Msg: fmt.Sprintf("--from %s is before the first stored bar %s; an incremental fetch only adds newer bars, pass --full to re-download the range", start.Format(time.RFC3339), info.First.Format(time.RFC3339))}
		}
		if next := info.Last.Add(step); start.Before(next) {
			start = next // resume after the last stored bar (a later --from skips ahead, leaving a gap)
		}
	case start.IsZero():
		start = Floor(end.Add(-DefaultDepth[g]), g)
	}
	if !start.Before(end) {
		res.UpToDate = true
		return res, nil
	}
	prog := Progress{Series: series, From: start, To: end}
	var (
		prev int64 = -1 << 62
		acc  strategy.Bars
	)
	if stored && !opt.Full {
		prev = info.Last.Unix()
	}
	page := func(b strategy.Bars) error {
		b = clip(b, start.Unix(), end.Unix(), prev)
		if b.Len() == 0 {
			return nil
		}
		if opt.Full {
			acc = appendBars(acc, b)
		} else if err := store.Append(ctx, series, b, history.AppendOptions{Source: src.Name(), ProviderSymbol: res.ProviderSymbol, FetchedAt: fetchedAt}); err != nil {
			return err
		}
		gapsAcross(&res.Gaps, prev, b.Time, g)
		prev = b.Time[b.Len()-1]
		if res.Added == 0 {
			res.First = time.Unix(b.Time[0], 0).UTC()
		}
		res.Added += b.Len()
		res.Last = time.Unix(prev, 0).UTC()
		res.Pages++
		prog.Bars, prog.Pages, prog.Through = res.Added, res.Pages, res.Last
		if opt.Progress != nil {
			opt.Progress(prog)
		}
		return nil
	}
	if err := src.Bars(ctx, res.ProviderSymbol, g, start, end, page); err != nil {
		return res, err
	}
	if !opt.Full {
		res.UpToDate = res.Added == 0
		return res, nil
	}
	if acc.Len() == 0 {
		res.UpToDate = true
		return res, nil
	}
	// --full: keep the stored bars outside the range, replace the rest.
	if stored {
		old, err := store.Load(series, time.Time{}, time.Time{})
		if err != nil {
			return res, err
		}
		lo, _ := slices.BinarySearch(old.Time, start.Unix())
		hi, _ := slices.BinarySearch(old.Time, end.Unix())
		var merged strategy.Bars // fresh arrays: old's slices share theirs
		for _, part := range []strategy.Bars{old.Slice(0, lo), acc, old.Slice(hi, old.Len())} {
			merged = appendBars(merged, part)
		}
		acc = merged
	}
	if err := store.Write(ctx, series, acc, history.WriteOptions{Replace: true, Source: src.Name(), ProviderSymbol: res.ProviderSymbol, FetchedAt: fetchedAt}); err != nil {
		return res, err
	}
	res.Gaps = history.Gaps(acc.Time, g)
	return res, nil
}

// clip keeps the bars with open time in [lo, hi) after prev: a provider
// may send the still-forming bar or repeat the page's first bar.
func clip(b strategy.Bars, lo, hi, prev int64) strategy.Bars {
	i, j := 0, b.Len()
	for i < j && (b.Time[i] < lo || b.Time[i] <= prev) {
		i++
	}
	for j > i && b.Time[j-1] >= hi {
		j--
	}
	if i == 0 && j == b.Len() {
		return b
	}
	return b.Slice(i, j)
}

// gapsAcross adds the holes in times (and between prev and times[0]) to gs.
func gapsAcross(gs *history.GapStats, prev int64, times []int64, g strategy.Granularity) {
	step := int64(g.Duration() / time.Second)
	for _, t := range times {
		if prev > -1<<61 && t-prev > step {
			gs.Count++
			if miss := time.Duration(t-prev-step) * time.Second; miss > gs.Largest {
				gs.Largest, gs.At = miss, time.Unix(prev+step, 0).UTC()
			}
		}
		prev = t
	}
}

func appendBars(a, b strategy.Bars) strategy.Bars {
	a.Time = append(a.Time, b.Time...)
	a.Open = append(a.Open, b.Open...)
	a.High = append(a.High, b.High...)
	a.Low = append(a.Low, b.Low...)
	a.Close = append(a.Close, b.Close...)
	a.Volume = append(a.Volume, b.Volume...)
	return a
}
