package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"wicket/deploy"
	"wicket/node"
	"wicket/node/server"
)

// The operator's risk controls at a terminal (docs/node.md "Risk
// controls"): wicket node kill, resume-trading, heartbeat and
// reset-throttle sign with the operator key (settings/operator.key, which
// the agent's process never reads) and refuse a pipe; wicket node risk
// shows every limit and its headroom with the observe key.

// The deployments' surface is how the kill switch and the dead man's
// switch pause deployments.
var _ server.DeploymentPauser = (*deploy.Handler)(nil)

func nodeRiskCommands() []*cli.Command {
	operator := func(name, usage, desc string, flags []cli.Flag, run func(ctx context.Context, c *node.Client, key ed25519.PrivateKey, cc *cli.Context, out io.Writer) error) *cli.Command {
		return &cli.Command{
			Name: name, Usage: usage + " (an operator at an interactive terminal only)",
			Description: desc + " Needs the operator key (settings/operator.key, or WICKET_OPERATOR_KEY), the control key and an interactive terminal; the control key alone is refused (403).",
			Flags:       append(flags, nodeAddrFlag()),
			Action: func(cc *cli.Context) error {
				if cc.NArg() > 0 {
					return usagef("node %s takes no arguments, got %q", name, cc.Args().First())
				}
				if !isTerminal(cc.App.Reader) || !isTerminal(cc.App.Writer) {
					return fmt.Errorf("wicket node %s needs an interactive terminal (stdin and stdout); a pipe or a script cannot do it", name)
				}
				client, p, err := armClientAt(cc.String("project"), cc.String("addr"))
				if err != nil {
					return err
				}
				key, err := operatorKey(p)
				if err != nil {
					return err
				}
				ctx, cancel := context.WithTimeout(cc.Context, 2*nodeCallTimeout)
				defer cancel()
				return run(ctx, client, key, cc, cc.App.Writer)
			},
		}
	}
	return []*cli.Command{
		operator("kill", "the kill switch: cancel every working order on every venue, pause every deployment and halt the node",
			"Cancels every working order the node placed on every venue (real venues too, armed or not), pauses every deployment, "+
				"and halts the node: every write is refused, naming the kill, until wicket node resume-trading. --flatten also closes "+
				"every position (on a real venue only while it is armed). One audit entry names every order and deployment it touched.",
			[]cli.Flag{&cli.BoolFlag{Name: "flatten", Usage: "also close every position"}, &cli.StringFlag{Name: "reason", Usage: "why, for the audit trail"}},
			func(ctx context.Context, c *node.Client, key ed25519.PrivateKey, cc *cli.Context, out io.Writer) error {
				rep, err := c.Kill(ctx, cc.Bool("flatten"), cc.String("reason"), key)
				if err != nil {
					return err
				}
				fmt.Fprintln(out, rep.Detail)
				fmt.Fprintln(out, "the node is halted; wicket node resume-trading ends it (paused deployments stay paused: wicket node resume DEPLOYMENT)")
				return nil
			}),
		operator("resume-trading", "end a kill: the node trades again in the trading state it had before",
			"Paused deployments stay paused until an operator resumes each (wicket node resume DEPLOYMENT).",
			[]cli.Flag{&cli.StringFlag{Name: "reason", Usage: "why, for the audit trail"}},
			func(ctx context.Context, c *node.Client, key ed25519.PrivateKey, cc *cli.Context, out io.Writer) error {
				st, err := c.ResumeTrading(ctx, cc.String("reason"), key)
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "the kill is over: trading state %s\n", st.TradingState)
				return nil
			}),
		operator("heartbeat", "the operator's heartbeat for the dead man's switch ([risk] heartbeat)",
			"Without it for [risk] heartbeat the node pauses every auto deployment (and with on_silence = \"cancel\" cancels their working orders).",
			nil,
			func(ctx context.Context, c *node.Client, key ed25519.PrivateKey, cc *cli.Context, out io.Writer) error {
				h, err := c.Heartbeat(ctx, key)
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "heartbeat received; the next is due by %s\n", h.Due.Local().Format(time.RFC1123))
				return nil
			}),
		operator("reset-throttle", "let orders the identical-order throttle refused be sent again",
			"Clears the identical-order throttle's refusals and counts ([risk] max_identical_orders).",
			nil,
			func(ctx context.Context, c *node.Client, key ed25519.PrivateKey, cc *cli.Context, out io.Writer) error {
				if _, err := c.ResetThrottle(ctx, key); err != nil {
					return err
				}
				fmt.Fprintln(out, "the identical-order throttle is reset")
				return nil
			}),
		operator("override", "lift one pre-trade check once, for one command named by its preview hash",
			"The node's refusal of a command by one overridable check names this command with its --check and --preview. "+
				"The override waits 10 minutes for that exact command, is spent by its first execution, and is audited when granted and when used. "+
				"Overridable: "+strings.Join(node.Overridable, ", ")+".",
			[]cli.Flag{&cli.StringFlag{Name: "check", Usage: "the check to lift (required)"},
				&cli.StringFlag{Name: "preview", Usage: "the command's preview hash, from the refusal (required)"},
				&cli.StringFlag{Name: "reason", Usage: "why, for the audit trail"}},
			func(ctx context.Context, c *node.Client, key ed25519.PrivateKey, cc *cli.Context, out io.Writer) error {
				if cc.String("check") == "" || cc.String("preview") == "" {
					return usagef("node override needs --check and --preview, as the refusal names them")
				}
				st, err := c.Override(ctx, cc.String("check"), cc.String("preview"), cc.String("reason"), key)
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "%s is lifted once for the command with preview %s, until %s; send that command again\n", st.Check, st.Preview, st.Until.Local().Format(time.RFC1123))
				return nil
			}),
		{
			Name:        "risk",
			Usage:       "every risk limit with its headroom, throttles, breakers, the kill and the heartbeat (observe key)",
			Description: "The same as the MCP tool risk_status.",
			Flags:       []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the node's JSON answer"}, nodeAddrFlag()},
			Action: func(cc *cli.Context) error {
				if cc.NArg() > 0 {
					return usagef("node risk takes no arguments, got %q", cc.Args().First())
				}
				client, _, err := armClientAt(cc.String("project"), cc.String("addr"))
				if err != nil {
					return err
				}
				ctx, cancel := context.WithTimeout(cc.Context, nodeCallTimeout)
				defer cancel()
				st, err := client.Risk(ctx)
				if err != nil {
					return err
				}
				return printRisk(cc.App.Writer, st, cc.Bool("json"))
			},
		},
	}
}

