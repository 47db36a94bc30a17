package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"wicket/strategy/ledger"
	"wicket/strategy/research"
)

// Ledger is what research_history reads: the project's research ledger
// (*ledger.Ledger).
type Ledger interface {
	Query(ctx context.Context, f ledger.Filter) ([]ledger.Row, int, error)
}

// errNoLedger is research_history's answer without a project.
var errNoLedger = errors.New("no research ledger here: it lives in a project (settings/state/research.db) and this server has none; " +
	"the operator starts `wicket mcp` inside one (or with --project DIR). Research sent to a data service (--addr) is in that service's project, where `wicket research ledger` lists it")

// historyArgs are research_history's arguments.
type historyArgs struct {
	Strategy string `json:"strategy" desc:"only this strategy's trials (any version)"`
	Series   string `json:"series" desc:"only trials on this SYMBOL@GRANULARITY"`
	Kind     string `json:"kind" arg:"enum=$ledgerKinds"`
	RunID    string `json:"run_id" desc:"only this run's trials"`
	Since    string `json:"since" desc:"2h, 7d, an RFC3339 time or a date"`
	Full     bool   `json:"full" arg:"default=false" desc:"every field, not headlines"`
	Limit    int    `json:"limit" arg:"default=$defaultHistoryLimit,min=1,max=$maxListLimit,clamp" desc:"max trials (the newest)"`
	Before   int    `json:"before" arg:"min=1" desc:"trials older than this seq (next_before)"`
}

// defaultHistoryLimit keeps research_history's default answer under 8 KB
// (a summary row is about 1 KB): older trials are a page away (before),
// and a larger limit is there to ask for.
const defaultHistoryLimit = 5

func (tb *toolbox) historyTools() []*toolSpec {
	return []*toolSpec{{
		Name: "research_history", Title: "Research ledger history", Ring: ringResearch,
		Hints:       hints{ReadOnly: true, Idempotent: true, OpenWorld: flag(false)},
		Description: "Lists the research ledger's trials of every kind, newest last: params, costs, metrics, run id.",
		Params:      paramsOf[historyArgs](),
		Output:      historySchema,
		Handle:      tb.researchHistory,
	}}
}

func (tb *toolbox) researchHistory(ctx context.Context, c *call) *result {
	if tb.Ledger == nil {
		return failErr(errNoLedger)
	}
	var in historyArgs
	clamped, err := decodeArgs(c.args, &in)
	if err != nil {
		return failErr(err)
	}
	if in.Kind != "" && !validKind(in.Kind) {
		return fail("kind %q is not one of %s", in.Kind, strings.Join(ledger.Kinds, ", "))
	}
	f := ledger.Filter{Strategy: in.Strategy, Series: in.Series, Kind: in.Kind, RunID: in.RunID, Limit: in.Limit, Before: int64(in.Before)}
	if f.Since, err = parseSince(in.Since, tb.clock()); err != nil {
		return failErr(err)
	}
	rows, total, err := tb.Ledger.Query(ctx, f)
	if err != nil {
		return failErr(err)
	}
	var trials any
	shown := 0
	if in.Full {
		full := fitBytes(rows, maxHistoryBytes)
		trials, shown = full, len(full)
	} else {
		sum := fitBytes(summarise(rows), maxHistoryBytes)
		trials, shown = sum, len(sum)
	}
	out := map[string]any{"count": total, "trials": trials}
	if shown < total {
		// The next page: the trials older than the oldest shown.
		oldest := rows[len(rows)-shown].Seq
		out["next_before"] = oldest
		why := ""
		if shown < len(rows) {
			why = fmt.Sprintf(" (an answer holds at most %d KiB of trials)", maxHistoryBytes>>10)
		}
		out["more"] = fmt.Sprintf("showing the newest %d of %d trials%s; the %d older ones are a page away: call research_history again with the same filters and before: %d, or raise limit (at most %d)",
			shown, total, why, total-shown, oldest, maxListLimit)
	}
	if clamped != nil {
		out["clamped"] = clamped
	}
	if total == 0 {
		out["note"] = "no trials match; run_backtest, run_sweep and run_walk_forward record every trial here"
	}
	r := ok(out)
	r.links = tb.storedRunLinks(rows[len(rows)-shown:])
	return r
}

// storedRunLinks are resource links to the runs among rows that this
// session still stores (wicket://runs/{id}: the full report), newest first.
func (tb *toolbox) storedRunLinks(rows []ledger.Row) []mcp.Content {
	if tb.runs == nil {
		return nil
	}
	stored := map[string]bool{}
	for _, id := range tb.runs.ids() {
		stored[id] = true
	}
	var links []mcp.Content
	for i := len(rows) - 1; i >= 0; i-- {
		if id := rows[i].RunID; stored[id] {
			links = append(links, runLink(id, rows[i].Kind))
			delete(stored, id)
		}
	}
	return links
}

