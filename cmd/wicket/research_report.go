package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"wicket/strategy/backtest"
	"wicket/strategy/research"
	"wicket/strategy/tearsheet"
)

// runReportFlag is --report on walk-forward and cpcv: the run's tear
// sheet (strategy/tearsheet's RenderRun).
func runReportFlag() cli.Flag {
	return &cli.StringFlag{Name: "report", Usage: "also write the run's tear sheet, one self-contained HTML page, to `FILE`.html (a new file)"}
}

// checkRunReport refuses a --report file before the run: under the
// project's settings/, or there already.
func checkRunReport(c *cli.Context) error {
	file := c.String("report")
	if file == "" {
		return nil
	}
	p, _, err := openProjectAt(c.String("project"))
	if err != nil {
		return err
	}
	return checkOutFile(p, "report", file, false)
}

// writeRunReport renders run to file, saying so on stderr.
func writeRunReport(file string, run tearsheet.Run, stderr io.Writer) error {
	if file == "" {
		return nil
	}
	html, err := tearsheet.RenderRun(run)
	if err != nil {
		return err
	}
	if err := writeOutFile(file, html, false); err != nil {
		return fmt.Errorf("--report: %w", err)
	}
	fmt.Fprintf(stderr, "tear sheet written to %s (%d bytes)\n", file, len(html))
	return nil
}

// walkForwardSheet is a walk-forward's tear sheet: the stitched
// out-of-sample curve, each window's in-sample and out-of-sample score,
// and the windows.
func walkForwardSheet(r research.WalkForwardResult) (tearsheet.Run, error) {
	if len(r.SeriesSet) > 0 {
		return tearsheet.Run{}, usagef("--report draws one series' walk-forward: run it on one series of the set")
	}
	kind := "rolling"
	if r.Anchored {
		kind = "anchored"
	}
	run := tearsheet.Run{Kind: "walk-forward", Title: r.Strategy + " on " + r.Series, Warnings: r.Warnings,
		EquityTitle: "Stitched out-of-sample equity",
		Settings: [][2]string{{"windows", fmt.Sprintf("%d %s", len(r.Windows), kind)}, {"combinations", strconv.Itoa(r.Combinations)},
			{"knobs", strings.Join(r.Knobs, ", ")}, {"ranked by", r.RankBy}, {"capital", r.Settings.Capital},
			{"fee", fmt.Sprintf("%v bps", r.Settings.FeeBps)}, {"slippage", fmt.Sprintf("%v bps", r.Settings.SlippageBps)},
			{"purge", fmt.Sprintf("%d bars", intOr0(r.Settings.PurgeBars))}, {"embargo", fmt.Sprintf("%d bars", intOr0(r.Settings.EmbargoBars))}},
	}
	if s := r.OutOfSample; s != nil {
		run.Metrics = [][2]string{{"total return", fmtPercent(s.TotalReturn)}, {"CAGR", fmtPercent(s.CAGR)}, {"Sharpe", fmtPlaces(s.Sharpe, 3)},
			{"Sortino", fmtPlaces(s.Sortino, 3)}, {"max drawdown", fmtPercent(s.MaxDrawdown)}, {"trades", strconv.Itoa(s.Trades)},
			{"final equity", s.FinalEquity}, {"walk-forward efficiency", fmtPlaces(r.Efficiency, 2)}, {"start", s.Start}, {"end", s.End}}
	}
	capital, _ := strconv.ParseFloat(r.Settings.Capital, 64)
	var times []time.Time
	var equity []float64
	for _, p := range r.Equity {
		t, err := time.Parse(time.RFC3339, p.Time)
		e, err2 := strconv.ParseFloat(p.Equity, 64)
		if err != nil || err2 != nil {
			return tearsheet.Run{}, fmt.Errorf("the result's equity point %+v cannot be read", p)
		}
		times, equity = append(times, t), append(equity, e)
	}
	run.Equity = tearsheet.Points(times, equity, capital)
	// The stitched curve as the result reports it (downsampled): its
	// drawdown periods, noted as read from those points.
	unix := make([]int64, len(times))
	for i, t := range times {
		unix[i] = t.Unix()
	}
	run.Capital, run.Drawdowns, run.DrawdownsThinned = capital, &backtest.Curve{Time: unix, Equity: equity}, true
	pairs := &tearsheet.Pairs{Name: "window-scores", Title: r.RankBy + " per window", NameA: "in-sample", NameB: "out-of-sample"}
	table := &tearsheet.Table{Title: "Windows", Head: []string{"window", "in-sample", "out-of-sample", "params", "IS " + r.RankBy, "OOS " + r.RankBy, "efficiency"}}
	for _, w := range r.Windows {
		pairs.Labels = append(pairs.Labels, strconv.Itoa(w.Index))
		pairs.A, pairs.B = append(pairs.A, orNaN(w.InSampleScore)), append(pairs.B, orNaN(w.OutOfSampleScore))
		params := make([]string, 0, len(r.Knobs))
		for _, k := range r.Knobs {
			params = append(params, fmt.Sprintf("%s=%v", k, w.Params[k]))
		}
		table.Rows = append(table.Rows, []string{strconv.Itoa(w.Index), spanText(w.InSample), spanText(w.OutOfSample), strings.Join(params, ", "),
			fmtPlaces(w.InSampleScore, 3), fmtPlaces(w.OutOfSampleScore, 3), fmtPlaces(w.Efficiency, 2)})
	}
	run.Pairs, run.Table = pairs, table
	return run, nil
}

