package main

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"wicket/deploy"
	"wicket/node"
	"wicket/node/server"
)

// Arming is the one thing only an operator can do: it is a CLI command that
// signs the arming with the operator key (settings/operator.key, which the
// agent's process never reads), refuses a pipe, shows what arming means
// and asks for the venue's name to be typed. The node verifies the
// signature; the terminal check is against accidents (a script arming by
// mistake), the key against the agent's process. No MCP tool, prompt or
// resource reaches it.

// defaultArm is how long `wicket node arm` arms a venue unless --for says.
const defaultArm = 8 * time.Hour

func nodeArmCommand() *cli.Command {
	return &cli.Command{
		Name:      "arm",
		Usage:     "arm a real venue so the node sends it orders (an operator at an interactive terminal only)",
		ArgsUsage: "VENUE|DEPLOYMENT",
		Description: "A deployment id (dep-...) arms that auto deployment on a real venue, with the same rules and lapse. Shows the venue, its environment (live is real money), account, cash and the node's limits, and asks you to " +
			"type the venue's name. Needs the operator key (settings/operator.key, or WICKET_OPERATOR_KEY; it signs the arming " +
			"and the node verifies it), the control key, an interactive terminal (stdin and stdout; a pipe or script is " +
			"refused), a [[venues]] table with may_arm = true, and for a live venue a node started with --allow-live. " +
			"Arming lapses after --for (default 8h, at most 24h) and whenever the node restarts.",
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "for", Value: defaultArm, Usage: "how long the venue stays armed (at most 24h)"},
			&cli.BoolFlag{Name: "without-plan", Usage: "arm an auto deployment on a real venue whose strategy has no passed research plan: the operator's signed override, shown on the deployment"},
			nodeAddrFlag(),
		},
		Action: func(c *cli.Context) error {
			name, err := oneVenue(c, "arm")
			if err != nil {
				return err
			}
			o := nodeArmOptions{project: c.String("project"), addr: c.String("addr"), name: name, d: c.Duration("for"), stdin: c.App.Reader, withoutPlan: c.Bool("without-plan")}
			return runNodeArm(c.Context, o, c.App.Writer, c.App.ErrWriter)
		},
	}
}

