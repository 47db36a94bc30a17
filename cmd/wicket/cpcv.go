package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"wicket/strategy/research"
)

// cpcvRunner is the research engine that cross-validates: this machine's
// workers (research.Local), not the data service.
type cpcvRunner interface {
	CPCV(ctx context.Context, req research.CPCVRequest, progress func(research.Progress)) (research.CPCVRunResult, error)
}

func cpcvCommand() *cli.Command {
	return &cli.Command{
		Name:      "cpcv",
		Usage:     "combinatorial purged cross-validation of a grid: out-of-sample Sharpe ratios over C(N-1,k-1) paths, and PBO",
		ArgsUsage: "NAME|FILE [--series SYMBOL@GRANULARITY] --grid KNOB=... [--groups N] [--test-groups K] [--purge BARS] [--embargo FRACTION]",
		Description: "NAME and FILE and --grid are as for wicket sweep. Every combination runs once over the range; the bars are cut " +
			"into N groups and each of the C(N,K) splits tests K of them: the combination with the best Sharpe ratio on the " +
			"other groups, less the bars purged around each test run (the strategy's longest warm-up unless --purge) and an " +
			"embargo after it, is judged on the test groups. Prints the distribution of the paths' out-of-sample Sharpe " +
			"ratios and PBO (the share of splits whose pick ranked at or below the median out of sample), or the whole " +
			"result with --json. A portfolio strategy (one that declares its universe) runs without --series, over its " +
			"universe's calendar. On this machine's workers.",
		Flags: append([]cli.Flag{
			&cli.IntFlag{Name: "groups", Value: 10, Usage: "`N`, the groups the bars are cut into"},
			&cli.IntFlag{Name: "test-groups", Value: 2, Usage: "`K`, the groups each split tests"},
			&cli.IntFlag{Name: "purge", Value: -1, Usage: "`BARS` purged on each side of a test run (default: the strategy's longest warm-up over the grid)"},
			&cli.Float64Flag{Name: "embargo", Value: research.DefaultCPCVEmbargo, Usage: "the `FRACTION` of the bars embargoed after each test run's purge"},
			runReportFlag(), // research_report.go
			intrabarFlag(),
		}, researchFlags()...),
		Action: cpcvAction,
	}
}

func cpcvAction(c *cli.Context) error {
	in, err := readResearch(c, "cpcv")
	if err != nil {
		return err
	}
	defer in.close()
	if err := checkRunReport(c); err != nil { // after readResearch read the flags that follow NAME
		return err
	}
	svc, ok := in.svc.(cpcvRunner)
	if !ok {
		return usagef("cpcv runs on this machine's workers: leave out --addr")
	}
	embargo := c.Float64("embargo")
	req := research.CPCVRequest{
		StrategyRef: in.ref, Series: in.series, Grid: in.grid, Params: in.params,
		Groups: c.Int("groups"), Test: c.Int("test-groups"), Embargo: &embargo,
		From: in.from, To: in.to, Costs: in.costs, Intrabar: in.intrabar, MaxCombinations: in.maxComb,
	}
	if p := c.Int("purge"); p >= 0 {
		req.Purge = &p
	}
	bar := newProgressBar(c.App.ErrWriter, "combinations")
	res, err := svc.CPCV(c.Context, req, bar.update)
	bar.clear()
	if err != nil {
		return researchError(err)
	}
	if err := writeRunReport(c.String("report"), cpcvSheet(res), c.App.ErrWriter); err != nil {
		return err
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, res)
	}
	return printCPCV(c.App.Writer, res)
}

func printCPCV(w io.Writer, r research.CPCVRunResult) error {
	fmt.Fprintf(w, "%s on %s (%s): %d combinations (%s), %d groups, %d tested: %d splits, %d paths\n",
		r.Strategy, r.Series, spanText(r.Range), r.Combinations, strings.Join(r.Knobs, " × "), r.Groups, r.Test, len(r.Splits), len(r.PathSharpe))
	fmt.Fprintf(w, "purge %d bars (%s), embargo %d bars\n", r.Purge, r.PurgeFrom, r.EmbargoBars)
	fmt.Fprintf(w, "out-of-sample path sharpe: mean %s  p5 %s  p25 %s  median %s  p75 %s  p95 %s\n",
		fmtPlaces(r.Mean, 3), fmtPlaces(r.P5, 3), fmtPlaces(r.P25, 3), fmtPlaces(r.Median, 3), fmtPlaces(r.P75, 3), fmtPlaces(r.P95, 3))
	fmt.Fprintf(w, "pbo %s\n", fmtPlaces(r.PBO, 3))
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	return nil
}
