package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"wicket/strategy/backtest"
	"wicket/strategy/ledger"
	"wicket/strategy/research"
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
			"whole result with --json. Ctrl-C stops the sweep and prints what finished. Without --series, a strategy that " +
			"declares its universe (a portfolio strategy) is swept, each combination one portfolio backtest over it.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "rank-by", Usage: "rank by `METRIC`: " + strings.Join(research.RankMetrics, ", ") + " (default sharpe)"},
			&cli.IntFlag{Name: "top", Usage: fmt.Sprintf("show the best `N` combinations (default %d, at most %d)", research.DefaultTop, research.MaxTop)},
			&cli.BoolFlag{Name: "estimate", Usage: "print the combination count and an estimated duration, from timing one combination, without sweeping"},
			intrabarFlag(),
			&cli.StringFlag{Name: "deflate-by", Usage: "deflate the sharpe ratio over the research ledger by `SCOPE`: series (every strategy's trials on the series, the default) or strategy (its own)"},
		}, researchFlags()...),
		Action: sweepAction,
	}
}

func sweepAction(c *cli.Context) error {
	ro, err := researchOptionsOf(c, "sweep")
	if err != nil {
		return err
	}
	o := sweepOptions{
		research: ro, rankBy: c.String("rank-by"), top: c.Int("top"), estimate: c.Bool("estimate"),
		deflateBy: c.String("deflate-by"), json: c.Bool("json"),
	}
	return runSweep(c.Context, o, c.App.Writer, c.App.ErrWriter)
}

// sweepOptions is what wicket sweep works with, filled from its argument
// and flags.
type sweepOptions struct {
	research  researchOptions // the strategy and the flags walk-forward shares
	rankBy    string
	top       int
	estimate  bool
	deflateBy string
	json      bool
}

// runSweep sweeps a grid of a strategy's knobs and prints the ranking.
func runSweep(ctx context.Context, o sweepOptions, stdout, stderr io.Writer) error {
	in, err := openResearch(o.research, "sweep", stderr)
	if err != nil {
		return err
	}
	defer in.close()
	req := research.SweepRequest{
		StrategyRef: in.ref, Series: in.series, Grid: in.grid, Params: in.params,
		RankBy: o.rankBy, Top: o.top, From: in.from, To: in.to, Costs: in.costs, Intrabar: in.intrabar,
		Estimate: o.estimate, MaxCombinations: in.maxComb, DeflateBy: o.deflateBy, Plan: in.plan,
	}
	bar := newProgressBar(stderr, "combinations")
	res, err := in.svc.Sweep(ledger.WithWho(ctx, cliWho), req, bar.update)
	bar.clear()
	if err != nil {
		return researchError(err)
	}
	return writeResearchTo(stdout, o.json, "sweep", res, func(w io.Writer) error { return printSweep(w, res) }, res.Partial, res.PartialReason)
}

// writeResearchTo prints a sweep's, walk-forward's or optimisation's
// result to stdout: all of it as JSON when asJSON, else the table print
// writes. A partial result (the run was stopped) is printed too, and is
// an error after it.
func writeResearchTo(stdout io.Writer, asJSON bool, verb string, res any, print func(io.Writer) error, partial bool, why string) error {
	if asJSON {
		if err := writeJSON(stdout, res); err != nil {
			return err
		}
	} else if err := print(stdout); err != nil {
		return err
	}
	if partial {
		return fmt.Errorf("%s %s; the output shows what finished", verb, why)
	}
	return nil
}

// readMetrics reads a backtest's reported metrics for the tables; a
// failed trial's (no metrics) reads as all empty.
func readMetrics(raw json.RawMessage) backtest.ReportedMetrics {
	var m backtest.ReportedMetrics
	json.Unmarshal(raw, &m)
	return m
}

func fmtPercent(x *float64) string {
	if x == nil {
		return "-"
	}
	return fmtBounded(*x*100, 2) + "%"
}

func fmtPlaces(x *float64, places int) string {
	if x == nil {
		return "-"
	}
	return fmtBounded(*x, places)
}

// fmtBounded writes x with places decimals, or in scientific notation
// when it is too large for a table (an annualised figure of a two-day run
// can reach 1e70: never 72 digits in a cell).
func fmtBounded(x float64, places int) string {
	if math.Abs(x) >= 1e9 {
		return fmt.Sprintf("%.3g", x)
	}
	return fmt.Sprintf("%.*f", places, x)
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
	if len(r.SeriesSet) > 0 {
		span = fmt.Sprintf("  a series set of %d: %s; ranked by the pooled figures", len(r.SeriesSet), strings.Join(r.SeriesSet, ", "))
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
