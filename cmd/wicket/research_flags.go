package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"wicket/strategy/backtest"
	"wicket/strategy/ledger"
	"wicket/strategy/research"
	"wicket/strategy/script"
)

// researchFlags are the flags sweep and walk-forward share.
func researchFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "series", Usage: "the series to run over, e.g. `BTC-USD@1h` (see wicket data list), or a series set: a comma-separated list and/or patterns such as *@1d, ranked by pooled figures"},
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
		insecureClusterFlag(),
		&cli.BoolFlag{Name: "json", Usage: "print the whole result as JSON"},
		&cli.StringFlag{Name: "plan", Usage: "count the trials against research plan `NAME` (wicket research plan); a strategy under an open plan is counted against it anyway"},
	}, costOptionFlags()...)
}

// costOptionFlags are the flags of the costs beyond fee and slippage
// (backtest.CostOptions), shared by backtest, sweep, walk-forward and
// optimize.
func costOptionFlags() []cli.Flag {
	return []cli.Flag{
		&cli.GenericFlag{Name: "funding", Value: &fundingFlag{}, Usage: "perpetual funding at each settlement: `on` (the store must hold the pair's rates: wicket data fetch --funding), auto (on when the store holds them) or off (the default)"},
		&cli.Float64Flag{Name: "borrow-rate", Usage: "annual borrow `RATE` a short pays on its notional, e.g. 0.05 (default research.borrow_rates for the symbol, else none)"},
		&cli.Float64Flag{Name: "leverage", Usage: "isolated margin of notional / `N` per position, liquidated at the documented price (default none)"},
		&cli.Float64Flag{Name: "maintenance-margin", Usage: "with --leverage, the `FRACTION` of notional kept as maintenance margin (default 0.005)"},
		&cli.Float64Flag{Name: "max-volume-pct", Usage: "cap each fill at `PCT` percent of its bar's volume (default 10)"},
		&cli.StringFlag{Name: "volume-cap", Usage: "what becomes of the rest of a capped fill: `carry` to the next bar (default) or drop; off turns the cap off"},
	}
}

// intrabarFlag is --intrabar for sweep and walk-forward, as backtest has it.
func intrabarFlag() cli.Flag {
	return &cli.StringFlag{Name: "intrabar", Usage: "how stops, take-profits and trailing stops fill inside a bar: `path` (default) or pessimistic (the stop first when a bar reaches both)"}
}

// fundingFlag is --funding: on, off or auto (v nil and auto set).
type fundingFlag struct {
	v    *bool
	auto bool
}

func (f *fundingFlag) Set(s string) error {
	f.auto = false
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "on", "true":
		v := true
		f.v = &v
	case "off", "false", "":
		v := false
		f.v = &v
	case "auto":
		f.v, f.auto = nil, true
	default:
		return fmt.Errorf("--funding %q is not one of on, off, auto", s)
	}
	return nil
}

func (f *fundingFlag) String() string {
	switch {
	case f == nil:
		return ""
	case f.auto:
		return "auto"
	case f.v == nil:
		return ""
	case *f.v:
		return "on"
	}
	return "off"
}

// allowanceFlag is --allowance: a deployment's limits for a backtest.
func allowanceFlag() cli.Flag {
	return &cli.GenericFlag{Name: "allowance", Value: &listFlag{}, Usage: "run under a deployment's limits, `NAME=VALUE` (repeatable or comma-separated): " +
		strings.Join(backtest.AllowanceNames, ", ") + "; a breaker that trips pauses the run (result: breaker)"}
}

// parseAllowance parses --allowance's values: nil when there are none.
func parseAllowance(values []string) (*backtest.Allowance, error) {
	a, err := backtest.ParseAllowance(values)
	if err != nil {
		return nil, usageError{fmt.Errorf("--allowance: %w", err)}
	}
	return a, nil
}

// listFlag collects a repeatable flag's values verbatim (commas included,
// unlike a string slice flag).
type listFlag struct{ values []string }

func (l *listFlag) Set(v string) error { l.values = append(l.values, v); return nil }

func (l *listFlag) String() string { return strings.Join(l.values, " ") }

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
	// intrabar is --intrabar (sweep and walk-forward).
	intrabar string
	plan     string // --plan
	svc      researcher
	close    func()
}

// researchOptions is what sweep and walk-forward read from their
// argument and the shared flags.
type researchOptions struct {
	project  string // the --project flag
	strategy string // the argument: NAME or FILE
	series   string
	grid     []string // --grid's values, as given
	params   []string // --param's values, as given
	from     string
	to       string
	costs    research.Costs
	maxComb  int
	intrabar string // --intrabar (sweep and walk-forward)
	plan     string // --plan: the research plan the trials count against
	addr     string // --addr: the data service to run on instead
	// engine builds the local research engine (with the command line's
	// --cluster flags); unused with addr.
	engine researchEngine
}