// printRisk shows st as a table, or as JSON.
func printRisk(out io.Writer, st node.RiskStatus, asJSON bool) error {
	if asJSON {
		b, err := json.MarshalIndent(st, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(out, string(b))
		return err
	}
	fmt.Fprintf(out, "trading state  %s\n", st.TradingState)
	if k := st.Kill; k != nil {
		fmt.Fprintf(out, "KILLED         since %s: %s (wicket node resume-trading ends it)\n", k.Since.Local().Format(time.RFC1123), k.Reason)
	}
	if h := st.Heartbeat; h != nil {
		state := "due by " + h.Due.Local().Format(time.RFC1123)
		if h.Lapsed {
			state = "LAPSED: " + h.Note
		}
		fmt.Fprintf(out, "heartbeat      every %s, on silence %s; %s\n", h.Every, h.OnSilence, state)
	}
	fmt.Fprintf(out, "%-20s %-22s %-14s %-12s %-12s %s\n", "check", "scope", "limit", "used", "headroom", "window")
	for _, l := range st.Limits {
		fmt.Fprintf(out, "%-20s %-22s %-14s %-12s %-12s %s\n", l.Check, l.Scope, l.Limit, dash(l.Used), dash(l.Headroom), l.Window)
		if l.Note != "" {
			fmt.Fprintf(out, "%-20s %s\n", "", l.Note)
		}
	}
	for _, b := range st.Breakers {
		state := "clear"
		if b.Tripped != "" {
			state = "TRIPPED: " + b.Tripped
		}
		fmt.Fprintf(out, "breaker %-12s %s; %s\n", b.Venue, b.Limits, state)
	}
	return nil
}

func dash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}
