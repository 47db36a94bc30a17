package research

import (
	"math"
	"time"

	"wicket/strategy/backtest"
	"wicket/strategy/worker"
)

// Purged, embargoed walk-forward (López de Prado, "Advances in Financial
// Machine Learning", 2018, chapter 7, carried over to walk-forward).
//
// Every window's in-sample bars come before its out-of-sample window, so
// the only training bars whose labels can reach into that test fold are
// the last ones: a position opened there is held, and its indicators'
// returns are correlated, into the test. The purge leaves the Purge bars
// before each out-of-sample window out of that window's in-sample sweep:
// the sweep runs over [isLo, oosLo−Purge), and the window reports the
// purged bars. The out-of-sample window itself does not move.
//
// The embargo is the cut after a test fold. A later window's in-sample
// bars hold the earlier out-of-sample windows (rolling windows overlap,
// anchored ones grow), and the bars just after a test fold carry its
// outcome through serial correlation; so the Embargo bars after every
// earlier out-of-sample window are left out of each later window's
// in-sample ranking. The sweep still runs over the contiguous in-sample
// bars (indicators need them), and each combination's rank score, return
// statistics (its deflated Sharpe ratio) and PBO blocks are computed
// from its returns on the kept bars only, compounded as one curve of
// that many bars. The in-sample metrics a window reports stay those of
// the whole contiguous run; its in-sample score is the embargoed one.
// An embargo needs a return-based rank metric: profit_factor counts
// trades, which cannot leave bars out, and is refused.
//
// Both are lengths (a number of bars or a duration, as in_sample is);
// both default to none, since a backtest's in-sample run reads no bar
// after its window (positions are valued at its last bar) and so leaks
// only through serial correlation, which the caller sizes.

// ValidationHelp says in a sentence what a walk-forward's purge and
// embargo do, for the commands' and tools' help.
const ValidationHelp = "--purge LEN leaves the LEN bars before each out-of-sample window out of that window's in-sample sweep " +
	"(a position or label held into the test fold); --embargo LEN leaves the LEN bars after each out-of-sample window out of " +
	"every later window's in-sample ranking (ranked by the returns of the bars kept; profit_factor is refused). LEN is bars " +
	"or a duration; both are none by default, since an in-sample run reads no bar after its window."

// validationBars converts req's purge and embargo to bars of length bar,
// refusing a length given but shorter than one bar.
func validationBars(req WalkForwardRequest, bar time.Duration) (purge, embargo int, err error) {
	purge, embargo = req.Purge.barsOf(bar), req.Embargo.barsOf(bar)
	for _, c := range []struct {
		name string
		l    Length
		bars int
	}{{"purge", req.Purge, purge}, {"embargo", req.Embargo, embargo}} {
		if !c.l.IsZero() && c.bars < 1 {
			return 0, 0, errorf(KindInvalid, "%s %s is shorter than one bar of %s", c.name, c.l, bar)
		}
	}
	return purge, embargo, nil
}

// minTrainBars is the fewest in-sample bars a purge or an embargo may
// leave a window to rank on.
const minTrainBars = 2

// purgeWindows ends each window's in-sample bars purge bars before its
// out-of-sample window, refusing a purge that leaves a window fewer than
// minTrainBars in-sample bars.
func purgeWindows(wins []window, purge int) error {
	for k := range wins {
		w := &wins[k]
		if w.oosLo-purge-w.isLo < minTrainBars {
			return errorf(KindInvalid, "purge of %d bars is not shorter than window %d's in-sample window of %d bars: it leaves fewer than %d bars to train on; use a shorter purge, a longer in_sample or fewer windows",
				purge, k+1, w.oosLo-w.isLo, minTrainBars)
		}
		w.isHi = w.oosLo - purge
	}
	return nil
}

// embargoed returns the bars of window k's in-sample range that the
// embargo leaves out of its ranking: the embargo bars after each earlier
// out-of-sample window, as half-open [lo, hi) ranges in order, merged.
func embargoed(wins []window, k, embargo int) [][2]int {
	if embargo <= 0 {
		return nil
	}
	w := wins[k]
	var out [][2]int
	for _, prev := range wins[:k] {
		lo, hi := max(prev.oosHi, w.isLo), min(prev.oosHi+embargo, w.isHi)
		if lo >= hi {
			continue
		}
		if n := len(out); n > 0 && out[n-1][1] >= lo {
			out[n-1][1] = max(out[n-1][1], hi)
			continue
		}
		out = append(out, [2]int{lo, hi})
	}
	return out
}

