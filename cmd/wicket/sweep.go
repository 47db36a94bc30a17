package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"wicket/strategy/ledger"
	"wicket/strategy/research"
	"wicket/strategy/script"
	"wicket/strategy/worker"
)

func sweepCommand() *cli.Command {
	return &cli.Command{
		Name:      "sweep",
		Usage:     "backtest every combination of a grid of knob values in parallel workers and rank them, with the winner's deflated Sharpe ratio",
		ArgsUsage: "NAME|FILE --series SYMBOL@GRANULARITY --grid KNOB=FROM:TO:STEP|KNOB=V1,V2,... [--grid ...]",
		Description: "NAME is strategies/NAME.star in the project (or, when there is none, the built-in template of that name); " +
			"FILE is a path to a .star file. Each --grid names a knob and its values: a range FROM:TO[:STEP] (the step " +
			"defaults to the knob's own) or a list V1,V2,...; the grid is checked against the knobs' ranges and its size " +
			"against research.max_combinations before anything runs. Combinations run in worker processes, one per core " +
			"(research.workers), sharing indicator results. --estimate prints the combination count and an estimated " +
			"duration instead. Prints the best combinations as a table (a progress bar on stderr for long runs), or the " +
			"whole result with --json. Ctrl-C stops the sweep and prints what finished.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "rank-by", Usage: "rank by `METRIC`: " + strings.Join(research.RankMetrics, ", ") + " (default sharpe)"},
			&cli.IntFlag{Name: "top", Usage: fmt.Sprintf("show the best `N` combinations (default %d, at most %d)", research.DefaultTop, research.MaxTop)},
			&cli.BoolFlag{Name: "estimate", Usage: "print the combination count and an estimated duration, from timing one combination, without sweeping"},
		}, researchFlags()...),
		Action: sweepAction,
	}
}

// researchFlags are the flags sweep and walk-forward share.
func researchFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "series", Usage: "the series to run over, e.g. `BTC-USD@1h` (see wicket data list), or a universe: a comma-separated list and/or patterns such as *@1d, ranked by pooled figures"},
		&cli.GenericFlag{Name: "grid", Value: &listFlag{}, Usage: "knob values to sweep: `KNOB=FROM:TO[:STEP]` or KNOB=V1,V2,... (repeatable)"},
		&cli.StringSliceFlag{Name: "param", Usage: "fix a knob outside the grid, `KNOB=VALUE` (repeatable)"},
		&cli.StringFlag{Name: "from", Usage: "first bar, a `DATE` (2024-01-31) or RFC3339 time"},
		&cli.StringFlag{Name: "to", Usage: "last bar, a `DATE` (through that day) or RFC3339 time"},
		&cli.StringFlag{Name: "capital", Usage: "starting capital, a decimal `AMOUNT` (default research.capital)"},
		&cli.Float64Flag{Name: "fee-bps", Usage: "fee per fill in basis points of notional (default research.fee_bps)"},
		&cli.Float64Flag{Name: "slippage-bps", Usage: "slippage per fill in basis points of price (default research.slippage_bps)"},
		&cli.IntFlag{Name: "max-combinations", Usage: "refuse grids larger than `N` (at most research.max_combinations)"},
		&cli.StringFlag{Name: "addr", Usage: "run on the data service at `HOST:PORT` (wicket data serve) instead of local workers"},
		clusterFlag(),
		&cli.BoolFlag{Name: "json", Usage: "print the whole result as JSON"},
	}
}

// listFlag collects a repeatable flag's values verbatim (commas included,
// unlike a string slice flag).
type listFlag struct{ values []string }

func (l *listFlag) Set(v string) error { l.values = append(l.values, v); return nil }
func (l *listFlag) String() string     { return strings.Join(l.values, " ") }

// researcher is what the research commands need of research.Local or
// research.Client.
type researcher interface {
	Sweep(ctx context.Context, req research.SweepRequest, progress func(research.Progress)) (research.SweepResult, error)
	WalkForward(ctx context.Context, req research.WalkForwardRequest, progress func(research.Progress)) (research.WalkForwardResult, error)
}

