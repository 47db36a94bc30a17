package agent

// wicket://runs/{id}: the full report of a research run, kept in a bounded
// in-process store (the research ledger stores a run's metrics and id, not
// its trades or curve). The report is served without its trades, which are
// paged at wicket://runs/{id}/trades/{cursor}.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Run store bounds.
const (
	maxStoredRuns = 100 // a session's newest runs are kept; the oldest is forgotten first
	runTradesPage = 100 // trades per page of wicket://runs/{id}/trades/{cursor}
	// maxPoolBytes bounds the run reports the whole process keeps, as JSON,
	// across every session's store: over HTTP there is a store per session
	// (up to the session cap), and 100 full reports of 500 trades each are
	// several megabytes. Past it the process's oldest run is forgotten,
	// whichever session it belongs to.
	maxPoolBytes = 64 << 20
)

const (
	uriRunsPrefix   = "wicket://runs/"
	uriRunTemplate  = "wicket://runs/{id}"
	uriRunTradesTpl = "wicket://runs/{id}/trades/{cursor}"
)

func runURI(id string) string { return uriRunsPrefix + id }

// runStore keeps one session's last maxStoredRuns full reports by run id,
// as JSON, inside the process-wide byte bound of its pool.
type runStore struct {
	pool *runPool

	mu    sync.Mutex
	order []string
	runs  map[string]keptRun
	gen   uint64
}

// storedRun is a run's full report.
type storedRun struct {
	kind   string         // "backtest", "sweep", "walk-forward"
	report map[string]any // the full report
}

// keptRun is a stored run as the store holds it: its report as JSON.
type keptRun struct {
	kind string
	body []byte
	gen  uint64 // which put kept it (a pool entry of an older one is stale)
}

func newRunStore() *runStore { return newRunStoreIn(processRuns) }

func newRunStoreIn(p *runPool) *runStore {
	return &runStore{pool: p, runs: map[string]keptRun{}}
}

// put keeps r under id; a report that cannot be encoded is not kept.
func (s *runStore) put(id string, r storedRun) {
	body, err := json.Marshal(r.report)
	if err != nil {
		return
	}
	s.mu.Lock()
	s.gen++
	gen := s.gen
	freed := 0
	if old, ok := s.runs[id]; ok {
		freed += len(old.body)
	} else {
		s.order = append(s.order, id)
	}
	s.runs[id] = keptRun{kind: r.kind, body: body, gen: gen}
	for len(s.order) > maxStoredRuns {
		freed += len(s.runs[s.order[0]].body)
		delete(s.runs, s.order[0])
		s.order = s.order[1:]
	}
	s.mu.Unlock()
	s.pool.add(poolEntry{store: s, id: id, gen: gen, size: len(body)}, freed)
}

// dropIf forgets id if it is still the run put as gen, and returns the
// bytes freed.
func (s *runStore) dropIf(id string, gen uint64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.runs[id]
	if !ok || r.gen != gen {
		return 0
	}
	delete(s.runs, id)
	for i, o := range s.order {
		if o == id {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
	return len(r.body)
}

func (s *runStore) get(id string) (storedRun, bool) {
	s.mu.Lock()
	r, ok := s.runs[id]
	s.mu.Unlock()
	if !ok {
		return storedRun{}, false
	}
	var report map[string]any
	if json.Unmarshal(r.body, &report) != nil {
		return storedRun{}, false
	}
	return storedRun{kind: r.kind, report: report}, true
}

// ids lists the stored run ids, newest first (for completions and errors).
func (s *runStore) ids() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.order))
	for i := len(s.order) - 1; i >= 0; i-- {
		out = append(out, s.order[i])
	}
	return out
}

// runPool bounds the bytes the run stores of one process hold together;
// the oldest run in the process goes first.
type runPool struct {
	limit int

	mu        sync.Mutex
	used      int
	entries   []poolEntry // oldest first
	compactAt int         // sweep stale entries when there are this many
}

type poolEntry struct {
	store *runStore
	id    string
	gen   uint64
	size  int
}

// processRuns is the pool of every run store of this process.
var processRuns = &runPool{limit: maxPoolBytes}

