package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"wicket/strategy/optimize"
	"wicket/strategy/research"
)

func optimizeCommand() *cli.Command {
	flags := slices.DeleteFunc(researchFlags(), func(f cli.Flag) bool { return f.Names()[0] == "max-combinations" })
	return &cli.Command{
		Name:      "optimize",
		Usage:     "search a grid of knob values with random search, TPE or CMA-ES on a budget, every trial in the research ledger",
		ArgsUsage: "NAME|FILE --series SYMBOL@GRANULARITY --grid KNOB=FROM:TO[:STEP]|KNOB=V1,V2,... [--grid ...] [--trials N] [--method M] [--resume RUN]",
		Description: "The grid is given as for sweep (a range is searched as ordered values, a list as unordered choices) but " +
			"may be far larger than research.max_combinations: the optimiser proposes a batch of combinations (the " +
			"workers' parallelism), the workers or the cluster run them as a sweep's chunks, the results are told to it, " +
			"and so on until --trials (default 100, at most research.max_combinations) or --time is spent or the grid is " +
			"exhausted. Each batch is recorded in the research ledger as it finishes, under one run id, printed on stderr; " +
			"--resume RUN replays that run's trials into the optimiser and continues to --trials without repeating one; " +
			"it is refused under other costs or another --intrabar rule than the run's, naming what differs. " +
			"Prints the best trials, the Pareto front of sharpe against drawdown, the deflated sharpe ratio over every " +
			"trial and the probability of backtest overfitting of the evaluated set; --json prints the whole result.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "method", Usage: "the optimiser, `METHOD`: " + strings.Join(optimize.Methods, ", ") + " (default " + research.DefaultOptimizeMethod + ")"},
			&cli.IntFlag{Name: "trials", Usage: fmt.Sprintf("the run's budget of `N` trials, resumed ones included (default %d)", research.DefaultOptimizeTrials)},
			&cli.DurationFlag{Name: "time", Usage: "stop asking for batches after `DURATION` (e.g. 10m)"},
			&cli.Uint64Flag{Name: "seed", Usage: "the optimiser's `SEED` (default 1; a resumed run keeps its own)"},
			&cli.IntFlag{Name: "batch", Usage: fmt.Sprintf("proposals run at once, `N` (default the workers' parallelism, at most %d)", research.MaxOptimizeBatch)},
			&cli.StringFlag{Name: "resume", Usage: "continue the optimisation recorded as run `RUN`"},
			&cli.StringFlag{Name: "rank-by", Usage: "the objective, `METRIC`: " + strings.Join(research.RankMetrics, ", ") + " (default sharpe)"},
			&cli.IntFlag{Name: "top", Usage: fmt.Sprintf("show the best `N` trials (default %d, at most %d)", research.DefaultTop, research.MaxTop)},
			&cli.StringFlag{Name: "deflate-by", Usage: "deflate the sharpe ratio over the research ledger by `SCOPE`: series (the default) or strategy"},
			intrabarFlag(),
		}, flags...),
		Action: optimizeAction,
	}
}

// optimizer is what optimize needs of research.Local or research.Client.
type optimizer interface {
	Optimize(ctx context.Context, req research.OptimizeRequest, progress func(research.Progress)) (research.OptimizeResult, error)
}

func optimizeAction(c *cli.Context) error {
	in, err := readResearch(c, "optimize")
	if err != nil {
		return err
	}
	defer in.close()
	svc, _ := in.svc.(optimizer)
	o := optimizeOptions{svc: svc, json: c.Bool("json"), req: research.OptimizeRequest{
		StrategyRef: in.ref, Series: in.series, Grid: in.grid, Params: in.params, From: in.from, To: in.to, Costs: in.costs, Intrabar: in.intrabar,
		Method: c.String("method"), Trials: c.Int("trials"), Seconds: c.Duration("time").Seconds(), Batch: c.Int("batch"),
		Resume: c.String("resume"), RankBy: c.String("rank-by"), Top: c.Int("top"), DeflateBy: c.String("deflate-by"), Plan: in.plan,
	}}
	if c.IsSet("seed") {
		s := c.Uint64("seed")
		o.req.Seed = &s
	}
	return runOptimize(c.Context, o, c.App.Writer, c.App.ErrWriter)
}

// optimizeOptions is what wicket optimize works with, filled from its
// flags: the request and the research engine (local workers or the data
// service) that runs it.
type optimizeOptions struct {
	req  research.OptimizeRequest
	svc  optimizer
	json bool // print the whole result as JSON
}