func nodeDisarmCommand() *cli.Command {
	return &cli.Command{
		Name:        "disarm",
		Usage:       "disarm a real venue at once (any terminal or script with the control key)",
		ArgsUsage:   "VENUE",
		Description: "The venue refuses every write from then on, until an operator arms it again.",
		Flags:       []cli.Flag{nodeAddrFlag(), &cli.BoolFlag{Name: "json", Usage: "print the venue's arming state after it as JSON"}},
		Action: func(c *cli.Context) error {
			name, err := oneVenue(c, "disarm")
			if err != nil {
				return err
			}
			o := nodeArmOptions{project: c.String("project"), addr: c.String("addr"), name: name, json: c.Bool("json")}
			return runNodeDisarm(c.Context, o, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// nodeArmOptions is what wicket node arm, disarm and clear-breaker work
// with, filled from their flags.
type nodeArmOptions struct {
	project string        // the --project flag
	addr    string        // the node's HOST:PORT; empty: wicket.toml's
	name    string        // the venue, or for arm a deployment id
	d       time.Duration // arm: how long
	stdin   io.Reader     // arm: the terminal the operator types the name at
	json    bool          // disarm
	// withoutPlan (arm, a deployment): the operator's override of the
	// research plan an auto deployment on a real venue needs.
	withoutPlan bool
}

// runNodeArm arms o.name (a venue or a deployment) for o.d, signed with
// the operator key, once the operator at the terminal types its name.
func runNodeArm(ctx context.Context, o nodeArmOptions, stdout, _ io.Writer) error {
	name, d := o.name, o.d
	if d <= 0 || d > server.MaxArm {
		return usagef("--for %s: give a duration such as 8h, at most %s", d, server.MaxArm)
	}
	if o.withoutPlan && !strings.HasPrefix(name, deploy.IDPrefix) {
		return usagef("--without-plan arms a deployment (dep-...) without a passed research plan; a venue has no plan: leave it out")
	}
	if !isTerminal(o.stdin) || !isTerminal(stdout) {
		return errors.New("wicket node arm needs an interactive terminal (stdin and stdout); a pipe or a script cannot arm a venue")
	}
	client, p, err := armClientAt(o.project, o.addr)
	if err != nil {
		return err
	}
	key, err := operatorKey(p) // keys.go: the operator commands alone read it
	if err != nil {
		return err
	}
	if strings.HasPrefix(name, deploy.IDPrefix) { // a deployment (node_deployments.go)
		act := deploy.ActArm
		if o.withoutPlan {
			act = deploy.ActArmWithoutPlan
		}
		return operatorAct(ctx, client, key, act, name, d, o.stdin, stdout)
	}
	return armVenue(ctx, client, key, name, d, o.stdin, stdout)
}

// runNodeDisarm disarms o.name at once.
func runNodeDisarm(ctx context.Context, o nodeArmOptions, stdout, _ io.Writer) error {
	client, _, err := armClientAt(o.project, o.addr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, nodeCallTimeout)
	defer cancel()
	info, err := client.Disarm(ctx, o.name)
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(stdout, info)
	}
	fmt.Fprintf(stdout, "%s is disarmed: it refuses every write until an operator arms it (wicket node arm %s)\n", info.Venue, info.Venue)
	return nil
}

// oneVenue reads VENUE, and the command's flags when they follow it
// (`wicket node arm bn --for 8h`), which the flag parser leaves as
// arguments.
func oneVenue(c *cli.Context, verb string) (string, error) {
	if c.NArg() == 0 {
		return "", usagef("node %s takes one VENUE (the name of a [[venues]] table)", verb)
	}
	fs := flag.NewFlagSet("node "+verb, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addr := fs.String("addr", c.String("addr"), "")
	var d *time.Duration
	var withoutPlan *bool
	if verb == "arm" {
		d = fs.Duration("for", c.Duration("for"), "")
		withoutPlan = fs.Bool("without-plan", c.Bool("without-plan"), "")
	}
	var asJSON *bool
	if verb == "disarm" {
		asJSON = fs.Bool("json", c.Bool("json"), "")
	}
	if err := fs.Parse(c.Args().Tail()); err != nil {
		return "", usagef("node %s: %v", verb, err)
	}
	if fs.NArg() > 0 {
		return "", usagef("node %s takes one VENUE (the name of a [[venues]] table), got also %q", verb, fs.Arg(0))
	}
	if err := c.Set("addr", *addr); err != nil {
		return "", err
	}
	if d != nil {
		if err := c.Set("for", d.String()); err != nil {
			return "", err
		}
	}
	if withoutPlan != nil {
		if err := c.Set("without-plan", strconv.FormatBool(*withoutPlan)); err != nil {
			return "", err
		}
	}
	if asJSON != nil {
		if err := c.Set("json", strconv.FormatBool(*asJSON)); err != nil {
			return "", err
		}
	}
	return c.Args().First(), nil
}

// armVenue shows what arming means, asks for the venue's name, and arms
// with an arming signed by the operator key.
func armVenue(ctx context.Context, client *node.Client, key ed25519.PrivateKey, name string, d time.Duration, in io.Reader, out io.Writer) error {
	rctx, cancel := context.WithTimeout(ctx, nodeCallTimeout)
	info, err := client.Arming(rctx, name)
	cancel()
	if err != nil {
		return err
	}
	env := info.Environment
	if info.Live {
		env += " — REAL MONEY"
	}
	fmt.Fprintf(out, "venue        %s (%s)\nenvironment  %s\naccount      %s\ncash         %s %s (buying power %s)\nsymbols      %s\n",
		info.Venue, info.Kind, env, nonEmptyText(info.Account, "unknown"), info.Cash, info.Currency, info.BuyingPower, strings.Join(info.Symbols, ", "))
	fmt.Fprintf(out, "limits       max order notional %s, max position notional %s, price collar %g%%\narming for   %s (lapses then, and at any node restart)\n",
		info.MaxOrderNotional, info.MaxPositionNotional, info.PriceCollarPct, d)
	if info.Refusal != "" {
		return errors.New(info.Refusal)
	}
	fmt.Fprintf(out, "Type the venue's name (%s) to arm it: ", info.Venue)
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && line == "" {
		return errors.New("not armed: no answer")
	}
	if typed := strings.TrimSpace(line); typed != info.Venue {
		return fmt.Errorf("not armed: %q is not %q", typed, info.Venue)
	}
	actx, cancel := context.WithTimeout(ctx, nodeCallTimeout)
	defer cancel()
	armed, err := client.Arm(actx, name, d, strings.TrimSpace(line), key)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s is armed until %s; wicket node disarm %s ends it at once\n", armed.Venue, armed.ArmedUntil.Local().Format(time.RFC1123), armed.Venue)
	return nil
}

func nonEmptyText(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}
