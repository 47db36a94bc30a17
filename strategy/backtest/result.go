package backtest

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/intrabar"
	"wicket/strategy"
	"wicket/strategy/robust"
)

// Result is a finished backtest. Its JSON is the report an agent or a
// person reads: settings, metrics, the open position, a bounded trade list,
// an equity curve of at most MaxEquityPoints points, and warnings, with
// money as decimal strings. The fields tagged `json:"-"` keep the full run
// in memory for sweeps and walk-forward (every trade, every bar's equity
// and return).
type Result struct {
	Series       string    `json:"series"`
	Settings     Settings  `json:"settings"`
	Metrics      Metrics   `json:"metrics"`
	OpenPosition *Position `json:"open_position"`
	Trades       []Trade   `json:"trades"`
	// TradesClamped says why Trades is shorter than the closed trades (or
	// the limit asked for); empty when it is not.
	TradesClamped string   `json:"trades_clamped,omitempty"`
	Equity        []Point  `json:"equity"`
	Warnings      []string `json:"warnings"`
	// LookaheadCheck is the verdict of the lookahead proof the caller ran
	// over this run's decisions ("passed (36 prefixes: 4 fixed, 32 drawn
	// over the whole span with seed ...)": the seed, drawn at random for
	// the run, names the drawn cuts, see strategy/script DrawnPrefixCuts
	// and Request.ProofSeed); empty when none ran (the in-memory runs of sweeps,
	// which check their winner).
	LookaheadCheck string `json:"lookahead_check,omitempty"`
	// Robustness holds the figures Request.Robustness asked for.
	Robustness *robust.Report `json:"robustness,omitempty"`
	// Breaker is the allowance's breaker that paused the run (no order
	// after it); nil when none tripped or the run had no allowance.
	Breaker *Breaker `json:"breaker,omitempty"`

	AllTrades []Trade   `json:"-"` // every closed round trip
	Curve     Curve     `json:"-"` // equity at every bar's close
	Returns   []float64 `json:"-"` // per-bar returns, see Returns
}

// Settings echo what the run used.
type Settings struct {
	Capital     float64
	FeeBps      float64
	SlippageBps float64
	Fill        Fill
	Intrabar    intrabar.Rule // how protective orders filled inside a bar
	Granularity strategy.Granularity
	Warmup      int
	From, To    time.Time // as requested; zero when open
	Params      map[string]any
	Allowance   *Allowance
	Costs       Costs // beyond fee and slippage; echoed only when any is on
}

// Trade is one closed round trip: from flat (or a flip) to flat (or the
// next flip). Prices are the average fill prices including slippage;
// Quantity is the total quantity entered; PnL is net of all its fees.
type Trade struct {
	Side                string // "long" or "short"
	EntryBar, ExitBar   int
	EntryTime, ExitTime time.Time
	EntryPrice          float64
	ExitPrice           float64
	Quantity            float64
	PnL                 float64
	Return              float64 // PnL / entry notional
	Fees                float64
	// Exit names the protective order that closed the trade
	// (stop_loss, take_profit, trailing_stop); empty when a decision did.
	Exit string
}

// Position is the round trip still open after the last bar, marked at the
// last close: PnL is net of the fees paid so far, before any exit costs.
type Position struct {
	Side       string
	EntryBar   int
	EntryTime  time.Time
	EntryPrice float64
	Quantity   float64 // signed: short < 0
	Mark       float64
	PnL        float64
	Fees       float64
}

// Point is one point of the reported equity curve.
type Point struct {
	Time     time.Time
	Equity   float64
	Drawdown float64 // 1 - equity / running peak
}

