package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"wicket/strategy/research"
)

func walkForwardCommand() *cli.Command {
	return &cli.Command{
		Name:      "walk-forward",
		Usage:     "walk-forward analysis: optimise a grid on each in-sample window, trade the winner on the next out-of-sample window, stitch the out-of-sample results",
		ArgsUsage: "NAME|FILE [--series SYMBOL@GRANULARITY] --grid KNOB=... [--windows N | --in-sample LEN --out-of-sample LEN] [--anchored] [--purge LEN] [--embargo LEN]",
		Description: "NAME and FILE and --grid are as for wicket sweep. The windows are a count (--windows 6: the out-of-sample " +
			"windows tile the end of the range and each in-sample window is four of them long; 5 when nothing is given), or " +
			"lengths (--in-sample and --out-of-sample: a number of bars, or a duration such as 360d, 2160h or 26w), or a " +
			"count and one length. " +
			"Rolling windows move the in-sample window forward; --anchored keeps it starting at the range's start. The " +
			"in-sample sweep never sees out-of-sample bars; the winner trades each out-of-sample window from flat. " +
			"Windows too short for the strategy's warm-up are refused. " + research.ValidationHelp + " A portfolio strategy (one that declares its universe) " +
			"runs without --series, its windows laid over the universe's calendar. Prints one line per window and the stitched " +
			"out-of-sample metrics with the walk-forward efficiency, or the whole result with --json.",
		Flags: append([]cli.Flag{
			&cli.IntFlag{Name: "windows", Usage: fmt.Sprintf("the number of windows (default %d when no length is given, at most %d)", research.DefaultWindows, research.MaxWindows)},
			&cli.StringFlag{Name: "in-sample", Usage: "in-sample length: `LEN` bars (500) or a duration (360d, 2160h, 26w)"},
			&cli.StringFlag{Name: "out-of-sample", Usage: "out-of-sample length: `LEN` bars (100) or a duration (90d)"},
			&cli.BoolFlag{Name: "anchored", Usage: "keep every in-sample window starting at the range's start"},
			&cli.StringFlag{Name: "purge", Usage: "leave the `LEN` bars (or a duration) before each out-of-sample window out of its in-sample sweep (default none)"},
			&cli.StringFlag{Name: "embargo", Usage: "leave the `LEN` bars (or a duration) after each out-of-sample window out of later windows' in-sample ranking (default none)"},
			intrabarFlag(),
			runReportFlag(), // research_report.go
			&cli.StringFlag{Name: "rank-by", Usage: "pick each window's winner by `METRIC`: " + strings.Join(research.RankMetrics, ", ") + " (default sharpe)"},
		}, researchFlags()...),
		Action: walkForwardAction,
	}
}

// walkForwardOptions are a walk-forward command's request and output,
// read from its flags.
type walkForwardOptions struct {
	svc    researcher
	req    research.WalkForwardRequest
	json   bool   // the whole result as JSON, not the table
	report string // --report: the tear sheet's file
}

func walkForwardAction(c *cli.Context) error {
	in, err := readResearch(c, "walk-forward")
	if err != nil {
		return err
	}
	defer in.close()
	if err := checkRunReport(c); err != nil { // after readResearch read the flags that follow NAME
		return err
	}
	o := walkForwardOptions{svc: in.svc, json: c.Bool("json"), report: c.String("report"), req: research.WalkForwardRequest{
		StrategyRef: in.ref, Series: in.series, Grid: in.grid, Params: in.params,
		Windows: c.Int("windows"), Anchored: c.Bool("anchored"), RankBy: c.String("rank-by"),
		From: in.from, To: in.to, Costs: in.costs, Intrabar: in.intrabar, MaxCombinations: in.maxComb, Plan: in.plan,
	}}
	for _, f := range []struct {
		name string
		dst  *research.Length
	}{{"in-sample", &o.req.InSample}, {"out-of-sample", &o.req.OutOfSample}, {"purge", &o.req.Purge}, {"embargo", &o.req.Embargo}} {
		if v := c.String(f.name); v != "" {
			l, err := research.ParseLength(v)
			if err != nil {
				return usageError{fmt.Errorf("--%s: %w", f.name, err)}
			}
			*f.dst = l
		}
	}
	return runWalkForward(c.Context, o, c.App.Writer, c.App.ErrWriter)
}

// runWalkForward runs the analysis o asks for (over o.req's series, or a
// portfolio strategy's own universe when it names none) and writes it to
// stdout, its progress to stderr.
func runWalkForward(ctx context.Context, o walkForwardOptions, stdout, stderr io.Writer) error {
	req := o.req
	if req.Windows == 0 && req.InSample.IsZero() != req.OutOfSample.IsZero() {
		return usagef("walk-forward needs --windows N with one length, or both --in-sample LEN and --out-of-sample LEN (e.g. --in-sample 360d --out-of-sample 90d)")
	}
	bar := newProgressBar(stderr, "steps")
	res, err := o.svc.WalkForward(ctx, req, bar.update)
	bar.clear()
	if err != nil {
		return researchError(err)
	}
	if o.json {
		err = writeJSON(stdout, res)
	} else {
		err = printWalkForward(stdout, res)
	}
	if err != nil {
		return err
	}
	if o.report != "" {
		run, err := walkForwardSheet(res)
		if err != nil {
			return err
		}
		if err := writeRunReport(o.report, run, stderr); err != nil {
			return err
		}
	}
	if res.Partial {
		return fmt.Errorf("walk-forward %s; the output shows what finished", res.PartialReason)
	}
	return nil
}

