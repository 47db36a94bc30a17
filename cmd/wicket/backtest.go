package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"wicket/internal/project"
	"wicket/strategy/backtest"
	"wicket/strategy/history"
	"wicket/strategy/research"
	"wicket/strategy/script"
)

func backtestCommand() *cli.Command {
	return &cli.Command{
		Name:      "backtest",
		Usage:     "backtest a strategy over a stored series in a local worker: metrics, trades, warnings, optional PNG chart",
		ArgsUsage: "--local NAME|FILE [--series SYMBOL@GRANULARITY] [--param KNOB=VALUE]...",
		Description: "NAME is strategies/NAME.star in the project (or, when there is none, the built-in template " +
			"of that name); FILE is a path to a .star file. The strategy runs in a worker process limited to " +
			"research.worker_memory_mib, against this project's history store. A decision at a bar's close " +
			"fills at the next bar's open with fee and slippage; capital and costs default to wicket.toml's " +
			"[research]. Without --series the strategy must declare its universe (a portfolio strategy: " +
			"universe = [...] and signals(universe)); it runs over those series on one cash account. " +
			"Prints a summary table, or the full report with --json.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "local", Usage: "the strategy to run locally: `NAME` (strategies/NAME.star, or a template) or FILE (a .star path)"},
			&cli.StringFlag{Name: "series", Usage: "the series to run over, e.g. `BTC-USD@1h` (see wicket data list), or a series set: a comma-separated list and/or patterns such as *@1d (each series' report, then the pooled figures)"},
			&cli.StringSliceFlag{Name: "param", Usage: "override a knob, `KNOB=VALUE` (repeatable)"},
			&cli.StringFlag{Name: "from", Usage: "first bar, a `DATE` (2024-01-31) or RFC3339 time"},
			&cli.StringFlag{Name: "to", Usage: "last bar, a `DATE` (through that day) or RFC3339 time"},
			&cli.StringFlag{Name: "capital", Usage: "starting capital, a decimal `AMOUNT` (default research.capital)"},
			&cli.Float64Flag{Name: "fee-bps", Usage: "fee per fill in basis points of notional (default research.fee_bps)"},
			&cli.Float64Flag{Name: "slippage-bps", Usage: "slippage per fill in basis points of price (default research.slippage_bps)"},
			&cli.StringFlag{Name: "fill", Usage: "fill model: next_open (default) or close (optimistic, warned about)"},
			&cli.StringFlag{Name: "intrabar", Usage: "how stops, take-profits and trailing stops fill inside a bar: path (default: open, nearer extreme, farther extreme, close) or pessimistic (the stop first when a bar reaches both)"},
			&cli.BoolFlag{Name: "robustness", Usage: "also report the robustness figures: probabilistic Sharpe ratio, the trials the run's length supports, Monte Carlo of its trades and bars (reshuffle, bootstrap, stationary blocks)"},
			&cli.StringFlag{Name: "benchmark", Usage: "with --robustness, compare with a `SERIES` of the same granularity (alpha, beta, information ratio)"},
			&cli.IntFlag{Name: "mc-paths", Usage: fmt.Sprintf("with --robustness, Monte Carlo paths per method (default %d, 100 to %d)", backtest.DefaultPaths, backtest.MaxPaths)},
			&cli.Uint64Flag{Name: "seed", Usage: "with --robustness, the Monte Carlo seed (default 1): the same run and seed give the same figures"},
			allowanceFlag(),
			&cli.IntFlag{Name: "trades", Usage: fmt.Sprintf("list up to `N` trades (default %d, at most %d; the table shows the first of them)", backtest.DefaultTradesLimit, backtest.MaxTradesLimit)},
			&cli.BoolFlag{Name: "json", Usage: "print the full report as JSON (money as decimal strings)"},
			&cli.StringFlag{Name: "plot", Usage: "also write the equity and drawdown chart as a PNG to `FILE`"},
			&cli.StringFlag{Name: "report", Usage: "also write the tear sheet, one self-contained HTML page (charts, metrics, robustness figures), to `FILE`.html"},
			&cli.BoolFlag{Name: "force", Usage: "let --plot and --report replace an existing file (never one under settings/)"},
		}, costOptionFlags()...),
		Action: backtestAction,
	}
}