// researchInput is what sweep and walk-forward read from the command line.
type researchInput struct {
	ref     research.StrategyRef
	series  string
	grid    research.Grid
	params  map[string]any
	from    string
	to      string
	costs   research.Costs
	maxComb int
	svc     researcher
	close   func()
}

// readResearch parses the strategy argument and the shared flags, opens
// the project and picks local workers or the data service.
func readResearch(c *cli.Context, verb string) (researchInput, error) {
	var in researchInput
	args, err := trailingFlags(c)
	if err != nil {
		return in, err
	}
	if len(args) != 1 {
		return in, usagef("%s needs one strategy, NAME or FILE, got %d arguments (usage: wicket %s NAME --series SYMBOL@1h --grid fast=5:50:5)", verb, len(args), verb)
	}
	in.series = c.String("series")
	if in.series == "" {
		return in, usagef("%s needs --series SYMBOL@GRANULARITY, e.g. --series BTC-USD@1h (see wicket data list)", verb)
	}
	grid := c.Generic("grid").(*listFlag).values
	if len(grid) == 0 {
		return in, usagef("%s needs at least one --grid KNOB=FROM:TO:STEP or KNOB=V1,V2,... (see wicket strategy params NAME for the knobs)", verb)
	}
	in.grid = research.Grid{}
	for _, g := range grid {
		name, spec, err := research.ParseGridFlag(g)
		if err != nil {
			return in, usageError{fmt.Errorf("--grid: %w", err)}
		}
		if _, dup := in.grid[name]; dup {
			return in, usagef("--grid: knob %s is given twice", name)
		}
		in.grid[name] = spec
	}
	if in.params, err = script.ParseAssignments(c.StringSlice("param")); err != nil {
		return in, usageError{fmt.Errorf("--param: %w", err)}
	}
	in.from, in.to = c.String("from"), c.String("to")
	in.maxComb = c.Int("max-combinations")
	in.costs = costFlags(c)
	p, cfg, err := openProject(c)
	if err != nil {
		return in, err
	}
	label, source, err := backtestSource(c, p, args[0])
	if err != nil {
		return in, err
	}
	in.ref = research.StrategyRef{Source: source, Label: label}
	c.Context = ledger.WithWho(c.Context, cliWho)
	if addr := c.String("addr"); addr != "" {
		client, err := dataClient(addr, &p)
		if err != nil {
			return in, err
		}
		in.svc, in.close = client, func() {}
		return in, nil
	}
	pool, err := worker.NewPool(worker.Config{Size: cfg.Research.Workers, MemoryMiB: cfg.Research.WorkerMemoryMiB})
	if err != nil {
		return in, err
	}
	rc := research.Config{Project: p, Research: cfg.Research, Pool: pool}
	closeCluster, err := useCluster(c, &p, cfg, &rc)
	if err != nil {
		pool.Close()
		return in, err
	}
	rec, closeLedger := openLedger(c.App.ErrWriter, p, verb)
	rc.Recorder = rec
	in.svc = research.NewLocal(rc)
	in.close = func() { closeCluster(); pool.Close(); closeLedger() }
	return in, nil
}

// costFlags reads --capital, --fee-bps and --slippage-bps; a flag not
// given is left empty, for the project's [research] default.
func costFlags(c *cli.Context) research.Costs {
	var costs research.Costs
	if c.IsSet("capital") {
		costs.Capital = c.String("capital")
	}
	if c.IsSet("fee-bps") {
		v := c.Float64("fee-bps")
		costs.FeeBps = &v
	}
	if c.IsSet("slippage-bps") {
		v := c.Float64("slippage-bps")
		costs.SlippageBps = &v
	}
	return costs
}

// researchError makes a request error a usage error (exit 2) and leaves
// the others as they are.
func researchError(err error) error {
	var re *research.Error
	if errors.As(err, &re) && (re.Kind == research.KindInvalid || re.Kind == research.KindTooMany) {
		return usageError{err}
	}
	return err
}