func printWalkForward(w io.Writer, r research.WalkForwardResult) error {
	if len(r.SeriesSet) > 0 {
		return printWalkForwardSeriesSet(w, r)
	}
	kind := "rolling"
	if r.Anchored {
		kind = "anchored"
	}
	fmt.Fprintf(w, "%s on %s: %d %s windows, %d combinations each (%s), ranked by %s\n",
		r.Strategy, r.Series, len(r.Windows), kind, r.Combinations, strings.Join(r.Knobs, " × "), r.RankBy)
	fmt.Fprintf(w, "capital %s  fee %v bps  slippage %v bps\n", r.Settings.Capital, r.Settings.FeeBps, r.Settings.SlippageBps)
	fmt.Fprintf(w, "purge %d bars before each out-of-sample window, embargo %d bars after each (default none: --purge, --embargo)\n\n", intOr0(r.Settings.PurgeBars), intOr0(r.Settings.EmbargoBars))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"window", "in-sample", "out-of-sample"}
	head = append(head, r.Knobs...)
	head = append(head, "IS "+r.RankBy, "OOS "+r.RankBy, "OOS return", "efficiency")
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, win := range r.Windows {
		oos := readMetrics(win.OutOfSampleMetrics)
		row := []string{fmt.Sprint(win.Index), spanText(win.InSample), spanText(win.OutOfSample)}
		for _, k := range r.Knobs {
			row = append(row, fmt.Sprint(win.Params[k]))
		}
		row = append(row, fmtPlaces(win.InSampleScore, 3), fmtPlaces(win.OutOfSampleScore, 3), fmtPercent(oos.TotalReturn), fmtPlaces(win.Efficiency, 2))
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if s := r.OutOfSample; s != nil {
		fmt.Fprintf(w, "\nstitched out-of-sample  %s to %s  %d bars\n", s.Start, s.End, s.Bars)
		fmt.Fprintf(w, "total return %s  cagr %s  sharpe %s  max drawdown %s  trades %d  final equity %s\n",
			fmtPercent(s.TotalReturn), fmtPercent(s.CAGR), fmtPlaces(s.Sharpe, 3), fmtPercent(s.MaxDrawdown), s.Trades, s.FinalEquity)
		if r.Efficiency != nil {
			fmt.Fprintf(w, "walk-forward efficiency %.2f (annualised return out-of-sample %s, in-sample %s)\n",
				*r.Efficiency, fmtPercent(r.OutOfSampleAnnualReturn), fmtPercent(r.InSampleAnnualReturn))
		} else {
			fmt.Fprintf(w, "walk-forward efficiency undefined (annualised return in-sample %s)\n", fmtPercent(r.InSampleAnnualReturn))
		}
	}
	if r.LookaheadCheck != "" {
		fmt.Fprintf(w, "lookahead check: %s\n", r.LookaheadCheck)
	}
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	if r.Partial {
		fmt.Fprintf(w, "partial: %s\n", r.PartialReason)
	}
	if r.RunID != "" {
		fmt.Fprintf(w, "recorded in the research ledger as run %s\n", r.RunID)
	}
	return nil
}

// spanText shortens a span to its dates when its times are midnight.
func spanText(s research.Span) string {
	from, to := strings.TrimSuffix(s.From, "T00:00:00Z"), strings.TrimSuffix(s.To, "T00:00:00Z")
	return fmt.Sprintf("%s..%s", from, to)
}

// printWalkForwardSeriesSet prints each series' analysis, then the
// pooled out-of-sample figures.
func printWalkForwardSeriesSet(w io.Writer, r research.WalkForwardResult) error {
	fmt.Fprintf(w, "series set %s: %d series (%s)\n\n", r.Series, len(r.SeriesSet), strings.Join(r.SeriesSet, ", "))
	for _, one := range r.PerSeries {
		if err := printWalkForward(w, one); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	if p := r.Pooled; p != nil {
		fmt.Fprintf(w, "pooled out-of-sample over %d series (equal weight, not rebalanced): total return %s  cagr %s  mean sharpe %s  worst drawdown %s  trades %d\n",
			p.Series, fmtPercent(p.TotalReturn), fmtPercent(p.CAGR), fmtPlaces(p.Sharpe, 3), fmtPercent(p.MaxDrawdown), p.Trades)
	}
	if r.Partial {
		fmt.Fprintf(w, "partial: %s\n", r.PartialReason)
	}
	return nil
}

// intOr0 is *p, or 0 when p is nil.
func intOr0(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