// runOptimize runs the optimisation, reporting each recorded batch (and
// the run id that resumes it) on stderr, and prints the result.
func runOptimize(ctx context.Context, o optimizeOptions, stdout, stderr io.Writer) error {
	if o.svc == nil {
		return fmt.Errorf("optimize: this research service cannot optimise")
	}
	bar := newProgressBar(stderr, "trials")
	res, err := o.svc.Optimize(ctx, o.req, func(p research.Progress) {
		if p.RunID != "" {
			// One line per recorded batch, terminal or not: the run id
			// is what resumes it after a stop.
			bar.clear()
			fmt.Fprintf(stderr, "wicket optimize: %s\n", p.Message)
			return
		}
		bar.update(p)
	})
	bar.clear()
	if err != nil {
		return researchError(err)
	}
	if o.json {
		err = writeJSON(stdout, res)
	} else {
		err = printOptimize(stdout, res, o.req.Intrabar)
	}
	if err != nil || !res.Partial {
		return err
	}
	why := res.PartialReason
	if res.RunID != "" {
		why += "; resume it with --resume " + res.RunID
	}
	return fmt.Errorf("optimize %s; the output shows what finished", why)
}

// printOptimize prints an optimisation; rule is the intrabar rule its
// trials ran under ("" is path).
func printOptimize(w io.Writer, r research.OptimizeResult, rule string) error {
	fmt.Fprintf(w, "%s on %s: %s (seed %d), %d trials of %d combinations (%s), ranked by %s\n",
		r.Strategy, r.Series, r.Method, r.Seed, r.Evaluated, r.Combinations, strings.Join(r.Knobs, " × "), r.RankBy)
	resumed := ""
	if r.Resumed > 0 {
		resumed = fmt.Sprintf(", %d resumed from the ledger", r.Resumed)
	}
	fmt.Fprintf(w, "%d failed%s; %d batches of up to %d run; stopped: %s\n", r.Failed, resumed, r.Batches, r.Batch, r.Stopped)
	if rule == "" {
		rule = "path"
	}
	fmt.Fprintf(w, "capital %s  fee %v bps  slippage %v bps  intrabar %s\n", r.Settings.Capital, r.Settings.FeeBps, r.Settings.SlippageBps, rule)
	if err := trialTable(w, "best", r.Knobs, r.Top); err != nil {
		return err
	}
	if r.TopClamped != "" {
		fmt.Fprintf(w, "(%s)\n", r.TopClamped)
	}
	if err := trialTable(w, "pareto front of sharpe against max drawdown", r.Knobs, r.Pareto); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if d := r.DeflatedSharpe; d != nil {
		if d.DSR != nil {
			fmt.Fprintf(w, "deflated sharpe ratio %.4f after all %d trials of the run\n", *d.DSR, d.Trials)
		} else {
			fmt.Fprintf(w, "deflated sharpe ratio undefined: %s\n", d.Note)
		}
	}
	if d := r.LedgerDeflatedSharpe; d != nil && d.DSR != nil {
		fmt.Fprintf(w, "deflated sharpe ratio %.4f over all %d %s trials in the research ledger on %s\n", *d.DSR, d.Trials, d.Scope, r.Series)
	}
	if o := r.Overfitting; o != nil && o.PBO != nil {
		fmt.Fprintf(w, "probability of backtest overfitting of the evaluated set %.4f (CSCV: %d blocks, %d splits, %d trials)\n", *o.PBO, o.Blocks, o.Splits, o.Combinations)
	} else if o != nil {
		fmt.Fprintf(w, "probability of backtest overfitting %s\n", o.Note)
	}
	if r.RunID != "" {
		fmt.Fprintf(w, "recorded in the research ledger as run %s (continue it with --resume %s)\n", r.RunID, r.RunID)
	}
	if r.LookaheadCheck != "" {
		fmt.Fprintf(w, "lookahead check of the winner: %s\n", r.LookaheadCheck)
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

// trialTable prints ranked trials under a title.
func trialTable(w io.Writer, title string, knobs []string, trials []research.Trial) error {
	if len(trials) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\n%s:\n", title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := append([]string{"rank"}, knobs...)
	head = append(head, "sharpe", "cagr", "total return", "max drawdown", "profit factor", "trades")
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, t := range trials {
		m := readMetrics(t.Metrics)
		row := []string{fmt.Sprint(t.Rank)}
		for _, k := range knobs {
			row = append(row, fmt.Sprint(t.Params[k]))
		}
		row = append(row, fmtPlaces(m.Sharpe, 3), fmtPercent(m.CAGR), fmtPercent(m.TotalReturn), fmtPercent(m.MaxDrawdown), fmtPlaces(m.ProfitFactor, 2), fmt.Sprint(m.Trades))
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	return tw.Flush()
}
