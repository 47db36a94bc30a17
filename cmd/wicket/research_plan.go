package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"wicket/internal/project"
	"wicket/strategy/ledger"
	"wicket/strategy/research"
)

// research plan and research verdict: research plans sealed in the ledger
// before the first trial (strategy/research/plan_sealed.go).

func researchPlanCommands() []*cli.Command {
	return []*cli.Command{
		{
			Name:      "plan",
			Usage:     "seal a research plan in the ledger before its first trial, or show one (NAME alone)",
			ArgsUsage: "NAME --strategy S --series SERIES --hypothesis TEXT --criteria \"dsr>=0.95, ...\" --max-trials N --holdout FROM:[TO] [--grid ...]",
			Description: "Writes a plan row to the research ledger, chained and anchored like the trials: the strategy's " +
				"content digest, the series, the grid, the criteria, the trial budget and the holdout. While the plan " +
				"has no verdict, every sweep, optimize and walk-forward of that exact text (under any name, with --plan " +
				"or without) counts against the budget and is refused past it; a run whose --from/--to reaches into the " +
				"holdout is refused, and one with an open end is cut before the holdout with a warning. Criteria metrics: " +
				strings.Join(research.PlanMetrics, ", ") + "; operators " + strings.Join(research.PlanOps, " ") + ".",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "strategy", Usage: "the strategy `NAME` or FILE the plan binds (by its content)"},
				&cli.StringFlag{Name: "series", Usage: "the `SERIES` the plan covers, e.g. BTC-USD@1h"},
				&cli.StringFlag{Name: "hypothesis", Usage: "what the strategy should show, and why, in a `SENTENCE`"},
				&cli.StringFlag{Name: "criteria", Usage: "success criteria, `\"oos_sharpe>=1, dsr>=0.95, pbo<=0.2, max_drawdown<=0.25, trades>=50\"`"},
				&cli.IntFlag{Name: "max-trials", Usage: "the trial budget `N` (sweep combinations, optimiser trials, walk-forward in-sample combinations)"},
				&cli.StringFlag{Name: "holdout", Usage: "the holdout `FROM:[TO]`, e.g. 2024-07-01: (to the end)"},
				&cli.GenericFlag{Name: "grid", Value: &listFlag{}, Usage: "the grid or search space: `KNOB=FROM:TO[:STEP]` or KNOB=V1,V2,... (repeatable)"},
				&cli.BoolFlag{Name: "json", Usage: "print the plan as JSON"},
			},
			Action: researchPlanAction,
		},
		{
			Name:      "verdict",
			Usage:     "run a plan's holdout once and judge every criterion, deflating by all the plan's trials",
			ArgsUsage: "PLAN",
			Description: "Backtests the knob values of the plan's trial with the highest Sharpe ratio on the holdout, under the costs " +
				"that trial ran with (unless cost flags are given), " +
				"judges each criterion (the deflated Sharpe ratio with N = the plan's trial count, PBO over its largest " +
				"run) and records the verdict in the ledger. A plan is judged once: a second verdict is refused. " +
				"Exits 0 when every criterion passed, 1 when one failed.",
			Flags: append([]cli.Flag{
				&cli.StringFlag{Name: "capital", Usage: "starting capital, a decimal `AMOUNT` (default research.capital)"},
				&cli.Float64Flag{Name: "fee-bps", Usage: "fee per fill in basis points of notional (default research.fee_bps)"},
				&cli.Float64Flag{Name: "slippage-bps", Usage: "slippage per fill in basis points of price (default research.slippage_bps)"},
				&cli.BoolFlag{Name: "json", Usage: "print the verdict as JSON"},
			}, costOptionFlags()...),
			Action: researchVerdictAction,
		},
	}
}

// planEngine is a research engine over the project's ledger (and, when
// pool is set, workers).
func planEngine(c *cli.Context, verb string, workers bool) (*research.Local, project.Project, func(), error) {
	p, cfg, err := openProjectAt(c.String("project"))
	if err != nil {
		return nil, p, nil, err
	}
	lg, closeLedger := openLedgerFile(c.App.ErrWriter, p, verb)
	if lg == nil {
		closeLedger()
		return nil, p, nil, fmt.Errorf("%s needs the project's research ledger (see the warning above)", verb)
	}
	rc := research.Config{Project: p, Research: cfg.Research, Recorder: lg}
	closeAll := closeLedger
	if workers {
		pool, err := researchPool(cfg)
		if err != nil {
			closeLedger()
			return nil, p, nil, err
		}
		rc.Pool = pool
		closeAll = func() { pool.Close(); closeLedger() }
	}
	return research.NewLocal(rc), p, closeAll, nil
}