func backtestAction(c *cli.Context) error {
	args, err := trailingFlags(c)
	if err != nil {
		return err
	}
	if len(args) > 0 {
		return usagef("backtest takes its strategy as --local NAME|FILE, not %q (usage: wicket backtest --local NAME|FILE --series SYMBOL@1h)", args[0])
	}
	return runBacktest(c.Context, backtestOptionsOf(c), c.App.Writer, c.App.ErrWriter)
}

// backtestOptions is what wicket backtest works with, filled from its
// flags.
type backtestOptions struct {
	project string // the --project flag
	local   string // --local: NAME or FILE
	series  string // a series, a series set, or empty for a portfolio strategy
	params  []string
	from    string
	to      string
	costs   research.Costs
	fill    string
	// intrabar is --intrabar; trades is --trades.
	intrabar string
	trades   int
	// robustness is --robustness and its options, nil without it.
	robustness *backtest.Robustness
	// allowance is --allowance's values, as given.
	allowance []string
	json      bool
	plot      string // --plot FILE
	report    string // --report FILE
	force     bool   // --force: --plot and --report may replace a file
	// set names the portfolioFlags given on the command line: a portfolio
	// strategy's run refuses them.
	set map[string]bool
}

// backtestOptionsOf reads wicket backtest's flags.
func backtestOptionsOf(c *cli.Context) backtestOptions {
	o := backtestOptions{
		project: c.String("project"), local: c.String("local"), series: c.String("series"),
		params: c.StringSlice("param"), from: c.String("from"), to: c.String("to"), costs: costFlags(c),
		fill: c.String("fill"), intrabar: c.String("intrabar"), trades: c.Int("trades"),
		robustness: robustnessFlags(c), allowance: c.Generic("allowance").(*listFlag).values,
		json: c.Bool("json"), plot: c.String("plot"), report: c.String("report"), force: c.Bool("force"), set: map[string]bool{},
	}
	for _, f := range portfolioFlags {
		if c.IsSet(f) {
			o.set[f] = true
		}
	}
	return o
}