// add accounts a kept run (and the bytes its store already let go of) and
// forgets the process's oldest runs while the pool is over its bound; the
// newest run is always kept.
func (p *runPool) add(e poolEntry, freed int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.used += e.size - freed
	p.entries = append(p.entries, e)
	for p.used > p.limit && len(p.entries) > 1 {
		old := p.entries[0]
		p.entries = p.entries[1:]
		p.used -= old.store.dropIf(old.id, old.gen) // 0 for one its store already let go of
	}
	// Entries whose runs their stores let go of (by count, or replaced)
	// are stale: drop them from the front, and now and then from
	// everywhere, so the list stays bounded by the runs really kept.
	for len(p.entries) > 1 && !p.entries[0].live() {
		p.entries = p.entries[1:]
	}
	if len(p.entries) >= max(p.compactAt, poolCompactMin) {
		live := p.entries[:0]
		for _, e := range p.entries {
			if e.live() {
				live = append(live, e)
			}
		}
		clear(p.entries[len(live):])
		p.entries = live
		p.compactAt = 2 * len(live)
	}
}

// poolCompactMin is the fewest entries at which the pool sweeps out stale
// ones.
const poolCompactMin = 1024

func (e poolEntry) live() bool {
	e.store.mu.Lock()
	defer e.store.mu.Unlock()
	r, ok := e.store.runs[e.id]
	return ok && r.gen == e.gen
}

// backtest stores a full report under id and returns the answer: the
// compact report, a short text summary and the resource link.
func (s *runStore) backtest(id string, full map[string]any, shape backtestShape) *result {
	s.put(id, storedRun{kind: "backtest", report: full})
	ans := compactBacktest(full, shape)
	ans["run_uri"] = runURI(id)
	r := ok(ans)
	r.summary = backtestSummary(ans, runURI(id))
	r.links = append(r.links, runLink(id, "backtest"))
	return r
}

// report is the stored run without its trades, with where they are.
func (s *runStore) report(id string) (map[string]any, error) {
	run, ok := s.get(id)
	if !ok {
		return nil, s.unknown(id)
	}
	out := make(map[string]any, len(run.report)+3)
	for k, v := range run.report {
		out[k] = v
	}
	trades, _ := run.report["trades"].([]any)
	delete(out, "trades")
	out["run_id"] = id
	out["kind"] = run.kind
	if _, unrecorded := run.report["ledger_warning"]; !unrecorded {
		out["audit_export"] = auditExport(id)
	}
	out["trades_count"] = len(trades)
	if len(trades) > 0 {
		out["trades_uri"] = runTradesURI(id, 0)
	}
	return out, nil
}

// auditExport says where a run's audit data is: the research ledger's
// export of it (strategy/research.Export), from which its deflated Sharpe
// ratio and PBO can be recomputed outside wicket.
func auditExport(id string) map[string]string {
	return map[string]string{
		"command": "wicket research export --out " + id + ".json " + id,
		"note": "every trial of this run as the research ledger holds it (params, return statistics, PBO blocks, the winner) with the ledger's trials on the series, " +
			"to recompute its deflated Sharpe ratio and probability of backtest overfitting outside wicket (docs/strategies.md shows how); a run the ledger did not record has none",
	}
}

func runTradesURI(id string, cursor int) string {
	return uriRunsPrefix + id + "/trades/" + strconv.Itoa(cursor)
}

// tradesPage is one page of a stored run's trades; next is empty on the
// last page.
func (s *runStore) tradesPage(id, cursor string) (map[string]any, error) {
	run, ok := s.get(id)
	if !ok {
		return nil, s.unknown(id)
	}
	trades, _ := run.report["trades"].([]any)
	at, err := strconv.Atoi(cursor)
	if err != nil || at < 0 || at > len(trades) || (at%runTradesPage != 0 && at != len(trades)) {
		return nil, badResourceURI(fmt.Errorf("cursor %q is not a page of run %s: start at %s and follow next", cursor, id, runTradesURI(id, 0)))
	}
	end := min(at+runTradesPage, len(trades))
	out := map[string]any{"run_id": id, "total": len(trades), "from": at, "trades": trades[at:end]}
	if end < len(trades) {
		out["next_cursor"] = strconv.Itoa(end)
		out["next"] = runTradesURI(id, end)
	}
	return out, nil
}

