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
			"the venue are armed). A breaker (daily loss, drawdown, orders per day) pauses the deployment until wicket node resume. " +
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
			spec, err := deploySpec(c, pos[0])
			if err != nil {
				return err
			}
			client, _, err := armClient(c)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(c.Context, time.Minute)
			defer cancel()
			var preview deploy.Deployment
			if err := client.DeploymentsPost(ctx, "/check", spec, &preview); err != nil {
				return err
			}
			out := c.App.Writer
			if !c.Bool("json") {
				printDeployment(out, preview)
			}
			if !c.Bool("yes") {
				if !isTerminal(c.App.Reader) || !isTerminal(c.App.Writer) {
					fmt.Fprintln(c.App.ErrWriter, "nothing was deployed: run the same command with --yes to deploy it (it is checked again just before)")
					if c.Bool("json") {
						return writeJSON(out, preview)
					}
					return nil
				}
				fmt.Fprint(out, "deploy? [y/N] ")
				line, _ := bufio.NewReader(c.App.Reader).ReadString('\n')
				if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
					fmt.Fprintln(out, "nothing was deployed")
					return nil
				}
			}
			var d deploy.Deployment
			if err := client.DeploymentsPost(ctx, "", spec, &d); err != nil {
				return err
			}
			if c.Bool("json") {
				return writeJSON(out, d)
			}
			fmt.Fprintf(out, "deployed %s (%s); wicket node deployments shows it, wicket node stop-deployment %s stops it\n", d.ID, d.State, d.ID)
			return nil
		},
	}
}

// deploySpec reads the strategy and the flags into a request.
func deploySpec(c *cli.Context, name string) (deploy.Spec, error) {
	p, cfg, err := openProject(c)
	if err != nil {
		return deploy.Spec{}, err
	}
	name = strings.TrimSuffix(name, ".star")
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
	if c.String("series") == "" || c.String("venue") == "" {
		return deploy.Spec{}, usagef("deploy needs --series SYMBOL@GRAN and --venue VENUE")
	}
	params, err := script.ParseAssignments(c.StringSlice("param"))
	if err != nil {
		return deploy.Spec{}, usageError{err}
	}
	spec := deploy.Spec{Strategy: name + ".star", Source: string(src), Params: params, Series: c.String("series"), Venue: c.String("venue"),
		Mode: deploy.Mode(c.String("mode")), Capital: cfg.Research.Capital, Warmup: c.Int("warmup")}
	if v := c.String("capital"); v != "" {
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
		if v := c.String(strings.ReplaceAll(name, "_", "-")); v != "" {
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
		id, d.Strategy, d.StrategyHash, d.Params, d.Series, d.Venue, d.Mode, d.Capital)
	fmt.Fprintf(w, "allowance    max order notional %s, max position notional %s, max orders per day %s, max daily loss %s, max drawdown %s\n",
		limit(a.MaxOrderNotional, ""), limit(a.MaxPositionNotional, ""), orders, limit(a.MaxDailyLoss, ""), limit(a.MaxDrawdownPct, "%"))
	fmt.Fprintf(w, "warm-up      %d bars\n", d.Warmup)
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
	if !d.ArmedUntil.IsZero() {
		fmt.Fprintf(w, "armed until  %s\n", d.ArmedUntil.Format(time.RFC3339))
	}
	for _, p := range d.Proposals {
		fmt.Fprintf(w, "proposal     %s: %s %s (target %v) at the bar of %s; wicket node approve-proposal %s\n",
			p.ClientOrderID, p.Side, p.Quantity, p.Target, p.Bar.Format(time.RFC3339), p.ClientOrderID)
	}
}