func (s *sim) result(cfg Config, g strategy.Granularity) *Result {
	b := &s.bars
	curve := Curve{Time: b.Time, Equity: s.equity}
	returns := s.returns
	m, mo, _, _ := s.metrics(g) // the returns are kept: always ok
	for i := range s.trades {
		t := &s.trades[i]
		t.EntryTime, t.ExitTime = unixTime(b.Time[t.EntryBar]), unixTime(b.Time[t.ExitBar])
	}

	r := &Result{
		Series: b.Series,
		Settings: Settings{
			Capital: s.capital, FeeBps: cfg.FeeBps, SlippageBps: cfg.SlippageBps, Fill: cfg.Fill, Intrabar: cfg.Intrabar,
			Granularity: g, Warmup: cfg.Warmup, From: cfg.From, To: cfg.To, Params: cfg.Params, Allowance: cfg.Allowance,
			Costs: cfg.Costs,
		},
		Metrics:      m,
		OpenPosition: s.openPosition(),
		AllTrades:    s.trades,
		Curve:        curve,
		Returns:      returns,
	}
	r.Trades, r.TradesClamped = clampTrades(s.trades, cfg.TradesLimit)
	if r.Trades == nil {
		r.Trades = []Trade{} // JSON [] rather than null
	}
	r.Equity = Downsample(curve, s.capital, MaxEquityPoints)
	r.Warnings = s.warnings(cfg, g)
	if note := m.BoundNote(); note != "" {
		r.Warnings = append(r.Warnings, note)
	}
	if note := TooGoodNote(m.Sharpe, m.Trades, singleDSR(mo)); note != "" {
		r.Warnings = append(r.Warnings, note)
	}
	if s.allow != nil && s.allow.tripped != nil {
		r.Breaker = s.allow.tripped
		r.Warnings = append(r.Warnings, r.Breaker.warning())
	}
	return r
}

func clampTrades(all []Trade, limit int) ([]Trade, string) {
	note := ""
	switch {
	case limit <= 0:
		limit = DefaultTradesLimit
	case limit > MaxTradesLimit:
		note = fmt.Sprintf("trades_limit %d is above the maximum %d", limit, MaxTradesLimit)
		limit = MaxTradesLimit
	}
	if len(all) <= limit {
		if note != "" {
			note += fmt.Sprintf("; all %d closed trades are listed", len(all))
		}
		return all, note
	}
	if note != "" {
		note += "; "
	}
	note += fmt.Sprintf("showing the first %d of %d closed trades", limit, len(all))
	if limit < MaxTradesLimit {
		note += fmt.Sprintf("; ask for up to %d with trades_limit", MaxTradesLimit)
	}
	return all[:limit], note
}

// TooFewTrades is the number of closed round trips below which a result
// warns that there are too few to judge a strategy by.
const TooFewTrades = 10

func (s *sim) warnings(cfg Config, g strategy.Granularity) []string {
	b := &s.bars
	n := b.Len()
	w := []string{}
	if cfg.Fill == FillClose {
		w = append(w, "fill=close: orders filled at the close of the bar that decided them, which a live strategy cannot do; the results are optimistic")
	}
	if cfg.Warmup >= n {
		w = append(w, fmt.Sprintf("warm-up longer than the range: the strategy needs %d bars before it can decide anything and the range holds %d; widen the range", cfg.Warmup, n))
	}
	step := int64(g.Duration() / time.Second)
	if !cfg.From.IsZero() && b.Time[0]-cfg.From.Unix() >= step {
		w = append(w, fmt.Sprintf("range clipped: from %s was asked for, the data starts at %s", fmtTime(cfg.From), timeString(b.Time[0])))
	}
	if !cfg.To.IsZero() && cfg.To.Unix()-b.Time[n-1] >= step {
		w = append(w, fmt.Sprintf("range clipped: to %s was asked for, the data ends at %s", fmtTime(cfg.To), timeString(b.Time[n-1])))
	}
	switch {
	case !s.entered:
		w = append(w, "the strategy never entered a position: check its entry conditions, its parameters and its warm-up against this range")
	case len(s.trades) < TooFewTrades:
		w = append(w, fmt.Sprintf("too few trades: %d closed round trips are too few to judge a strategy by; widen the range or use a finer granularity", len(s.trades)))
	}
	if s.held.Trip.Active {
		w = append(w, "a position is still open at the end: it counts in final_equity and the curve but not in the trade metrics (see open_position)")
	}
	if s.negCash >= 0 {
		w = append(w, fmt.Sprintf("cash went negative at %s: quantity orders are not limited by cash, so the strategy borrowed", timeString(b.Time[s.negCash])))
	}
	if s.bust >= 0 {
		w = append(w, fmt.Sprintf("equity reached zero at %s: the position was closed there and trading stopped", timeString(b.Time[s.bust])))
	}
	return append(w, s.costWarnings()...)
}

func fmtTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// Downsample reduces a curve to at most maxPoints points for reporting,
// keeping the first and last point and, from each of equal-width buckets
// in between, the lowest and the highest equity in time order, so peaks and
// troughs (and so the drawdowns) survive. Drawdown is measured on the full
// curve, from capital.
func Downsample(c Curve, capital float64, maxPoints int) []Point {
	n := len(c.Equity)
	if n == 0 {
		return []Point{}
	}
	maxPoints = max(maxPoints, 2)
	out := make([]Point, 0, min(n, maxPoints))
	peak := capital
	keep := func(i int) {
		out = append(out, Point{Time: unixTime(c.Time[i]), Equity: c.Equity[i], Drawdown: 1 - c.Equity[i]/peak})
	}
	if n <= maxPoints {
		for i, e := range c.Equity {
			peak = max(peak, e)
			keep(i)
		}
		return out
	}
	// One scan per bucket finds its lowest and highest equity and the
	// running peak at each; peak carries the running peak between buckets.
	peak = max(peak, c.Equity[0])
	keep(0)
	buckets := (maxPoints - 2) / 2
	inner := n - 2
	if buckets == 0 {
		for _, e := range c.Equity[1 : n-1] {
			peak = max(peak, e)
		}
	}
	for k := range buckets {
		lo, hi := 1+k*inner/buckets, 1+(k+1)*inner/buckets
		if lo >= hi {
			continue
		}
		mn, mx := lo, lo
		lowest, highest := c.Equity[lo], c.Equity[lo]
		peakAtMin := max(peak, highest)
		for i := lo + 1; i < hi; i++ {
			e := c.Equity[i]
			if e > highest {
				highest, mx = e, i
			}
			if e < lowest {
				lowest, mn, peakAtMin = e, i, max(peak, highest)
			}
		}
		peakAtMax := max(peak, highest)
		if mn <= mx {
			peak = peakAtMin
			keep(mn)
		}
		if mx != mn {
			peak = peakAtMax
			keep(mx)
		}
		if mx < mn {
			peak = peakAtMin
			keep(mn)
		}
		peak = peakAtMax
	}
	peak = max(peak, c.Equity[n-1])
	keep(n - 1)
	return out
}

// Reporting precision. Money is rounded to cents, prices and quantities to
// 8 decimals, ratios to 6; the rounding is for the report only.
const (
	moneyPlaces = 2
	pricePlaces = 8
	ratioPlaces = 6
)

// Money formats an amount for a report: a decimal string with cents.
func Money(x float64) string { return string(appendMoney(make([]byte, 0, 24), x)) }

func price(x float64) string { return decimal.NewFromFloat(x).Round(pricePlaces).String() }

// Ratio rounds a ratio for a report to 6 decimals; NaN and infinities
// are nil (null in JSON).
func Ratio(x float64) *float64 {
	r, ok := ratioOf(x)
	if !ok {
		return nil
	}
	return &r
}

// ratioOf is Ratio's value, and false where it is nil.
func ratioOf(x float64) (float64, bool) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, false
	}
	r := x
	if scale := math.Pow10(ratioPlaces); math.Abs(x) < 1e15 {
		// Past 1e15 a float64 has no sixth decimal to round (and x*scale
		// could overflow to an infinity JSON cannot hold).
		r = math.Round(x*scale) / scale
	}
	if r == 0 {
		r = 0 // no "-0"
	}
	return r, true
}

func moneyOrNull(x float64) *string {
	if math.IsNaN(x) {
		return nil
	}
	s := Money(x)
	return &s
}

// ReportedMetrics is Metrics as a report writes it: the spec's names,
// ratios rounded as Ratio does (null when undefined), money as decimal
// strings. It is the one declaration of that JSON shape: every reader of
// a report's metrics (the research pool, the ledger, the CLI tables)
// decodes into it rather than declaring its own.
type ReportedMetrics struct {
	TotalReturn     *float64 `json:"total_return"`
	CAGR            *float64 `json:"cagr"`
	Sharpe          *float64 `json:"sharpe"`
	Sortino         *float64 `json:"sortino"`
	MaxDrawdown     *float64 `json:"max_drawdown"`
	MaxDrawdownBars int      `json:"max_drawdown_duration_bars"`
	MaxDrawdownDays *float64 `json:"max_drawdown_duration_days"`
	Calmar          *float64 `json:"calmar"`
	WinRate         *float64 `json:"win_rate"`
	ProfitFactor    *float64 `json:"profit_factor"`
	Expectancy      *string  `json:"expectancy"`
	Trades          int      `json:"trades"`
	Exposure        *float64 `json:"exposure"`
	FeesPaid        string   `json:"fees_paid"`
	SlippageCost    string   `json:"slippage_cost"`
	// The costs beyond fee and slippage, present when the run charged
	// them (Metrics.Charged): absent, a report reads as before they were.
	FundingPaid       *string  `json:"funding_paid,omitempty"`
	BorrowPaid        *string  `json:"borrow_paid,omitempty"`
	Liquidations      *int     `json:"liquidations,omitempty"`
	VolumeCappedFills *int     `json:"volume_capped_fills,omitempty"`
	FinalEquity       string   `json:"final_equity"`
	Bars              int      `json:"bars"`
	Start             string   `json:"start"`
	End               string   `json:"end"`
	PeriodsPerYear    float64  `json:"periods_per_year"`
	BuyAndHoldReturn  *float64 `json:"buy_and_hold_return"`
}