// cpcvSheet is a CPCV's tear sheet: the distribution of its paths'
// out-of-sample Sharpe ratios and its splits.
func cpcvSheet(r research.CPCVRunResult) tearsheet.Run {
	run := tearsheet.Run{Kind: "cpcv", Title: r.Strategy + " on " + r.Series, Warnings: r.Warnings,
		Settings: [][2]string{{"range", spanText(r.Range)}, {"combinations", strconv.Itoa(r.Combinations)}, {"knobs", strings.Join(r.Knobs, ", ")},
			{"groups", strconv.Itoa(r.Groups)}, {"test groups", strconv.Itoa(r.Test)}, {"splits", strconv.Itoa(len(r.Splits))},
			{"purge", fmt.Sprintf("%d bars (%s)", r.Purge, r.PurgeFrom)}, {"embargo", fmt.Sprintf("%d bars", r.EmbargoBars)},
			{"capital", r.Settings.Capital}, {"fee", fmt.Sprintf("%v bps", r.Settings.FeeBps)}, {"slippage", fmt.Sprintf("%v bps", r.Settings.SlippageBps)}},
		Metrics: [][2]string{{"paths", strconv.Itoa(len(r.PathSharpe))}, {"mean path Sharpe", fmtPlaces(r.Mean, 3)}, {"p5", fmtPlaces(r.P5, 3)},
			{"p25", fmtPlaces(r.P25, 3)}, {"median", fmtPlaces(r.Median, 3)}, {"p75", fmtPlaces(r.P75, 3)}, {"p95", fmtPlaces(r.P95, 3)},
			{"PBO", fmtPlaces(r.PBO, 3)}},
		DistTitle: "Out-of-sample Sharpe ratio per path", DistUnit: "paths",
		DistCaption: fmt.Sprintf("%d paths, each covering every bar once with the splits' picks on their test groups; annualised", len(r.PathSharpe)),
	}
	for _, s := range r.PathSharpe {
		run.Dist = append(run.Dist, orNaN(s))
	}
	table := &tearsheet.Table{Title: "Splits", Head: []string{"test groups", "training bars", "picked", "logit"}}
	for i, s := range r.Splits {
		picked := "none"
		if i < len(r.Picks) && r.Picks[i] != nil {
			var parts []string
			for _, k := range r.Knobs {
				parts = append(parts, fmt.Sprintf("%s=%v", k, r.Picks[i][k]))
			}
			picked = strings.Join(parts, ", ")
		}
		groups := make([]string, len(s.Test))
		for j, g := range s.Test {
			groups[j] = strconv.Itoa(g + 1)
		}
		table.Rows = append(table.Rows, []string{strings.Join(groups, ", "), strconv.Itoa(s.Train), picked, fmtPlaces(s.Logit, 3)})
	}
	run.Table = table
	return run
}

func orNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}