func (s *runStore) unknown(id string) error {
	known := s.ids()
	if len(known) > 5 {
		known = known[:5]
	}
	hint := "no run is stored in this session yet"
	if len(known) > 0 {
		hint = "newest: " + strings.Join(known, ", ")
	}
	return missing(fmt.Errorf("no stored run %q (this server keeps the last %d runs of its session, and fewer when the process's %d MiB for run reports is full; %s)",
		id, maxStoredRuns, maxPoolBytes>>20, hint))
}

// addRunResources registers the run templates (when run_backtest is served).
func (s *Server) addRunResources(store *runStore) {
	if store == nil || !s.Access().Served("run_backtest") {
		return
	}
	// Completions of run ids; every other template variable goes on to
	// the server's own completer (strategies, series, templates, venues).
	server.WithResourceCompletionProvider(runCompletions{store: store, next: completer{s}})(s.mcp)
	read := func(uri string, v map[string]any, err error) ([]mcp.ResourceContents, error) {
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "application/json", Text: string(b)}}, nil
	}
	s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(uriRunTradesTpl, "run trades",
		mcp.WithTemplateDescription(fmt.Sprintf("One page (%d) of a stored run's trades, from cursor; next names the following page.", runTradesPage)),
		mcp.WithTemplateMIMEType("application/json")),
		func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			id, cursor, ok := splitRunTradesURI(req.Params.URI)
			if !ok {
				return nil, badResourceURI(fmt.Errorf("not a run trades URI: %s (want %s)", req.Params.URI, uriRunTradesTpl))
			}
			v, err := store.tradesPage(id, cursor)
			return read(req.Params.URI, v, err)
		})
	s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(uriRunTemplate, "research run",
		mcp.WithTemplateDescription(fmt.Sprintf("The full report of a research run of this session (the last %d are kept): settings, metrics, warnings, the whole equity curve; trades are paged at trades_uri.", maxStoredRuns)),
		mcp.WithTemplateMIMEType("application/json")),
		func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			id := strings.TrimPrefix(req.Params.URI, uriRunsPrefix)
			if strings.Contains(id, "/") || id == "" {
				return nil, badResourceURI(fmt.Errorf("not a run URI: %s (want %s)", req.Params.URI, uriRunTemplate))
			}
			v, err := store.report(id)
			return read(req.Params.URI, v, err)
		})
}

func splitRunTradesURI(uri string) (id, cursor string, ok bool) {
	rest, found := strings.CutPrefix(uri, uriRunsPrefix)
	if !found {
		return "", "", false
	}
	id, cursor, found = strings.Cut(rest, "/trades/")
	return id, cursor, found && id != "" && !strings.Contains(id, "/") && cursor != ""
}

// asMap is v's JSON object.
func asMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(b, &m)
}

// research stores a sweep's or walk-forward's full result and answers with
// ans (cut from it), a short summary and the resource link.
func (s *runStore) research(kind, id string, full, ans map[string]any, summary string) *result {
	s.put(id, storedRun{kind: kind, report: full})
	ans["run_id"], ans["run_uri"] = id, runURI(id)
	r := ok(ans)
	r.summary = summary + "\nThe full JSON answer is in structured content; the whole result is at " + runURI(id) + "."
	r.links = append(r.links, runLink(id, kind))
	return r
}

// runAnswer is a research run's result as a map (full, stored), a copy of
// it to cut for the answer, and the run's id: runID, or a new one.
func runAnswer(res any, runID string, newID func() string) (full, ans map[string]any, id string, err error) {
	if full, err = asMap(res); err != nil {
		return nil, nil, "", err
	}
	if id = runID; id == "" {
		id = newID()
	}
	return full, maps.Clone(full), id, nil
}