// runBacktest backtests one strategy over a series, a series set, or the
// universe the strategy declares.
func runBacktest(ctx context.Context, o backtestOptions, stdout, stderr io.Writer) error {
	if o.local == "" {
		return usagef("backtest needs --local NAME|FILE: a strategy in strategies/, a template name, or a .star file")
	}
	if o.series == "" {
		return backtestPortfolio(ctx, o, stdout, stderr) // backtest_portfolio.go: the strategy declares its universe
	}
	set := strings.ContainsAny(o.series, ",*?[") // a series set (research.Local resolves it)
	if _, _, err := history.CheckSeries(o.series); err != nil && !set {
		return usageError{fmt.Errorf("--series: %w", err)}
	}
	params, err := script.ParseAssignments(o.params)
	if err != nil {
		return usageError{fmt.Errorf("--param: %w", err)}
	}
	p, cfg, err := openProjectAt(o.project)
	if err != nil {
		return err
	}
	if err := checkOutFile(p, "plot", o.plot, o.force); err != nil { // outfile.go
		return err
	}
	if err := checkOutFile(p, "report", o.report, o.force); err != nil {
		return err
	}
	name, source, err := backtestSourceTo(stderr, p, o.local)
	if err != nil {
		return err
	}

	allowance, err := parseAllowance(o.allowance)
	if err != nil {
		return err
	}
	costs := o.costs
	research.BorrowDefault(cfg.Research, o.series, &costs.CostOptions)
	if set && o.report != "" {
		return usagef("--report draws one series' tear sheet: give --series one series, e.g. one of %s", o.series)
	}
	if set {
		return backtestSeriesSet(ctx, o, p, cfg, research.BacktestRequest{
			StrategyRef: research.StrategyRef{Source: source, Label: name}, Series: o.series, Params: params,
			From: o.from, To: o.to, Costs: costs, Fill: o.fill, Intrabar: o.intrabar, TradesLimit: o.trades,
			Plot: o.plot != "", Allowance: allowance,
		}, stdout, stderr)
	}
	req := backtest.Request{
		Source: source, Name: name, Series: o.series, Params: params,
		From: o.from, To: o.to,
		Capital:     cmp.Or(costs.Capital, cfg.Research.Capital.String()),
		FeeBps:      cmp.Or(costs.FeeBps, &cfg.Research.FeeBps),
		SlippageBps: cmp.Or(costs.SlippageBps, &cfg.Research.SlippageBps),
		Fill:        o.fill,
		Intrabar:    o.intrabar,
		TradesLimit: o.trades,
		Robustness:  o.robustness,
		Plot:        o.plot != "",
		Report:      o.report != "",
		Allowance:   allowance,
		CostOptions: costs.CostOptions,
		HistoryPath: p.HistoryPath(), IndicatorsDir: p.IndicatorsDir(),
	}
	// Check the arguments here, so a typo is a usage error before any
	// worker starts.
	if _, err := req.Config(backtest.DefaultConfig()); err != nil {
		return usageError{err}
	}

	pool, err := oneWorkerPool(cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	resp, err := pool.Backtest(ctx, req)
	if err != nil {
		return backtestError(err)
	}
	recordBacktest(ctx, stderr, p, name, source, o.series, resp.Result)
	if resp.Output != "" {
		fmt.Fprintf(stderr, "%s printed:\n%s", name, indent(resp.Output))
	}
	if file := o.plot; file != "" {
		if err := writeOutFile(file, resp.PNG, o.force); err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
		fmt.Fprintf(stderr, "chart written to %s\n", file)
	}
	if file := o.report; file != "" {
		if err := writeOutFile(file, resp.HTML, o.force); err != nil {
			return fmt.Errorf("--report: %w", err)
		}
		fmt.Fprintf(stderr, "tear sheet written to %s (%d bytes)\n", file, len(resp.HTML))
	}
	if o.json {
		_, err := fmt.Fprintf(stdout, "%s\n", resp.Result)
		return err
	}
	_, err = fmt.Fprint(stdout, resp.Text)
	return err
}

// backtestSeriesSet backtests over a series set (a list or pattern of
// series) through the research API, which pools the figures.
func backtestSeriesSet(ctx context.Context, o backtestOptions, p project.Project, cfg project.Config, req research.BacktestRequest, stdout, stderr io.Writer) error {
	pool, err := researchPool(cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	res, err := localResearch(p, cfg, pool, nil).Backtest(ctx, req)
	if err != nil {
		return researchError(err)
	}
	if res.Output != "" {
		fmt.Fprintf(stderr, "the strategy printed:\n%s", indent(res.Output))
	}
	if o.json {
		_, err := fmt.Fprintf(stdout, "%s\n", res.Result)
		return err
	}
	_, err = fmt.Fprint(stdout, res.Text)
	return err
}

// backtestSourceTo reads the strategy named by --local: a FILE path, a
// strategy in the project, or a built-in template of that name (said on
// stderr).
func backtestSourceTo(stderr io.Writer, p project.Project, arg string) (name, source string, err error) {
	name, source, err = readStrategyArgTo(stderr, &p, arg)
	var ue usageError
	if errors.As(err, &ue) {
		return "", "", usageError{fmt.Errorf("--local: %w", ue.err)}
	}
	return name, source, err
}

// backtestError turns a strategy's knob error into a usage error and
// appends a strategy error's hint.
func backtestError(err error) error {
	var se *script.Error
	if errors.As(err, &se) {
		if se.Kind == script.KindKnob {
			return usageError{fmt.Errorf("--param: %w", err)}
		}
		if se.Hint != "" {
			return fmt.Errorf("%w; hint: %s", err, se.Hint)
		}
	}
	return err
}

// robustnessFlags are --robustness and its options, nil without it.
func robustnessFlags(c *cli.Context) *backtest.Robustness {
	if !c.Bool("robustness") {
		return nil
	}
	return &backtest.Robustness{Benchmark: c.String("benchmark"), Paths: c.Int("mc-paths"), Seed: c.Uint64("seed")}
}