// Reported is m as a report writes it.
func (m Metrics) Reported() ReportedMetrics {
	r := ReportedMetrics{
		TotalReturn: Ratio(m.TotalReturn), CAGR: Ratio(Bounded(m.CAGR)), Sharpe: Ratio(Bounded(m.Sharpe)), Sortino: Ratio(Bounded(m.Sortino)),
		MaxDrawdown: Ratio(m.MaxDrawdown), MaxDrawdownBars: m.MaxDrawdownBars,
		MaxDrawdownDays: Ratio(m.MaxDrawdownDuration.Hours() / 24), Calmar: Ratio(Bounded(m.Calmar)), WinRate: Ratio(m.WinRate),
		ProfitFactor: Ratio(m.ProfitFactor), Expectancy: moneyOrNull(m.Expectancy), Trades: m.Trades, Exposure: Ratio(m.Exposure),
		FeesPaid: Money(m.FeesPaid), SlippageCost: Money(m.SlippageCost), FinalEquity: Money(m.FinalEquity), Bars: m.Bars,
		Start: fmtTime(m.Start), End: fmtTime(m.End), PeriodsPerYear: m.PeriodsPerYear, BuyAndHoldReturn: Ratio(m.BuyAndHoldReturn),
	}
	if m.Charged&ChargedFunding != 0 {
		r.FundingPaid = moneyOrNull(m.FundingPaid)
	}
	if m.Charged&ChargedBorrow != 0 {
		r.BorrowPaid = moneyOrNull(m.BorrowPaid)
	}
	if m.Charged&ChargedMargin != 0 {
		r.Liquidations = &m.Liquidations
	}
	if m.Charged&ChargedVolume != 0 {
		r.VolumeCappedFills = &m.VolumeCappedFills
	}
	return r
}

// MarshalJSON writes the metrics with the spec's names (ReportedMetrics).
func (m Metrics) MarshalJSON() ([]byte, error) { return marshalMetrics(m) }

// MarshalJSON writes a trade with money and prices as decimal strings.
func (t Trade) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Side       string   `json:"side"`
		EntryTime  string   `json:"entry_time"`
		EntryPrice string   `json:"entry_price"`
		ExitTime   string   `json:"exit_time"`
		ExitPrice  string   `json:"exit_price"`
		Quantity   string   `json:"quantity"`
		PnL        string   `json:"pnl"`
		Return     *float64 `json:"return"`
		Fees       string   `json:"fees"`
		Bars       int      `json:"bars"`
		Exit       string   `json:"exit,omitempty"`
	}{
		t.Side, fmtTime(t.EntryTime), price(t.EntryPrice), fmtTime(t.ExitTime), price(t.ExitPrice),
		price(t.Quantity), Money(t.PnL), Ratio(t.Return), Money(t.Fees), t.ExitBar - t.EntryBar, t.Exit,
	})
}

// MarshalJSON writes the open position with money and prices as strings.
func (p Position) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Side       string `json:"side"`
		EntryTime  string `json:"entry_time"`
		EntryPrice string `json:"entry_price"`
		Quantity   string `json:"quantity"`
		Mark       string `json:"mark"`
		PnL        string `json:"unrealized_pnl"`
		Fees       string `json:"fees"`
	}{p.Side, fmtTime(p.EntryTime), price(p.EntryPrice), price(p.Quantity), price(p.Mark), Money(p.PnL), Money(p.Fees)})
}

