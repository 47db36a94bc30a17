package backtest

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"wicket/strategy/robust"
)

// textTrades is how many trades the text summary lists.
const textTrades = 20

// WriteText writes a readable summary: the run, the metrics in two
// columns, the open position, the first trades and the warnings.
func (r *Result) WriteText(w io.Writer) error {
	m, s := r.Metrics, r.Settings
	var b strings.Builder
	series := r.Series
	if series == "" {
		series = "(unnamed series)"
	}
	fmt.Fprintf(&b, "%s  %s to %s  %d bars (%g per year)\n", series, fmtTime(m.Start), fmtTime(m.End), m.Bars, m.PeriodsPerYear)
	fmt.Fprintf(&b, "capital %s  fee %g bps  slippage %g bps  fill %s", Money(s.Capital), s.FeeBps, s.SlippageBps, s.Fill)
	if len(s.Params) > 0 {
		fmt.Fprintf(&b, "  params %s", paramsText(s.Params))
	}
	b.WriteString("\n\n")

	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	row := func(k1, v1, k2, v2 string) { fmt.Fprintf(tw, "%s\t%s\t\t%s\t%s\n", k1, v1, k2, v2) }
	row("total return", pct(m.TotalReturn), "buy & hold", pct(m.BuyAndHoldReturn))
	row("cagr", pct(Bounded(m.CAGR)), "final equity", Money(m.FinalEquity))
	row("sharpe", num(Bounded(m.Sharpe)), "sortino", num(Bounded(m.Sortino)))
	row("max drawdown", pct(m.MaxDrawdown), "lasting", durationText(m.MaxDrawdownDuration, m.MaxDrawdownBars))
	row("calmar", num(Bounded(m.Calmar)), "exposure", pct(m.Exposure))
	row("trades", fmt.Sprint(m.Trades), "win rate", pct(m.WinRate))
	row("profit factor", num(m.ProfitFactor), "expectancy", moneyText(m.Expectancy))
	costs := m.CostLines() // every cost charged, two to a row
	for k := 0; k < len(costs); k += 2 {
		if k+1 < len(costs) {
			row(costs[k].Name, costs[k].Value, costs[k+1].Name, costs[k+1].Value)
		} else {
			fmt.Fprintf(tw, "%s\t%s\n", costs[k].Name, costs[k].Value)
		}
	}
	tw.Flush()

	if p := r.OpenPosition; p != nil {
		fmt.Fprintf(&b, "\nopen position: %s %s since %s at %s, marked %s, unrealized pnl %s\n",
			p.Side, price(math.Abs(p.Quantity)), fmtTime(p.EntryTime), price(p.EntryPrice), price(p.Mark), Money(p.PnL))
	}

	if len(r.Trades) > 0 {
		b.WriteString("\n")
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		// The exit column appears when a protective order closed a trade.
		exits := slices.ContainsFunc(r.Trades, func(t Trade) bool { return t.Exit != "" })
		head := "side\tentry\tentry price\texit\texit price\tquantity\tpnl\treturn\t"
		if exits {
			head += "by\t"
		}
		fmt.Fprintln(tw, head)
		for i, t := range r.Trades {
			if i == textTrades {
				break
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t", t.Side, shortTime(t.EntryTime), price(t.EntryPrice),
				shortTime(t.ExitTime), price(t.ExitPrice), price(t.Quantity), Money(t.PnL), pct(t.Return))
			if exits {
				fmt.Fprintf(tw, "%s\t", cmp.Or(t.Exit, "signal"))
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
		if shown := min(len(r.Trades), textTrades); shown < m.Trades {
			fmt.Fprintf(&b, "(the first %d of %d closed trades)\n", shown, m.Trades)
		}
	}

	if rb := r.Robustness; rb != nil {
		writeRobustness(&b, rb)
	}
	if r.LookaheadCheck != "" {
		fmt.Fprintf(&b, "\nlookahead check: %s\n", r.LookaheadCheck)
	}
	if len(r.Warnings) > 0 {
		b.WriteString("\nwarnings:\n")
		for _, w := range r.Warnings {
			fmt.Fprintf(&b, "  - %s\n", w)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func pct(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%.2f%%", 100*x)
}

func num(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", x)
}

func moneyText(x float64) string {
	if math.IsNaN(x) {
		return "n/a"
	}
	return Money(x)
}

func durationText(d time.Duration, bars int) string {
	if bars == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f days (%d bars)", d.Hours()/24, bars)
}

func shortTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04") }

func paramsText(p map[string]any) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%v", k, p[k])
	}
	return strings.Join(parts, " ")
}

// writeRobustness is the text of a run's robustness figures.
func writeRobustness(b *strings.Builder, rb *robust.Report) {
	fmt.Fprintf(b, "\nrobustness: psr %s over %.1f years; ", fixed(rb.PSR), rb.Years)
	if rb.MaxTrials == 0 {
		b.WriteString("a Sharpe ratio at or below zero needs no deflating")
	} else {
		fmt.Fprintf(b, "its Sharpe ratio is beyond luck after at most %d trials", rb.MaxTrials)
	}
	if rb.Trials > 0 {
		fmt.Fprintf(b, " (%d trials need %.1f years)", rb.Trials, rb.MinBTLYears)
	}
	b.WriteString("\n")
	for _, mc := range rb.MonteCarlo {
		fmt.Fprintf(b, "  monte carlo %-9s %d paths: final equity p5 %s p50 %s p95 %s  max drawdown p50 %s p95 %s  ruin %s\n",
			mc.Method, mc.Paths, fixed(mc.FinalEquity.P5), fixed(mc.FinalEquity.P50), fixed(mc.FinalEquity.P95),
			pctOf(mc.MaxDrawdown.P50), pctOf(mc.MaxDrawdown.P95), pctOf(mc.ProbabilityOfRuin))
	}
	if rel := rb.Relative; rel != nil {
		fmt.Fprintf(b, "  against %s (%d periods): alpha %s  beta %s  information ratio %s\n", rb.Benchmark, rel.Periods, fixed(rel.Alpha), fixed(rel.Beta), fixed(rel.InformationRatio))
	}
	for _, n := range rb.Notes {
		fmt.Fprintf(b, "  note: %s\n", n)
	}
}

func fixed(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	return strconv.FormatFloat(x, 'f', 3, 64)
}

func pctOf(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return strconv.FormatFloat(x*100, 'f', 1, 64) + "%"
}