// checkEmbargo refuses an embargo that cuts into some window when the
// rank metric counts trades, or that leaves a window fewer than
// minTrainBars bars to rank on.
func checkEmbargo(wins []window, embargo int, rankBy string) error {
	for k, w := range wins {
		cut := 0
		for _, r := range embargoed(wins, k, embargo) {
			cut += r[1] - r[0]
		}
		if cut == 0 {
			continue
		}
		if rankBy == RankProfitFactor {
			return errorf(KindInvalid, "an embargo leaves bars out of the in-sample ranking, and profit_factor counts whole trades, which cannot leave bars out: rank by a return metric (sharpe, cagr, calmar, total_return, max_drawdown) or drop the embargo")
		}
		if w.isHi-w.isLo-cut < minTrainBars {
			return errorf(KindInvalid, "embargo of %d bars leaves window %d fewer than %d of its %d in-sample bars to rank on; use a shorter embargo or longer windows",
				embargo, k+1, minTrainBars, w.isHi-w.isLo)
		}
	}
	return nil
}

// keepMask is which of window k's in-sample bars its ranking keeps (nil:
// all of them).
func keepMask(wins []window, k, embargo int) []bool {
	cuts := embargoed(wins, k, embargo)
	if len(cuts) == 0 {
		return nil
	}
	w := wins[k]
	keep := make([]bool, w.isHi-w.isLo)
	for i := range keep {
		keep[i] = true
	}
	for _, c := range cuts {
		for i := c[0]; i < c[1]; i++ {
			keep[i-w.isLo] = false
		}
	}
	return keep
}

// rescorer recomputes in-sample trials' rank scores, return statistics
// and PBO blocks from their returns on the kept bars.
type rescorer struct {
	capital        float64
	periodsPerYear float64
	bar            time.Duration
	blocks         int
}

// rescore replaces t's scores, statistics and blocks by those of its
// returns where keep is true, compounded as one curve of consecutive
// bars, and drops its returns. Trade-based scores (profit factor, win
// rate, exposure) become undefined.
func (r rescorer) rescore(t *worker.Trial, keep []bool) error {
	if t == nil || t.Error != "" {
		return nil
	}
	if len(t.Returns) != len(keep) {
		return errorf(KindUnavailable, "an in-sample run answered %d returns for %d bars", len(t.Returns), len(keep))
	}
	kept := make([]float64, 0, len(keep))
	for i, on := range keep {
		if on {
			kept = append(kept, t.Returns[i])
		}
	}
	curve := backtest.Curve{Time: make([]int64, len(kept)), Equity: make([]float64, len(kept))}
	e, step := r.capital, int64(r.bar/time.Second)
	for i, x := range kept {
		e *= 1 + x
		curve.Time[i], curve.Equity[i] = int64(i)*step, e
	}
	m := backtest.EquityMetrics(curve, kept, r.capital, r.periodsPerYear, r.bar)
	nan := worker.Num(math.NaN())
	t.Scores = worker.Scores{
		Sharpe: worker.Num(m.Sharpe), CAGR: worker.Num(m.CAGR), Calmar: worker.Num(m.Calmar), TotalReturn: worker.Num(m.TotalReturn),
		MaxDrawdown: worker.Num(m.MaxDrawdown), Sortino: worker.Num(m.Sortino), ProfitFactor: nan, WinRate: nan, Exposure: nan,
	}
	t.Stats = worker.StatsOf(backtest.MomentsOf(kept))
	t.Blocks = nil
	if r.blocks > 0 {
		t.Blocks = worker.BlockStats(kept, r.blocks)
	}
	t.Returns = nil
	return nil
}

// validationSpans sets res's purge and embargo figures and each finished
// window's purged and embargoed spans.
func (s wfSeries) validationSpans(wins []window, purge, embargo int, res *WalkForwardResult) {
	res.Settings.PurgeBars, res.Settings.EmbargoBars = &purge, &embargo
	for k := range res.Windows {
		w := wins[k]
		if w.isHi < w.oosLo {
			sp := s.span(w.isHi, w.oosLo)
			res.Windows[k].Purged = &sp
		}
		for _, c := range embargoed(wins, k, embargo) {
			res.Windows[k].Embargoed = append(res.Windows[k].Embargoed, s.span(c[0], c[1]))
		}
	}
}
