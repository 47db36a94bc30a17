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
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"wicket/node"
	"wicket/strategy/templates"
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

// Node snapshots sized for a context window (issue 44, item 16): the
// default shows the newest defaultSnapshotEvents events, an accepted
// order's event carries only what its other fields do not already say,
// and the text is a short summary instead of the JSON again.
const defaultSnapshotEvents = 10

// compactSnapshot renders ans (the snapshot answer) as the JSON object
// the tool returns, without what it would say twice: each order_accepted
// event's embedded order keeps only the fields the event does not repeat
// (type, prices, trail, group, leg, time in force), and a venue's orders
// leave out their venue, a zero filled and an updated equal to created.
func compactSnapshot(ans any) (map[string]any, error) {
	b, err := json.Marshal(ans)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	venues, _ := m["venues"].([]any)
	for _, v := range venues {
		vm, _ := v.(map[string]any)
		for _, list := range []string{"open_orders", "external_orders"} {
			orders, _ := vm[list].([]any)
			for _, o := range orders {
				om, _ := o.(map[string]any)
				for k, val := range om {
					if k == "venue" && val == vm["name"] || k == "filled" && val == "0" || k == "updated" && val == om["created"] {
						delete(om, k)
					}
				}
			}
		}
	}
	events, _ := m["events"].([]any)
	for _, e := range events {
		ev, _ := e.(map[string]any)
		o, _ := ev["order"].(map[string]any)
		if o == nil {
			continue
		}
		for k, v := range o {
			if k == "order_id" || k == "filled" && v == "0" || k == "status" && v == string(node.OrderOpen) ||
				(k == "created" || k == "updated") && v == ev["time"] || ev[k] == v {
				delete(o, k)
			}
		}
	}
	return m, nil
}

// snapshotSummary is node_snapshot's text: state, and per venue its
// standing, money, positions (the unprotected named) and orders.
func snapshotSummary(s *node.Snapshot, deployments int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Node at %s: trading %s; %d venue(s)", s.Time.Format(time.RFC3339), s.TradingState, len(s.Venues))
	if deployments > 0 {
		fmt.Fprintf(&b, ", %d deployment(s)", deployments)
	}
	b.WriteString(".")
	for _, v := range s.Venues {
		armed := "disarmed"
		if v.Armed {
			armed = "armed"
		}
		fmt.Fprintf(&b, "\n%s (%s, %s, %s): cash %s, equity %s %s; %d position(s), %d open order(s)",
			v.Name, v.Kind, v.Environment, armed, v.Cash, v.Equity, v.Currency, len(v.Positions), len(v.OpenOrders))
		if v.Environment == "live" {
			b.WriteString(" — real money")
		}
		var bare []string
		for _, p := range v.Positions {
			if p.Unprotected {
				bare = append(bare, p.Symbol)
			}
		}
		if len(bare) > 0 {
			fmt.Fprintf(&b, "; UNPROTECTED: %s", strings.Join(bare, ", "))
		}
		b.WriteString(".")
	}
	fmt.Fprintf(&b, "\n%d recent event(s). The full JSON answer is in structured content.", len(s.Events))
	return b.String()
}

// templatesListed is list_templates' list: every template with its
// summary and knobs, each knob without its doc (one template's answer,
// with name, has the docs and the source).
func templatesListed(list []templates.Template) []templates.Template {
	out := make([]templates.Template, len(list))
	for i, t := range list {
		t.Params = slices.Clone(t.Params)
		for k := range t.Params {
			t.Params[k].Doc = ""
		}
		out[i] = t
	}
	return out
}

// templatesSummary is list_templates' text: one line per template.
func templatesSummary(list []templates.Template) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d strategy templates (knobs in structured content; list_templates with name gives one's source):", len(list))
	for _, t := range list {
		summary, _, _ := strings.Cut(t.Summary, ": ")
		fmt.Fprintf(&b, "\n- %s (%s): %s", t.Name, t.Style, summary)
	}
	return b.String()
}