// sweep answers a sweep: the result as the engine cut it (top 10 by
// default), stored and linked.
func (s *runStore) sweep(res any, runID string, newID func() string) *result {
	full, ans, id, err := runAnswer(res, runID, newID)
	if err != nil {
		return fail("internal error: cannot encode the sweep: %v", err)
	}
	if _, ok := full["top"]; ok {
		ans["top"] = cutEach(full["top"], "metrics")
		ans["metrics_shown"] = "headline metrics of each entry; every metric is at run_uri"
	}
	sum := fmt.Sprintf("Sweep of %v on %v: %v of %v combinations evaluated, ranked by %v.", full["strategy"], full["series"], full["evaluated"], full["combinations"], full["rank_by"])
	if top, _ := ans["top"].([]any); len(top) > 0 {
		b, _ := json.Marshal(top[0])
		sum += " Best: " + truncate(string(b), 400)
	}
	return s.research("sweep", id, full, ans, sum)
}

// walkForward answers a walk-forward with the per-window summaries and the
// stitched metrics; the stitched equity curve is at the run's resource.
func (s *runStore) walkForward(res any, runID string, newID func() string) *result {
	full, ans, id, err := runAnswer(res, runID, newID)
	if err != nil {
		return fail("internal error: cannot encode the walk-forward: %v", err)
	}
	if eq, ok := full["equity"].([]any); ok {
		ans["equity_points"] = len(eq)
		delete(ans, "equity")
	}
	if _, ok := full["windows"]; ok {
		ans["windows"] = cutEach(full["windows"], "in_sample_metrics", "out_of_sample_metrics", "deflated_sharpe", "overfitting")
		ans["metrics_shown"] = "headline metrics of each window; every metric is at run_uri"
	}
	windows, _ := full["windows"].([]any)
	sum := fmt.Sprintf("Walk-forward of %v on %v: %d window(s), walk-forward efficiency %v.", full["strategy"], full["series"], len(windows), compactNumber(full["walk_forward_efficiency"]))
	if oos, ok := full["out_of_sample"].(map[string]any); ok {
		b, _ := json.Marshal(oos)
		sum += " Out of sample: " + truncate(string(b), 400)
	}
	return s.research("walk-forward", id, full, ans, sum)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// headlineMetrics are the metrics a sweep's top entries and a
// walk-forward's windows keep in the answer; the run's resource has all.
var headlineMetrics = []string{"total_return", "cagr", "sharpe", "sortino", "max_drawdown", "trades", "win_rate", "profit_factor"}

// headlineOf cuts a metrics object to headlineMetrics.
func headlineOf(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(headlineMetrics))
	for _, k := range headlineMetrics {
		if x, ok := m[k]; ok {
			out[k] = x
		}
	}
	return out
}

// cutEach replaces, in every object of list, the given metric keys with
// their headline; list is copied, not changed.
func cutEach(list any, keys ...string) []any {
	items, _ := list.([]any)
	out := make([]any, len(items))
	for i, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			out[i] = it
			continue
		}
		c := make(map[string]any, len(m))
		for k, v := range m {
			c[k] = v
		}
		for _, k := range keys {
			if v, ok := c[k]; ok {
				c[k] = headlineOf(v)
			}
		}
		out[i] = c
	}
	return out
}

// runCompletions completes the id of wicket://runs/{id} (and of its trades
// template) from the stored runs, newest first; any other template goes to
// next (nil: no completions).
type runCompletions struct {
	store *runStore
	next  server.ResourceCompletionProvider
}

func (p runCompletions) CompleteResourceArgument(ctx context.Context, uri string, arg mcp.CompleteArgument, cc mcp.CompleteContext) (*mcp.Completion, error) {
	if (uri != uriRunTemplate && uri != uriRunTradesTpl) || arg.Name != "id" {
		if p.next != nil {
			return p.next.CompleteResourceArgument(ctx, uri, arg, cc)
		}
		return &mcp.Completion{Values: []string{}}, nil
	}
	var vals []string
	for _, id := range p.store.ids() {
		if strings.HasPrefix(id, arg.Value) {
			vals = append(vals, id)
		}
	}
	total := len(vals)
	if len(vals) > 100 {
		vals = vals[:100]
	}
	if vals == nil {
		vals = []string{}
	}
	return &mcp.Completion{Values: vals, Total: total, HasMore: total > len(vals)}, nil
}
