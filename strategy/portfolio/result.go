package portfolio

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/shopspring/decimal"

	"wicket/strategy"
	"wicket/strategy/backtest"
)

// Result is a finished portfolio backtest. Its JSON is the report: the
// universe and schedule, the settings and metrics in the single-series
// report's shape (backtest.Settings, backtest.ReportedMetrics), each
// asset's holding and costs, a bounded trade list naming each trade's
// asset, a bounded equity curve and warnings; money is decimal strings.
type Result struct {
	// Series is the universe's label (its series, comma-separated), under
	// which the ledger records the run.
	Series         string            `json:"series"`
	Universe       []string          `json:"universe"`
	Rebalance      string            `json:"rebalance"`
	Rebalances     int               `json:"rebalances"`
	Settings       backtest.Settings `json:"settings"`
	Metrics        backtest.Metrics  `json:"metrics"`
	Assets         []Asset           `json:"assets"`
	Trades         []Trade           `json:"trades"`
	TradesClamped  string            `json:"trades_clamped,omitempty"`
	Equity         []backtest.Point  `json:"equity"`
	Warnings       []string          `json:"warnings"`
	LookaheadCheck string            `json:"lookahead_check,omitempty"`

	AllTrades []Trade        `json:"-"`
	Curve     backtest.Curve `json:"-"` // equity at every calendar bar's close
	// Fills are every fill of the run, in order (Options.RecordFills).
	Fills []Fill `json:"-"`
	// Holdings is the per-bar record (Options.RecordHoldings), nil when
	// not asked for.
	Holdings *Holdings `json:"-"`
}

// Fill is one fill of a run: the asset, its bar's time, the signed
// quantity (buy > 0), the price with slippage and the fee.
type Fill struct {
	Series     string
	Time       time.Time
	Qty, Price float64
	Fee        float64
}

// Asset is one asset of the portfolio at the end of the run.
type Asset struct {
	Series string
	Bars   int     // the calendar bars at which it had a bar
	Trades int     // closed round trips
	Fees   float64 // money
	// Quantity is the holding after the last bar (short < 0), Value its
	// worth at its last close and Weight that as a fraction of equity.
	Quantity, Mark, Value, Weight float64
}

// MarshalJSON writes money and quantities as decimal strings.
func (a Asset) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Series   string   `json:"series"`
		Bars     int      `json:"bars"`
		Trades   int      `json:"trades"`
		Fees     string   `json:"fees"`
		Quantity string   `json:"quantity"`
		Mark     string   `json:"mark"`
		Value    string   `json:"value"`
		Weight   *float64 `json:"weight"`
	}{a.Series, a.Bars, a.Trades, backtest.Money(a.Fees), decimalText(a.Quantity, 8), decimalText(a.Mark, 8), backtest.Money(a.Value), backtest.Ratio(a.Weight)})
}

func decimalText(x float64, places int32) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "0"
	}
	return decimal.NewFromFloat(x).Round(places).String()
}

// Trade is a closed round trip of one asset.
type Trade struct {
	Series string
	backtest.Trade
}

// MarshalJSON is the backtest's trade with its asset first.
func (t Trade) MarshalJSON() ([]byte, error) {
	inner, err := json.Marshal(t.Trade)
	if err != nil {
		return nil, err
	}
	name, _ := json.Marshal(t.Series)
	out := append([]byte(`{"series":`), name...)
	if len(inner) > 2 {
		out = append(out, ',')
	}
	return append(out, inner[1:]...), nil
}