// MarshalJSON writes a curve point.
func (p Point) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Time     string   `json:"time"`
		Equity   string   `json:"equity"`
		Drawdown *float64 `json:"drawdown"`
	}{fmtTime(p.Time), Money(p.Equity), Ratio(p.Drawdown)})
}

// MarshalJSON writes the settings.
func (s Settings) MarshalJSON() ([]byte, error) {
	var from, to *string
	if !s.From.IsZero() {
		f := fmtTime(s.From)
		from = &f
	}
	if !s.To.IsZero() {
		t := fmtTime(s.To)
		to = &t
	}
	return json.Marshal(struct {
		Capital     string         `json:"capital"`
		FeeBps      float64        `json:"fee_bps"`
		SlippageBps float64        `json:"slippage_bps"`
		Fill        string         `json:"fill"`
		Intrabar    string         `json:"intrabar,omitempty"` // absent: path, the default
		Granularity string         `json:"granularity"`
		Warmup      int            `json:"warmup"`
		From        *string        `json:"from"`
		To          *string        `json:"to"`
		Params      map[string]any `json:"params,omitempty"`
		Allowance   *Allowance     `json:"allowance,omitempty"`
		Costs       *costsEcho     `json:"costs,omitempty"`
	}{Money(s.Capital), s.FeeBps, s.SlippageBps, s.Fill.String(), intrabarName(s.Intrabar), string(s.Granularity), s.Warmup, from, to, s.Params, s.Allowance, s.Costs.echo()})
}

// costsEcho is a run's costs as its settings report them.
type costsEcho struct {
	Funding           bool     `json:"funding,omitempty"`
	Settlements       *int     `json:"funding_settlements,omitempty"` // the rates the run was given
	BorrowRate        *float64 `json:"borrow_rate,omitempty"`
	Leverage          *float64 `json:"leverage,omitempty"`
	MaintenanceMargin *float64 `json:"maintenance_margin,omitempty"`
	MaxVolumePct      *float64 `json:"max_volume_pct,omitempty"`
	VolumeCap         string   `json:"volume_cap,omitempty"`
}

// CostLine is one cost a run charged, as a summary shows it.
type CostLine struct{ Name, Value string }

// CostLines are every cost the run charged, in the order the metrics name
// them: fees and slippage always, then funding, borrow, liquidations and
// volume-capped fills when the run charged them (Metrics.Charged), so a
// summary that shows these shows every cost (issue 44 item 19).
func (m Metrics) CostLines() []CostLine {
	out := []CostLine{{"fees paid", Money(m.FeesPaid)}, {"slippage cost", Money(m.SlippageCost)}}
	if m.Charged&ChargedFunding != 0 {
		out = append(out, CostLine{"funding paid", moneyText(m.FundingPaid)})
	}
	if m.Charged&ChargedBorrow != 0 {
		out = append(out, CostLine{"borrow paid", moneyText(m.BorrowPaid)})
	}
	if m.Charged&ChargedMargin != 0 {
		out = append(out, CostLine{"liquidations", strconv.Itoa(m.Liquidations)})
	}
	if m.Charged&ChargedVolume != 0 {
		out = append(out, CostLine{"volume-capped fills", strconv.Itoa(m.VolumeCappedFills)})
	}
	return out
}

// echo is c as settings report it; nil when no cost is on.
func (c Costs) echo() *costsEcho {
	k := c.charged()
	if k == 0 && c.VolumeCap != VolumeOff {
		return nil
	}
	e := &costsEcho{Funding: c.Funding}
	if c.VolumeCap == VolumeOff {
		e.VolumeCap = "off" // asked for: the settings say so
	}
	if c.Funding {
		n := len(c.FundingRates)
		e.Settlements = &n
	}
	if k&ChargedBorrow != 0 {
		e.BorrowRate = &c.BorrowRate
	}
	if k&ChargedMargin != 0 {
		e.Leverage, e.MaintenanceMargin = &c.Leverage, &c.MaintenanceMargin
	}
	if k&ChargedVolume != 0 {
		e.MaxVolumePct, e.VolumeCap = &c.MaxVolumePct, c.VolumeCap.String()
	}
	return e
}

// intrabarName is a rule's name in a result's settings, "" for the default.
func intrabarName(r intrabar.Rule) string {
	if r == intrabar.Path {
		return ""
	}
	return r.String()
}
