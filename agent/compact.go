package agent

// Results sized for a context window: run_backtest answers with metrics,
// warnings, settings, the first and last trades and no equity curve unless
// asked, a short text summary, and a resource_link to wicket://runs/{id}
// where the full report is read on demand (runs.go). The hooks into
// tools_research.go are the backtestShape its arguments give and tb.runs.backtest (the
// answer).

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// Trade list bounds of run_backtest's answer.
const (
	defaultAnswerTrades = 10  // first and last trades, 10 in all
	maxAnswerTrades     = 500 // the engine's maximum (backtest.MaxTradesLimit)
)

// backtestShape is how the agent asked the answer to be cut.
type backtestShape struct {
	tradesLimit int  // 0..500, 0 = none
	equity      bool // include the equity curve
	plot        bool
}

// compactBacktest cuts a full backtest report (as the engine encodes it,
// with up to 500 trades and the downsampled curve) to the answer: every
// other key as it is, trades cut to the first and last (limit in all), and
// the equity curve only when asked.
func compactBacktest(full map[string]any, s backtestShape) map[string]any {
	out := make(map[string]any, len(full))
	for k, v := range full {
		out[k] = v
	}
	trades, _ := full["trades"].([]any)
	total := len(trades)
	delete(out, "trades_clamped")
	switch {
	case s.tradesLimit == 0:
		out["trades"] = []any{}
		if total > 0 {
			out["trades_shown"] = fmt.Sprintf("none of %d trades (trades_limit 0); the run's resource lists them all", total)
		}
	case total > s.tradesLimit:
		first := (s.tradesLimit + 1) / 2
		last := s.tradesLimit - first
		cut := append(append([]any{}, trades[:first]...), trades[total-last:]...)
		out["trades"] = cut
		out["trades_shown"] = fmt.Sprintf("the first %d and the last %d of %d trades; the run's resource lists them all", first, last, total)
	default:
		out["trades"] = trades
	}
	if clamped, _ := full["trades_clamped"].(string); clamped != "" && total >= maxAnswerTrades {
		out["trades_total_note"] = "the run closed more than " + fmt.Sprint(maxAnswerTrades) + " trades: the report keeps the first " + fmt.Sprint(maxAnswerTrades)
	}
	if !s.equity && !s.plot {
		if eq, ok := full["equity"].([]any); ok {
			out["equity_points"] = len(eq)
		}
		delete(out, "equity")
	}
	return out
}

// backtestSummary is the text a client that reads only text gets: the
// key figures, and where the rest is.
func backtestSummary(ans map[string]any, uri string) string {
	var b strings.Builder
	series, _ := ans["series"].(string)
	fmt.Fprintf(&b, "Backtest of %s", series)
	if id, _ := ans["run_id"].(string); id != "" {
		fmt.Fprintf(&b, " (run %s)", id)
	}
	b.WriteString(":")
	if m, ok := ans["metrics"].(map[string]any); ok {
		// The figures, then every cost the run charged (the ones beyond fee
		// and slippage are in the metrics only when charged).
		for _, k := range []string{"total_return", "cagr", "sharpe", "sortino", "max_drawdown", "trades", "win_rate", "profit_factor", "exposure", "final_equity", "buy_and_hold_return",
			"fees_paid", "slippage_cost", "funding_paid", "borrow_paid", "liquidations", "volume_capped_fills"} {
			if v, ok := m[k]; ok && v != nil {
				fmt.Fprintf(&b, " %s %s;", k, compactNumber(v))
			}
		}
	}
	if w, _ := ans["warnings"].([]any); len(w) > 0 {
		fmt.Fprintf(&b, " %d warning(s): %v.", len(w), w[0])
		if len(w) > 1 {
			b.WriteString(" …")
		}
	}
	fmt.Fprintf(&b, "\nThe full JSON answer is in structured content; every trade and the whole equity curve are at %s.", uri)
	return b.String()
}

func compactNumber(v any) string {
	if f, ok := v.(float64); ok {
		if a := math.Abs(f); a >= 1e4 && a < 1e21 {
			return strconv.FormatFloat(math.Round(f), 'f', 0, 64) // never 1.234e+06
		}
		return fmt.Sprintf("%.4g", f)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// runLink is the resource_link content for a stored run.
func runLink(id, what string) mcp.Content {
	return mcp.NewResourceLink(runURI(id), "run "+id, "the full "+what+" report: every trade (paged) and the whole equity curve", "application/json")
}