// result assembles the Result of a finished run.
func (e *engine) result(g strategy.Granularity, equity []float64, rebalances, exposed int) *Result {
	cal := e.assets[0]
	n := cal.Len() - e.start // the traded bars, from Options.TradeFrom
	equity = equity[e.start:]
	curve := backtest.Curve{Time: cal.Time[e.start:], Equity: equity}
	m := backtest.EquityMetrics(curve, nil, e.capital, g.PeriodsPerYear(), g.Duration())
	backtest.FillTradeMetrics(&m, e.pnls)
	m.Exposure = float64(exposed) / float64(n)
	m.FeesPaid, m.SlippageCost = e.acct.Fees, e.acct.Slipped
	m.Charged, m.FundingPaid, m.BorrowPaid = e.charged, e.fundPaid, e.borrowPaid
	m.VolumeCappedFills = e.capped
	// Buy and hold: the universe held in equal parts, each asset from
	// its first close to its last.
	bh, held := 0.0, 0
	assets := make([]Asset, len(e.assets))
	final := equity[n-1]
	for a := range e.assets {
		b := &e.assets[a]
		first, last, bars := math.NaN(), math.NaN(), 0
		for i := e.start; i < b.Len(); i++ {
			if has(b, i) {
				bars++
				if math.IsNaN(first) {
					first = b.Close[i]
				}
				last = b.Close[i]
			}
		}
		if bars > 0 {
			bh += last/first - 1
			held++
		}
		v := e.pos[a].Qty * e.mark[a]
		wt := math.NaN()
		if final > 0 {
			wt = v / final
		}
		assets[a] = Asset{Series: b.Series, Bars: bars, Trades: e.assetTrades[a], Fees: e.assetFees[a], Quantity: e.pos[a].Qty, Mark: e.mark[a], Value: v, Weight: wt}
	}
	m.BuyAndHoldReturn = math.NaN()
	if held > 0 {
		m.BuyAndHoldReturn = bh / float64(held)
	}
	cfg := e.cfg
	r := &Result{
		Series: Label(e.assets), Universe: names(e.assets), Rebalance: e.reb.Text, Rebalances: rebalances,
		Settings: backtest.Settings{Capital: e.capital, FeeBps: cfg.FeeBps, SlippageBps: cfg.SlippageBps, Fill: cfg.Fill, Intrabar: cfg.Intrabar,
			Granularity: g, Warmup: cfg.Warmup, From: cfg.From, To: cfg.To, Params: cfg.Params, Costs: cfg.Costs},
		Metrics: m, Assets: assets, AllTrades: e.trades, Curve: curve, Fills: e.fills, Holdings: e.holdings(),
		Equity: backtest.Downsample(curve, e.capital, backtest.MaxEquityPoints),
	}
	r.Trades, r.TradesClamped = clampTrades(e.trades, cfg.TradesLimit)
	r.Warnings = e.warnings(cfg, cal.Len())
	return r
}

func clampTrades(all []Trade, limit int) ([]Trade, string) {
	if limit <= 0 {
		limit = backtest.DefaultTradesLimit
	}
	note := ""
	if limit > backtest.MaxTradesLimit {
		note = fmt.Sprintf("trades_limit %d is above the maximum %d; ", limit, backtest.MaxTradesLimit)
		limit = backtest.MaxTradesLimit
	}
	if len(all) <= limit {
		if all == nil {
			all = []Trade{}
		}
		return all, strings.TrimSuffix(note, "; ")
	}
	return all[:limit], note + fmt.Sprintf("showing the first %d of %d closed trades", limit, len(all))
}

func (e *engine) warnings(cfg backtest.Config, n int) []string {
	w := []string{}
	cal := e.assets[0]
	if cfg.Fill == backtest.FillClose {
		w = append(w, "fill=close: orders filled at the close of the bar that decided them, which a live strategy cannot do; the results are optimistic")
	}
	if cfg.Warmup >= n {
		w = append(w, fmt.Sprintf("warm-up longer than the range: the strategy needs %d bars before it can decide anything and the range holds %d; widen the range", cfg.Warmup, n))
	}
	if e.clamped > 0 {
		w = append(w, fmt.Sprintf("weights summed to more than 1 (of equity, in absolute value) at %d bar(s), first at %s: they were scaled down to sum to 1", e.clamped, timeString(cal.Time[e.clampedAt])))
	}
	switch {
	case !e.entered:
		w = append(w, "the strategy never held an asset: check its weights, its parameters and its warm-up against this range")
	case len(e.pnls) < backtest.TooFewTrades:
		w = append(w, fmt.Sprintf("too few trades: %d closed round trips are too few to judge a strategy by; widen the range", len(e.pnls)))
	}
	var held []string
	for a, q := range e.quantities() {
		if q != 0 {
			held = append(held, e.assets[a].Series)
		}
	}
	if len(held) > 0 {
		w = append(w, fmt.Sprintf("positions still open at the end (%s): they count in final_equity and the curve but not in the trade metrics (see assets)", strings.Join(held, ", ")))
	}
	if e.negCash >= 0 {
		w = append(w, fmt.Sprintf("cash went negative at %s: targets are sized at the decision's close and fill at the next open, so a rise between them borrowed", timeString(cal.Time[e.negCash])))
	}
	if e.bust >= 0 {
		w = append(w, fmt.Sprintf("equity reached zero at %s: every position was closed there and trading stopped", timeString(cal.Time[e.bust])))
	}
	w = append(w, e.volumeWarnings()...)
	return w
}