// maxHistoryBytes bounds the trials of one research_history answer, as
// JSON: a walk-forward row carries its grid and every window's choice, so
// a row count alone does not bound the answer.
const maxHistoryBytes = 512 << 10

// fitBytes returns the newest (last) rows whose JSON fits budget bytes,
// always at least the newest one; never nil.
func fitBytes[T any](rows []T, budget int) []T {
	used, keep := 0, 0
	for i := len(rows) - 1; i >= 0; i-- {
		b, err := json.Marshal(rows[i])
		if err != nil {
			break
		}
		if used += len(b) + 1; used > budget && keep > 0 {
			break
		}
		keep++
	}
	out := rows[len(rows)-keep:]
	if out == nil {
		out = []T{}
	}
	return out
}

func validKind(k string) bool { return slices.Contains(ledger.Kinds, k) }

// maxSinceDays bounds a since duration (a time.Duration holds 292 years;
// more days than that wrapped round to a time in the future).
const maxSinceDays = 36500

var daysRE = regexp.MustCompile(`^(\d{1,6})d(.*)$`)

// parseSince reads a since argument: empty (no bound), RFC3339, a date
// (UTC midnight), or a duration back from now (Go syntax plus Nd).
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	bad := fmt.Errorf("since %q: give a duration back from now (90m, 2h, 7d), an RFC3339 time (2026-05-14T09:30:00Z) or a date (2026-05-14)", s)
	var d time.Duration
	rest := s
	if m := daysRE.FindStringSubmatch(s); m != nil {
		days, _ := strconv.Atoi(m[1])
		if days > maxSinceDays {
			return time.Time{}, fmt.Errorf("since %q is more than %d days back; give a date instead (2000-01-01), or leave since out for every trial", s, maxSinceDays)
		}
		d, rest = time.Duration(days)*24*time.Hour, m[2]
	}
	if rest != "" {
		more, err := time.ParseDuration(rest)
		if err != nil || more < 0 {
			return time.Time{}, bad
		}
		if more > maxSinceDays*24*time.Hour-d {
			return time.Time{}, fmt.Errorf("since %q is more than %d days back; give a date instead (2000-01-01), or leave since out for every trial", s, maxSinceDays)
		}
		d += more
	}
	return now.Add(-d).UTC(), nil
}

// who is how this server's research is recorded in the ledger: the MCP
// surface and its session.
func (s *Server) who() ledger.Who {
	return ledger.Who{Surface: ledger.SurfaceMCP, Session: s.session, Caller: s.opts.Caller}
}

// headline are the metrics a summary row keeps (a walk-forward's are
// under out_of_sample, kept whole).
var headline = []string{"sharpe", "cagr", "total_return", "max_drawdown", "trades", "error", "out_of_sample", "walk_forward_efficiency", "partial"}

// trialSummary is a ledger row with its costs in their compact form
// (research.LedgerCosts), without its hash-chain fields and secondary
// metrics: what fits a context window by the hundred.
type trialSummary struct {
	Seq             int64                      `json:"seq"`
	Time            string                     `json:"time"`
	Kind            string                     `json:"kind"`
	RunID           string                     `json:"run_id"`
	Who             ledger.Who                 `json:"who"`
	Strategy        string                     `json:"strategy"`
	Digest          string                     `json:"digest"` // the first 12 hex digits
	Series          string                     `json:"series"`
	From            string                     `json:"from"`
	To              string                     `json:"to"`
	Params          json.RawMessage            `json:"params"`
	Costs           string                     `json:"costs"` // "fee=10 slip=5 intrabar=path funding=auto"; unknown for old rows
	Metrics         map[string]json.RawMessage `json:"metrics"`
	SharpePerPeriod *float64                   `json:"sharpe_per_period"`
}

func summarise(rows []ledger.Row) []trialSummary {
	out := make([]trialSummary, len(rows))
	for i, r := range rows {
		var all map[string]json.RawMessage
		_ = json.Unmarshal(r.Metrics, &all)
		m := map[string]json.RawMessage{}
		for _, k := range headline {
			if v, ok := all[k]; ok {
				m[k] = v
			}
		}
		var sr *float64
		if v := r.SharpePerPeriod; !math.IsNaN(v) {
			sr = &v
		}
		out[i] = trialSummary{Seq: r.Seq, Time: r.Time, Kind: r.Kind, RunID: r.RunID, Who: r.Who, Strategy: r.Strategy,
			Digest: r.Digest[:min(12, len(r.Digest))], Series: r.Series, From: r.From, To: r.To, Params: r.Params, Costs: research.ReadLedgerCosts(r.Costs).String(), Metrics: m, SharpePerPeriod: sr}
	}
	return out
}