// researchOptionsOf reads the strategy argument and the shared flags.
func researchOptionsOf(c *cli.Context, verb string) (researchOptions, error) {
	args, err := trailingFlags(c)
	if err != nil {
		return researchOptions{}, err
	}
	if len(args) != 1 {
		return researchOptions{}, usagef("%s needs one strategy, NAME or FILE, got %d arguments (usage: wicket %s NAME --series SYMBOL@1h --grid fast=5:50:5)", verb, len(args), verb)
	}
	return researchOptions{
		project: c.String("project"), strategy: args[0], series: c.String("series"),
		grid: c.Generic("grid").(*listFlag).values, params: c.StringSlice("param"),
		from: c.String("from"), to: c.String("to"), costs: costFlags(c), maxComb: c.Int("max-combinations"),
		intrabar: c.String("intrabar"), plan: c.String("plan"), addr: c.String("addr"), engine: clusteredResearchOf(c),
	}, nil
}

// readResearch parses the strategy argument and the shared flags, opens
// the project and picks local workers or the data service.
func readResearch(c *cli.Context, verb string) (researchInput, error) {
	o, err := researchOptionsOf(c, verb)
	if err != nil {
		return researchInput{}, err
	}
	in, err := openResearch(o, verb, c.App.ErrWriter)
	if err != nil {
		return in, err
	}
	c.Context = ledger.WithWho(c.Context, cliWho)
	return in, nil
}

// openResearch checks o, opens the project and picks local workers or the
// data service; the caller closes the input. Its research is the CLI's in
// the ledger when the context says so (ledger.WithWho, cliWho).
func openResearch(o researchOptions, verb string, stderr io.Writer) (researchInput, error) {
	var in researchInput
	in.series = o.series
	if in.series == "" && !portfolioVerbs[verb] {
		return in, usagef("%s needs --series SYMBOL@GRANULARITY, e.g. --series BTC-USD@1h (see wicket data list)", verb)
	}
	if len(o.grid) == 0 {
		return in, usagef("%s needs at least one --grid KNOB=FROM:TO:STEP or KNOB=V1,V2,... (see wicket strategy params NAME for the knobs)", verb)
	}
	in.grid = research.Grid{}
	for _, g := range o.grid {
		name, spec, err := research.ParseGridFlag(g)
		if err != nil {
			return in, usageError{fmt.Errorf("--grid: %w", err)}
		}
		if _, dup := in.grid[name]; dup {
			return in, usagef("--grid: knob %s is given twice", name)
		}
		in.grid[name] = spec
	}
	var err error
	if in.params, err = script.ParseAssignments(o.params); err != nil {
		return in, usageError{fmt.Errorf("--param: %w", err)}
	}
	in.from, in.to = o.from, o.to
	in.maxComb = o.maxComb
	in.costs = o.costs
	in.intrabar = o.intrabar
	in.plan = o.plan
	p, cfg, err := openProjectAt(o.project)
	if err != nil {
		return in, err
	}
	label, source, err := backtestSourceTo(stderr, p, o.strategy)
	if err != nil {
		return in, err
	}
	in.ref = research.StrategyRef{Source: source, Label: label}
	if o.addr != "" {
		client, err := dataClient(o.addr, &p)
		if err != nil {
			return in, err
		}
		in.svc, in.close = client, func() {}
		return in, nil
	}
	pool, err := researchPool(cfg)
	if err != nil {
		return in, err
	}
	rec, closeLedger := openLedger(stderr, p, verb)
	local, closeCluster, err := o.engine(p, cfg, pool, rec)
	if err != nil {
		closeLedger()
		pool.Close()
		return in, err
	}
	in.svc = local
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
	if f, ok := c.Generic("funding").(*fundingFlag); ok {
		costs.Funding, costs.FundingAuto = f.v, f.auto
	}
	research.FundingDefault(&costs)
	for _, o := range []struct {
		name string
		dst  **float64
	}{{"borrow-rate", &costs.BorrowRate}, {"leverage", &costs.Leverage}, {"maintenance-margin", &costs.MaintenanceMargin}, {"max-volume-pct", &costs.MaxVolumePct}} {
		if c.IsSet(o.name) {
			v := c.Float64(o.name)
			*o.dst = &v
		}
	}
	costs.VolumeCap = c.String("volume-cap")
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