// WriteText writes a readable summary: the single-series report's
// header and metrics, the assets, the first trades and the warnings.
func (r *Result) WriteText(w io.Writer) error {
	var b strings.Builder
	head := &backtest.Result{Series: "portfolio " + r.Series, Settings: r.Settings, Metrics: r.Metrics}
	if err := head.WriteText(&b); err != nil {
		return err
	}
	fmt.Fprintf(&b, "\nrebalance %s (%d rebalances)\n", r.Rebalance, r.Rebalances)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "asset\tbars\ttrades\tfees\tquantity\tvalue\tweight\t\n")
	for _, a := range r.Assets {
		wt := "-"
		if x := backtest.Ratio(a.Weight); x != nil {
			wt = fmt.Sprintf("%.2f%%", *x*100)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t\n", a.Series, a.Bars, a.Trades, backtest.Money(a.Fees), decimalText(a.Quantity, 8), backtest.Money(a.Value), wt)
	}
	tw.Flush()
	if len(r.Trades) > 0 {
		b.WriteString("\n")
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "asset\tside\tentry\texit\tquantity\tpnl\t\n")
		for k, t := range r.Trades {
			if k == 20 {
				fmt.Fprintf(tw, "... %d more (see --json)\t\t\t\t\t\t\n", len(r.Trades)-k)
				break
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", t.Series, t.Side, t.EntryTime.Format("2006-01-02 15:04"), t.ExitTime.Format("2006-01-02 15:04"), decimalText(t.Quantity, 8), backtest.Money(t.PnL))
		}
		tw.Flush()
	}
	if r.LookaheadCheck != "" {
		fmt.Fprintf(&b, "\nlookahead check: %s\n", r.LookaheadCheck)
	}
	for _, x := range r.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", x)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Report renders a result as a worker answers it: the JSON and the text.
func Report(r *Result) (backtest.Response, error) {
	js, err := json.Marshal(r)
	if err != nil {
		return backtest.Response{}, fmt.Errorf("portfolio: encode result: %w", err)
	}
	var text strings.Builder
	if err := r.WriteText(&text); err != nil {
		return backtest.Response{}, err
	}
	return backtest.Response{Result: js, Text: text.String()}, nil
}

// volumeWarnings are the volume cap's warnings: fills it capped, orders
// above it when it was off, and assets it could not cap for want of
// volume.
func (e *engine) volumeWarnings() []string {
	var w []string
	largest := ""
	if e.maxAt >= 0 {
		largest = fmt.Sprintf("; the largest order asked for %s its bar's volume (%s at %s)", fmtShare(e.maxPart), e.assets[e.maxAsset].Series, timeString(e.assets[e.maxAsset].Time[e.maxAt]))
	}
	switch {
	case e.capped > 0:
		rest := "carried to the asset's next bars"
		if e.volDrop {
			rest = "dropped"
		}
		w = append(w, fmt.Sprintf("volume cap: %d fills were capped at %v%% of their bar's volume and the rest %s (%d orders exceeded the cap%s); the strategy trades more than the market it models can absorb", e.capped, e.volPct*100, rest, e.over, largest))
	case e.volOff && e.over > 0:
		w = append(w, fmt.Sprintf("volume cap off: %d orders took more than %v%% of their bar's volume%s; the fills assume a market that absorbs them (drop volume_cap off to cap them)", e.over, float64(backtest.DefaultMaxVolumePct), largest))
	}
	if e.volPct > 0 || e.volOff {
		var none []string
		for a, nv := range e.noVol {
			if nv && e.assetTrades[a]+boolInt(e.pos[a].Qty != 0) > 0 {
				none = append(none, e.assets[a].Series)
			}
		}
		if len(none) > 0 {
			w = append(w, fmt.Sprintf("volume cap: %s has no volume (0 on every bar), so its fills were not capped; nothing says the market could absorb them", strings.Join(none, ", ")))
		}
	}
	return w
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// fmtShare is a share of a bar's volume: a percent below 10x, a multiple
// above.
func fmtShare(p float64) string {
	if p >= 10 {
		return fmt.Sprintf("%.0fx", p)
	}
	return fmt.Sprintf("%.3g%% of", p*100)
}