func sweepAction(c *cli.Context) error {
	in, err := readResearch(c, "sweep")
	if err != nil {
		return err
	}
	defer in.close()
	req := research.SweepRequest{
		StrategyRef: in.ref, Series: in.series, Grid: in.grid, Params: in.params,
		RankBy: c.String("rank-by"), Top: c.Int("top"), From: in.from, To: in.to, Costs: in.costs,
		Estimate: c.Bool("estimate"), MaxCombinations: in.maxComb,
	}
	bar := newProgressBar(c.App.ErrWriter, "combinations")
	res, err := in.svc.Sweep(c.Context, req, bar.update)
	bar.clear()
	if err != nil {
		return researchError(err)
	}
	return writeResearch(c, "sweep", res, func(w io.Writer) error { return printSweep(w, res) }, res.Partial, res.PartialReason)
}

// writeResearch prints a sweep's or walk-forward's result: all of it as
// JSON with --json, else the table print writes. A partial result (the
// run was stopped) is printed too, and is an error after it.
func writeResearch(c *cli.Context, verb string, res any, print func(io.Writer) error, partial bool, why string) error {
	if c.Bool("json") {
		if err := writeJSON(c.App.Writer, res); err != nil {
			return err
		}
	} else if err := print(c.App.Writer); err != nil {
		return err
	}
	if partial {
		return fmt.Errorf("%s %s; the output shows what finished", verb, why)
	}
	return nil
}

// metricsRow is what the tables show of a backtest's metrics.
type metricsRow struct {
	TotalReturn  *float64 `json:"total_return"`
	CAGR         *float64 `json:"cagr"`
	Sharpe       *float64 `json:"sharpe"`
	MaxDrawdown  *float64 `json:"max_drawdown"`
	ProfitFactor *float64 `json:"profit_factor"`
	Trades       int      `json:"trades"`
	Start        string   `json:"start"`
	End          string   `json:"end"`
	Bars         int      `json:"bars"`
}

func readMetrics(raw json.RawMessage) metricsRow {
	var m metricsRow
	json.Unmarshal(raw, &m)
	return m
}

func fmtPercent(x *float64) string {
	if x == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f%%", *x*100)
}

func fmtPlaces(x *float64, places int) string {
	if x == nil {
		return "-"
	}
	return fmt.Sprintf("%.*f", places, *x)
}

