package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/urfave/cli/v2"

	"wicket/deploy"
	"wicket/strategy/backtest"
	"wicket/strategy/script"
)

// `wicket deploy NAME ...` asks the node to run a strategy: the node checks
// the request (series, venue, validation, allowance, arming) and the
// preview shows what it resolved; nothing is deployed without --yes or a
// y at a terminal, as `wicket trade` sends nothing without one.

func deployCommand() *cli.Command {
	return &cli.Command{
		Name:      "deploy",
		Usage:     "run a strategy on the node: each change of target on a closed bar becomes an order (previewed; --yes or y at a terminal deploys)",
		ArgsUsage: "NAME --series SYMBOL@GRAN --venue VENUE [--param KNOB=VALUE]... [--mode propose|auto] [--capital X] [allowance flags] [--yes]",
		Description: "The node evaluates strategies/NAME.star at every closed bar of the series as a backtest would, sizes the change of " +
			"target within --capital and the allowance, and sends it through its one write path. --mode propose (the default) holds " +
			"each order for an operator (wicket node approve-proposal); auto sends it (a real venue: only while the deployment and " +
			"the venue are armed). A breaker (daily loss, drawdown, orders per day, tracking gap) pauses the deployment until wicket node resume. " +
			"See docs/deployments.md.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "series", Usage: "the `SYMBOL@GRAN` it trades, e.g. BTC-USD@1h"},
			&cli.StringFlag{Name: "venue", Usage: "the node's venue it trades on"},
			&cli.StringSliceFlag{Name: "param", Usage: "set a knob, `KNOB=VALUE` (repeatable)"},
			&cli.StringFlag{Name: "mode", Value: string(deploy.ModePropose), Usage: "propose (an operator approves each order) or auto"},
			&cli.StringFlag{Name: "capital", Usage: "the allocation it trades in (default: wicket.toml [research] capital)"},
			&cli.StringFlag{Name: "max-order-notional", Usage: "allowance: clip each order's notional to `X`"},
			&cli.StringFlag{Name: "max-position-notional", Usage: "allowance: clip the position's notional to `X`"},
			&cli.StringFlag{Name: "max-orders-per-day", Usage: "allowance: pause before the order that would exceed `N` in a UTC day"},
			&cli.StringFlag{Name: "max-daily-loss", Usage: "allowance: pause when equity falls more than `X` below the UTC day's first"},
			&cli.StringFlag{Name: "max-drawdown-pct", Usage: "allowance: pause when equity falls more than `P` percent below its peak"},
			&cli.StringFlag{Name: "max-tracking-gap", Usage: "allowance: pause when live P&L leaves its replay's by more than `X` (money, or bps of the capital: 150bps)"},
			&cli.IntFlag{Name: "warmup", Usage: "bars evaluated before the bar decided at (0: the strategy's own, at least 500)"},
			&cli.BoolFlag{Name: "yes", Usage: "deploy without asking"},
			&cli.BoolFlag{Name: "json", Usage: "print the deployment as JSON"},
			nodeAddrFlag(),
		},
		Action: func(c *cli.Context) error {
			pos, err := trailingFlags(c)
			if err != nil {
				return err
			}
			if len(pos) != 1 {
				return usagef("deploy takes one strategy NAME (strategies/NAME.star), then --series and --venue")
			}
			o := deployOptions{
				project: c.String("project"), addr: c.String("addr"), name: pos[0],
				series: c.String("series"), venue: c.String("venue"), params: c.StringSlice("param"),
				mode: c.String("mode"), capital: c.String("capital"), allowance: map[string]string{}, warmup: c.Int("warmup"),
				yes: c.Bool("yes"), json: c.Bool("json"), stdin: c.App.Reader,
			}
			for _, name := range backtest.AllowanceNames {
				o.allowance[name] = c.String(strings.ReplaceAll(name, "_", "-"))
			}
			return runDeploy(c.Context, o, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// deployOptions is what wicket deploy works with, filled from its
// argument and flags.
type deployOptions struct {
	project string // the --project flag
	addr    string // the node's HOST:PORT; empty: wicket.toml's
	name    string // the strategy: strategies/NAME.star
	series  string
	venue   string
	params  []string
	mode    string
	capital string // empty: wicket.toml [research] capital
	// allowance holds each backtest.AllowanceNames limit's flag value,
	// empty when not given.
	allowance map[string]string
	warmup    int
	yes       bool      // deploy without asking
	json      bool      // print the deployment as JSON
	stdin     io.Reader // the terminal asked when yes is false
}

// runDeploy checks a deployment on the node, shows it, and deploys it with
// o.yes or a y at a terminal.
func runDeploy(ctx context.Context, o deployOptions, stdout, stderr io.Writer) error {
	spec, err := deploySpec(o)
	if err != nil {
		return err
	}
	client, _, err := armClientAt(o.project, o.addr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var preview deploy.Deployment
	if err := client.DeploymentsPost(ctx, "/check", spec, &preview); err != nil {
		return err
	}
	out := stdout
	if !o.json {
		printDeployment(out, preview)
	}
	if !o.yes {
		if !isTerminal(o.stdin) || !isTerminal(stdout) {
			fmt.Fprintln(stderr, "nothing was deployed: run the same command with --yes to deploy it (it is checked again just before)")
			if o.json {
				return writeJSON(out, preview)
			}
			return nil
		}
		fmt.Fprint(out, "deploy? [y/N] ")
		line, _ := bufio.NewReader(o.stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintln(out, "nothing was deployed")
			return nil
		}
	}
	var d deploy.Deployment
	if err := client.DeploymentsPost(ctx, "", spec, &d); err != nil {
		return err
	}
	if o.json {
		return writeJSON(out, d)
	}
	fmt.Fprintf(out, "deployed %s (%s); wicket node deployments shows it, wicket node stop-deployment %s stops it\n", d.ID, d.State, d.ID)
	return nil
}

// deploySpec reads the strategy and the options into a request.
func deploySpec(o deployOptions) (deploy.Spec, error) {
	p, cfg, err := openProjectAt(o.project)
	if err != nil {
		return deploy.Spec{}, err
	}
	name := strings.TrimSuffix(o.name, ".star")
	path, err := p.StrategyPath(name)
	if err != nil {
		return deploy.Spec{}, usageError{err}
	}
	src, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return deploy.Spec{}, fmt.Errorf("no strategy %s: strategies/%s.star does not exist (wicket strategy list shows them)", name, name)
	}
	if err != nil {
		return deploy.Spec{}, err
	}
	if o.series == "" || o.venue == "" {
		return deploy.Spec{}, usagef("deploy needs --series SYMBOL@GRAN and --venue VENUE")
	}
	params, err := script.ParseAssignments(o.params)
	if err != nil {
		return deploy.Spec{}, usageError{err}
	}
	spec := deploy.Spec{Strategy: name + ".star", Source: string(src), Params: params, Series: o.series, Venue: o.venue,
		Mode: deploy.Mode(o.mode), Capital: cfg.Research.Capital, Warmup: o.warmup}
	if v := o.capital; v != "" {
		d, err := decimal.NewFromString(v)
		if err != nil {
			return spec, usagef("--capital %q: give an amount such as 1000", v)
		}
		spec.Capital = d
	}
	// The allowance flags are the backtest's --allowance names, read by
	// its one parser, so a limit means the same in research and here.
	var kv []string
	for _, name := range backtest.AllowanceNames {
		if v := o.allowance[name]; v != "" {
			kv = append(kv, name+"="+v)
		}
	}
	a, err := backtest.ParseAllowance(kv)
	if err != nil {
		return spec, usageError{err}
	}
	if a != nil {
		spec.Allowance = *a
	}
	return spec, nil
}

// printDeployment is the one readable form of a deployment.
func printDeployment(w io.Writer, d deploy.Deployment) {
	id := d.ID
	if id == "" {
		id = "(not deployed yet)"
	}
	a := d.Allowance
	limit := func(v *decimal.Decimal, unit string) string {
		if v == nil {
			return "none"
		}
		return v.String() + unit
	}
	orders := "none"
	if a.MaxOrdersPerDay > 0 {
		orders = fmt.Sprint(a.MaxOrdersPerDay)
	}
	fmt.Fprintf(w, "deployment   %s\nstrategy     %s sha256 %s\nknobs        %v\nseries       %s on venue %s\nmode         %s\ncapital      %s\n",
		id, d.Strategy, d.StrategyHash, deploy.Knobs(d.Params), d.Series, d.Venue, d.Mode, d.Capital)
	for _, l := range d.LegLines() { // a portfolio: one deployment over its universe
		fmt.Fprintf(w, "leg          %s\n", l)
	}
	if e := d.Exits; e.Any() {
		fmt.Fprintf(w, "exits        stop_loss %v, take_profit %v, trailing_stop %v (fractions of the entry; 0 none): placed with each position\n",
			e.StopLoss, e.TakeProfit, e.TrailingStop)
	}
	gap := "none"
	if g := a.MaxTrackingGap; g != nil {
		gap = g.String()
	}
	fmt.Fprintf(w, "allowance    max order notional %s, max position notional %s, max orders per day %s, max daily loss %s, max drawdown %s, max tracking gap %s\n",
		limit(a.MaxOrderNotional, ""), limit(a.MaxPositionNotional, ""), orders, limit(a.MaxDailyLoss, ""), limit(a.MaxDrawdownPct, "%"), gap)
	fmt.Fprintf(w, "warm-up      %d bars\n", d.Warmup)
	if pv := d.Preview; pv != nil && pv.Plan != nil {
		fmt.Fprintf(w, "plan         %s\n", planLine(pv.Plan)) // node_plans.go
	}
	if pv := d.Preview; pv != nil && pv.StartPoint != nil {
		fmt.Fprintf(w, "start point  %s\n", pv.StartPoint.Verdict)
	}
	if pv := d.Preview; pv != nil && pv.Lookahead != "" {
		fmt.Fprintf(w, "lookahead    %s\n", pv.Lookahead)
	}
	if pv := d.Preview; pv != nil && pv.Backtest != nil {
		b := pv.Backtest
		ratio := func(v *float64, pct bool) string {
			switch {
			case v == nil:
				return "n/a"
			case pct:
				return fmt.Sprintf("%.2f%%", 100**v)
			}
			return fmt.Sprintf("%.2f", *v)
		}
		if b.Error != "" {
			fmt.Fprintf(w, "backtest     since %s: %s\n", b.From, b.Error)
		} else {
			fmt.Fprintf(w, "backtest     since %s under the allowance: total return %s, sharpe %s, max drawdown %s, %d trades\n",
				b.From, ratio(b.TotalReturn, true), ratio(b.Sharpe, false), ratio(b.MaxDrawdown, true), b.Trades)
		}
		if br := b.Breaker; br != nil {
			fmt.Fprintf(w, "breaker      %s tripped at %s: %s\n", br.Name, br.Time.Format(time.RFC3339), br.Reason)
		}
	}
	if d.ID == "" {
		return
	}
	state := string(d.State)
	if d.Reason != "" {
		state += ": " + d.Reason
	}
	fmt.Fprintf(w, "state        %s\nequity       %s (cash %s, position %s, peak %s)\norders today %d; missed bars %d\n",
		state, d.Equity.StringFixed(2), d.Cash.StringFixed(2), d.Position, d.Peak.StringFixed(2), d.OrdersToday, d.Missed)
	if !d.Funding.IsZero() {
		fmt.Fprintf(w, "funding      %s booked from the venue (received positive), in cash\n", d.Funding.StringFixed(2))
	}
	if !d.ArmedUntil.IsZero() {
		fmt.Fprintf(w, "armed until  %s\n", d.ArmedUntil.Format(time.RFC3339))
		if d.PlanOverride != "" {
			fmt.Fprintf(w, "plan override %s\n", d.PlanOverride)
		}
	}
	for _, p := range d.Proposals {
		fmt.Fprintf(w, "proposal     %s: %s %s (target %v) at the bar of %s; wicket node approve-proposal %s\n",
			p.ClientOrderID, p.Side, p.Quantity, p.Target, p.Bar.Format(time.RFC3339), p.ClientOrderID)
	}
}