func researchPlanAction(c *cli.Context) error {
	args, err := trailingFlags(c)
	if err != nil {
		return err
	}
	if len(args) != 1 {
		return usagef("research plan needs one plan NAME, got %d arguments", len(args))
	}
	sealing := c.IsSet("criteria") || c.IsSet("hypothesis") || c.IsSet("strategy")
	local, p, done, err := planEngine(c, "research plan", false)
	if err != nil {
		return err
	}
	defer done()
	ctx := ledger.WithWho(c.Context, cliWho)
	if !sealing {
		info, err := local.ShowPlan(ctx, args[0])
		if err != nil {
			return researchError(err)
		}
		return writePlan(c.App.Writer, c.Bool("json"), info)
	}
	req := research.PlanRequest{Name: args[0], Hypothesis: c.String("hypothesis"), Criteria: c.String("criteria"),
		MaxTrials: c.Int("max-trials"), Holdout: c.String("holdout"), Series: c.String("series"), Grid: research.Grid{}}
	if c.String("strategy") == "" || req.Series == "" {
		return usagef("research plan %s needs --strategy NAME and --series SERIES", args[0])
	}
	label, source, err := backtestSourceTo(c.App.ErrWriter, p, c.String("strategy"))
	if err != nil {
		return err
	}
	req.StrategyRef = research.StrategyRef{Source: source, Label: label}
	for _, g := range c.Generic("grid").(*listFlag).values {
		name, spec, err := research.ParseGridFlag(g)
		if err != nil {
			return usageError{fmt.Errorf("--grid: %w", err)}
		}
		req.Grid[name] = spec
	}
	info, err := local.SealPlan(ctx, req)
	if err != nil {
		return researchError(err)
	}
	return writePlan(c.App.Writer, c.Bool("json"), info)
}

func writePlan(w io.Writer, asJSON bool, info research.PlanInfo) error {
	if asJSON {
		return writeJSON(w, info)
	}
	state := fmt.Sprintf("open, %d of %d trials spent", info.Trials, info.MaxTrials)
	if info.Verdict != nil {
		state = fmt.Sprintf("judged at row %d after %d trials", info.Verdict.Seq, info.Trials)
	}
	fmt.Fprintf(w, "plan %s (row %d, sealed %s): %s\n", info.Name, info.Seq, info.Sealed, state)
	fmt.Fprintf(w, "  strategy    %s (content %s…)\n  series      %s\n  hypothesis  %s\n  criteria    %s\n  holdout     %s to %s\n",
		info.Strategy, info.Digest[:12], info.Series, info.Hypothesis, strings.Join(info.Criteria, ", "), info.HoldoutFrom, cmpOrEnd(info.HoldoutTo))
	if len(info.Grid) > 0 {
		fmt.Fprintf(w, "  grid        %s\n", info.Grid)
	}
	if info.Verdict != nil {
		_, err := io.WriteString(w, info.Verdict.Text())
		return err
	}
	return nil
}

func cmpOrEnd(s string) string {
	if s == "" {
		return "the end"
	}
	return s
}

func researchVerdictAction(c *cli.Context) error {
	args, err := trailingFlags(c)
	if err != nil {
		return err
	}
	if len(args) != 1 {
		return usagef("research verdict needs one PLAN, got %d arguments", len(args))
	}
	local, _, done, err := planEngine(c, "research verdict", true)
	if err != nil {
		return err
	}
	defer done()
	v, err := local.Verdict(ledger.WithWho(c.Context, cliWho), research.VerdictRequest{Plan: args[0], Costs: costFlags(c)})
	if err != nil {
		return researchError(err)
	}
	return writeVerdict(c.Context, c.App.Writer, c.Bool("json"), v)
}

func writeVerdict(_ context.Context, w io.Writer, asJSON bool, v research.Verdict) error {
	if asJSON {
		if err := writeJSON(w, v); err != nil {
			return err
		}
	} else if _, err := io.WriteString(w, v.Text()); err != nil {
		return err
	}
	if !v.Passed {
		return fmt.Errorf("plan %s failed its verdict", v.Plan)
	}
	return nil
}