// fmtKnobs writes the knobs not in skip as "k=v k=v", sorted.
func fmtKnobs(params map[string]any, skip []string) string {
	var names []string
	for k := range params {
		if !slices.Contains(skip, k) {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = k + "=" + fmt.Sprint(params[k])
	}
	return strings.Join(parts, " ")
}

func printSweep(w io.Writer, r research.SweepResult) error {
	if e := r.Estimate; e != nil {
		fmt.Fprintf(w, "%s on %s: %d combinations (%s)\n", r.Strategy, r.Series, e.Combinations, strings.Join(r.Knobs, " × "))
		if e.Seconds > 0 || e.PerCombinationSeconds > 0 {
			fmt.Fprintf(w, "estimated %s on %d workers (%.4f s per combination)\n", fmtSeconds(e.Seconds), e.Workers, e.PerCombinationSeconds)
		}
		fmt.Fprintf(w, "%s\n", e.Note)
		return nil
	}
	span := ""
	if len(r.Top) > 0 {
		m := readMetrics(r.Top[0].Metrics)
		span = fmt.Sprintf("  %s to %s  %d bars", m.Start, m.End, m.Bars)
	}
	if len(r.Universe) > 0 {
		span = fmt.Sprintf("  universe of %d series: %s; ranked by the pooled figures", len(r.Universe), strings.Join(r.Universe, ", "))
	}
	fmt.Fprintf(w, "%s on %s%s\n", r.Strategy, r.Series, span)
	fmt.Fprintf(w, "%d combinations (%s), %d evaluated, %d failed, ranked by %s\n", r.Combinations, strings.Join(r.Knobs, " × "), r.Evaluated, r.Failed, r.RankBy)
	fmt.Fprintf(w, "capital %s  fee %v bps  slippage %v bps", r.Settings.Capital, r.Settings.FeeBps, r.Settings.SlippageBps)
	if len(r.Top) > 0 {
		if other := fmtKnobs(r.Top[0].Params, r.Knobs); other != "" {
			fmt.Fprintf(w, "  fixed %s", other)
		}
	}
	fmt.Fprintln(w)
	if len(r.Top) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		head := []string{"rank"}
		head = append(head, r.Knobs...)
		head = append(head, "sharpe", "cagr", "total return", "max drawdown", "profit factor", "trades")
		fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
		for _, t := range r.Top {
			m := readMetrics(t.Metrics)
			row := []string{fmt.Sprint(t.Rank)}
			for _, k := range r.Knobs {
				row = append(row, fmt.Sprint(t.Params[k]))
			}
			row = append(row, fmtPlaces(m.Sharpe, 3), fmtPercent(m.CAGR), fmtPercent(m.TotalReturn), fmtPercent(m.MaxDrawdown), fmtPlaces(m.ProfitFactor, 2), fmt.Sprint(m.Trades))
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if r.TopClamped != "" {
			fmt.Fprintf(w, "(%s)\n", r.TopClamped)
		}
	}
	if d := r.DeflatedSharpe; d != nil {
		fmt.Fprintln(w)
		if d.DSR != nil {
			fmt.Fprintf(w, "deflated sharpe ratio %.4f after %d trials: the probability that the winner's true sharpe is above zero\n", *d.DSR, d.Trials)
			fmt.Fprintf(w, "(luck alone would reach a per-period sharpe of %s; the winner's is %s)\n", fmtPtr(d.ExpectedMaxSharpe), fmtPtr(d.Sharpe))
		} else {
			fmt.Fprintf(w, "deflated sharpe ratio undefined: %s\n", d.Note)
		}
	}
	printLedgerFigures(w, r)
	if r.LookaheadCheck != "" {
		fmt.Fprintf(w, "lookahead check of the winner: %s\n", r.LookaheadCheck)
	}
	for _, ps := range r.PerSeries {
		if d := ps.DeflatedSharpe; d != nil && d.DSR != nil {
			fmt.Fprintf(w, "%s: deflated sharpe ratio of the winner %.4f after %d trials\n", ps.Series, *d.DSR, d.Trials)
		}
	}
	for _, e := range r.Errors {
		fmt.Fprintf(w, "failed: %s: %s\n", fmtKnobs(e.Params, nil), e.Message)
	}
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	if r.Partial {
		fmt.Fprintf(w, "partial: %s\n", r.PartialReason)
	}
	return nil
}

func fmtPtr(x *float64) string {
	if x == nil {
		return "-"
	}
	return fmt.Sprint(*x)
}

func fmtSeconds(s float64) string {
	return (time.Duration(s * float64(time.Second))).Round(100 * time.Millisecond).String()
}

// progressBar draws a progress bar on a terminal once a run has taken
// more than a second; elsewhere (a pipe, a file, a test) it stays silent.
type progressBar struct {
	w     io.Writer
	tty   bool
	unit  string
	now   func() time.Time
	start time.Time
	last  time.Time
	drawn bool
}

func newProgressBar(w io.Writer, unit string) *progressBar {
	tty := false
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	b := &progressBar{w: w, tty: tty, unit: unit, now: time.Now}
	b.start = b.now()
	return b
}

// Progress bar geometry and pace.
const (
	barWidth   = 30
	barDelay   = time.Second
	barRefresh = 100 * time.Millisecond
)

func (b *progressBar) update(p research.Progress) {
	if !b.tty || p.Total <= 0 {
		return
	}
	now := b.now()
	if now.Sub(b.start) < barDelay || (now.Sub(b.last) < barRefresh && p.Done < p.Total) {
		return
	}
	b.last = now
	filled := barWidth * p.Done / p.Total
	fmt.Fprintf(b.w, "\r[%s%s] %d/%d %s  %s ", strings.Repeat("#", filled), strings.Repeat(" ", barWidth-filled),
		p.Done, p.Total, b.unit, now.Sub(b.start).Round(time.Second))
	b.drawn = true
}

func (b *progressBar) clear() {
	if b.drawn {
		fmt.Fprintf(b.w, "\r%s\r", strings.Repeat(" ", barWidth+60))
		b.drawn = false
	}
}
