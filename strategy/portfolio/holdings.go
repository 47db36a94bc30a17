package portfolio

import (
	"math"
	"time"
)

// event is a fill or a charge as the per-bar record needs it: its bar
// and asset, the asset's quantity after it, the cash it moved and the
// notional it filled. The run keeps events, not bars, so that its loop
// is the same with the record off.
type event struct {
	bar, asset        int
	qty, flow, traded float64
}

// Holdings is a run's per-bar record (Options.RecordHoldings): at each
// traded calendar bar's close (Time), per asset ([asset][bar]) the
// quantity held (short < 0), its Value at the asset's mark (its last
// close), and its PnL: that value plus the cash its fills, fees, funding
// and borrow moved since the run began, so the assets' PnL plus the
// capital is the equity. Traded is each bar's filled notional (at the
// fill prices, fees left out). Close is each asset's close at the bar,
// NaN where it had none (the buy-and-hold metric's prices).
type Holdings struct {
	Time                   []time.Time
	Qty, Value, PnL, Close [][]float64
	Traded                 []float64
}

// Weight is asset a's value at bar i as a fraction of equity (NaN when
// equity is not above zero).
func (h *Holdings) Weight(a, i int, equity float64) float64 {
	if !(equity > 0) {
		return math.NaN()
	}
	return h.Value[a][i] / equity
}

// holdings replays the run's events over its calendar into its per-bar
// record (nil when not kept): each asset marked at its last close, as the
// run marks it.
func (e *engine) holdings() *Holdings {
	if !e.hold {
		return nil
	}
	m, n := len(e.assets), e.assets[0].Len()
	h := &Holdings{Time: make([]time.Time, 0, n-e.start), Qty: make([][]float64, m), Value: make([][]float64, m), PnL: make([][]float64, m), Close: make([][]float64, m), Traded: make([]float64, 0, n-e.start)}
	for a := range m {
		h.Qty[a], h.Value[a], h.PnL[a] = make([]float64, 0, n-e.start), make([]float64, 0, n-e.start), make([]float64, 0, n-e.start)
		h.Close[a] = make([]float64, 0, n-e.start)
	}
	qty, flow, mark := make([]float64, m), make([]float64, m), make([]float64, m)
	k := 0
	for i := range n {
		traded := 0.0
		for ; k < len(e.events) && e.events[k].bar == i; k++ {
			ev := e.events[k]
			qty[ev.asset], flow[ev.asset] = ev.qty, flow[ev.asset]+ev.flow
			traded += ev.traded
		}
		for a := range m {
			if b := &e.assets[a]; has(b, i) {
				mark[a] = b.Close[i]
			}
		}
		if i < e.start {
			continue
		}
		h.Time = append(h.Time, unixTime(e.assets[0].Time[i]))
		for a := range m {
			v := qty[a] * mark[a]
			h.Qty[a], h.Value[a], h.PnL[a] = append(h.Qty[a], qty[a]), append(h.Value[a], v), append(h.PnL[a], v+flow[a])
			close := math.NaN()
			if b := &e.assets[a]; has(b, i) {
				close = b.Close[i]
			}
			h.Close[a] = append(h.Close[a], close)
		}
		h.Traded = append(h.Traded, traded)
	}
	return h
}
