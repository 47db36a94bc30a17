package main

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"wicket/deploy"
	"wicket/node"
)

// The node's deployments from the CLI: list and show them, stop one (the
// control key), and the operator's acts (resume, arm, approve a proposal),
// signed with the operator key at an interactive terminal, as venue
// arming is (node_arming.go).

func nodeDeploymentsCommand() *cli.Command {
	return &cli.Command{
		Name:      "deployments",
		Usage:     "list the node's deployments, or show one with its latest decisions and orders",
		ArgsUsage: "[ID]",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
			&cli.BoolFlag{Name: "report", Usage: "with ID: the tracking report (live decisions against their replay, fills against their bars)"},
			nodeAddrFlag(),
		},
		Action: func(c *cli.Context) error {
			pos, err := trailingFlags(c)
			if err != nil {
				return err
			}
			if len(pos) > 1 {
				return usagef("node deployments takes at most one deployment ID")
			}
			o := nodeDeploymentsOptions{project: c.String("project"), addr: c.String("addr"), json: c.Bool("json"), report: c.Bool("report")}
			if len(pos) == 1 {
				o.id = pos[0]
			}
			return runNodeDeployments(c.Context, o, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// nodeDeploymentsOptions is what wicket node deployments works with,
// filled from its argument and flags.
type nodeDeploymentsOptions struct {
	project string // the --project flag
	addr    string // the node's HOST:PORT; empty: wicket.toml's
	id      string // one deployment to show; empty: list them all
	json    bool
	report  bool // with id: its tracking report
}

// runNodeDeployments lists the node's deployments, or shows one, or its
// tracking report.
func runNodeDeployments(ctx context.Context, o nodeDeploymentsOptions, stdout, _ io.Writer) error {
	if o.report && o.id == "" {
		return usagef("node deployments --report takes the deployment ID")
	}
	client, _, err := armClientAt(o.project, o.addr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, nodeCallTimeout)
	defer cancel()
	out := stdout
	if o.report {
		var rep deploy.Report
		if err := client.DeploymentsGet(ctx, "/"+url.PathEscape(o.id)+"/report", nil, &rep); err != nil {
			return err
		}
		if o.json {
			return writeJSON(out, rep)
		}
		fmt.Fprintf(out, "decisions    %d replayed, %d equal, %d diverged %s\n", rep.Replayed, rep.Equal, len(rep.Diverged), rep.Truncated)
		for _, dv := range rep.Diverged {
			fmt.Fprintf(out, "DIVERGED     at the bar of %s: live %s, replay %s (a defect: report it)\n", dv.Bar.Format(time.RFC3339), dv.Live, dv.Replay)
		}
		for _, f := range rep.Fills {
			fmt.Fprintf(out, "fill         %s %s %s at %s, bar close %s (%s bps against), %s after the close\n",
				f.ClientOrderID, f.Side, f.Filled, f.Price, f.BarClose, f.SlippageBps, f.Latency.Round(time.Millisecond))
		}
		printExitReplay(out, rep.Exits)
		printAttribution(out, rep.Attribution, rep.Funding)
		return nil
	}
	if o.id != "" {
		var d deploy.Detail
		if err := client.DeploymentsGet(ctx, "/"+url.PathEscape(o.id), nil, &d); err != nil {
			return err
		}
		if o.json {
			return writeJSON(out, d)
		}
		printDeployment(out, d.Deployment)
		for _, in := range d.Intents {
			fmt.Fprintf(out, "order        %s %s %s %s at the bar of %s: %s %s\n", in.ClientOrderID, in.Side, in.Quantity, in.Status,
				in.Bar.Format(time.RFC3339), in.Price, in.Note)
		}
		return nil
	}
	var list struct {
		Deployments []deploy.Deployment `json:"deployments"`
	}
	if err := client.DeploymentsGet(ctx, "", nil, &list); err != nil {
		return err
	}
	if o.json {
		return writeJSON(out, list)
	}
	if len(list.Deployments) == 0 {
		fmt.Fprintln(out, "no deployments (wicket deploy NAME --series S --venue V makes one)")
	}
	for _, d := range list.Deployments {
		fmt.Fprintf(out, "%s  %-8s %-7s %s %s on %s  equity %s  position %s", d.ID, d.State, d.Mode, d.Strategy, d.Series, d.Venue,
			d.Equity.StringFixed(2), d.Position)
		if d.Reason != "" {
			fmt.Fprintf(out, "  (%s)", d.Reason)
		}
		fmt.Fprintln(out)
		for _, l := range d.LegLines() {
			fmt.Fprintf(out, "    leg %s\n", l)
		}
		for _, p := range d.Proposals {
			fmt.Fprintf(out, "    proposal %s: %s %s; wicket node approve-proposal %s\n", p.ClientOrderID, p.Side, p.Quantity, p.ClientOrderID)
		}
	}
	return nil
}

func nodeStopDeploymentCommand() *cli.Command {
	return &cli.Command{
		Name:        "stop-deployment",
		Usage:       "stop a deployment for good (the control key; its position stays for you to decide)",
		ArgsUsage:   "ID",
		Description: "It sends nothing more and its waiting proposals lapse; its open position is not touched.",
		Flags: []cli.Flag{nodeAddrFlag(), &cli.StringFlag{Name: "reason",
			Usage: fmt.Sprintf("why it stops, kept with the deployment (at most %d characters)", deploy.MaxStopReason)},
			&cli.BoolFlag{Name: "json", Usage: "print the stopped deployment as JSON (as node deployments --json lists it)"}},
		Action: func(c *cli.Context) error {
			id, err := oneDeployment(c, "stop-deployment")
			if err != nil {
				return err
			}
			o := nodeDeploymentActOptions{project: c.String("project"), addr: c.String("addr"), id: id, reason: c.String("reason"), json: c.Bool("json")}
			return runNodeStopDeployment(c.Context, o, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// nodeDeploymentActOptions is what wicket node stop-deployment, resume
// and approve-proposal work with, filled from their argument and flags.
type nodeDeploymentActOptions struct {
	project string // the --project flag
	addr    string // the node's HOST:PORT; empty: wicket.toml's
	// id is the deployment, or for approve-proposal the proposal's client
	// order id.
	id string
	// act (deploy.ActResume, deploy.ActApprove) and verb (the command's
	// name) are the operator's act.
	act    string
	verb   string
	stdin  io.Reader // the terminal the operator types the id back at
	reason string    // stop-deployment: why
	next   int       // approve-proposal --next: how many orders ahead
	json   bool      // stop-deployment
}

// runNodeStopDeployment stops a deployment for good.
func runNodeStopDeployment(ctx context.Context, o nodeDeploymentActOptions, stdout, _ io.Writer) error {
	client, _, err := armClientAt(o.project, o.addr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, nodeCallTimeout)
	defer cancel()
	var d deploy.Deployment
	if err := client.DeploymentsPost(ctx, "/"+url.PathEscape(o.id)+"/stop", deploy.StopRequest{Reason: o.reason}, &d); err != nil {
		return err
	}
	if o.json {
		return writeJSON(stdout, d)
	}
	if len(d.Legs) > 0 { // a portfolio: each leg's position is kept
		fmt.Fprintf(stdout, "%s is stopped (%s); its legs' positions are kept:\n", d.ID, d.Reason)
		for _, l := range d.LegLines() {
			fmt.Fprintf(stdout, "    leg %s\n", l)
		}
		return nil
	}
	fmt.Fprintf(stdout, "%s is stopped (%s); its position (%s %s) is kept\n", d.ID, d.Reason, d.Position, d.Symbol)
	return nil
}

func nodeResumeCommand() *cli.Command {
	return operatorDeploymentCommand(deploy.ActResume, "resume", "resume a paused deployment (an operator at an interactive terminal only)", "ID")
}

func nodeApproveProposalCommand() *cli.Command {
	c := operatorDeploymentCommand(deploy.ActApprove, "approve-proposal", "send a propose-mode deployment's waiting order, or with --next N approve its next N orders ahead (an operator at an interactive terminal only)", "CLIENT_ORDER_ID | --next N DEPLOYMENT")
	c.Flags = append(c.Flags, &cli.IntFlag{Name: "next",
		Usage: fmt.Sprintf("approve the deployment's next N orders ahead (1 to %d; they lapse at a node restart): give the deployment id instead of a proposal's", deploy.MaxApproveNext)})
	return c
}

// operatorDeploymentCommand is resume or approve-proposal: signed with
// the operator key after the name is typed back.
func operatorDeploymentCommand(act, name, usage, arg string) *cli.Command {
	return &cli.Command{
		Name:      name,
		Usage:     usage,
		ArgsUsage: arg,
		Description: "Needs the operator key (settings/operator.key, or WICKET_OPERATOR_KEY), the control key and an interactive terminal; " +
			"you type the " + strings.ToLower(arg) + " back to confirm.",
		Flags: []cli.Flag{nodeAddrFlag()},
		Action: func(c *cli.Context) error {
			pos, err := trailingFlags(c)
			if err != nil {
				return err
			}
			if len(pos) != 1 {
				return usagef("node %s takes one %s", name, arg)
			}
			o := nodeDeploymentActOptions{project: c.String("project"), addr: c.String("addr"), id: pos[0], act: act, verb: name, stdin: c.App.Reader}
			if act == deploy.ActApprove && c.Int("next") != 0 {
				if n := c.Int("next"); n < 1 || n > deploy.MaxApproveNext || !strings.HasPrefix(pos[0], deploy.IDPrefix) {
					return usagef("node approve-proposal --next N DEPLOYMENT: N from 1 to %d, and the deployment's id (%s...)", deploy.MaxApproveNext, deploy.IDPrefix)
				}
				o.act, o.next = deploy.ActApproveNext, c.Int("next")
			}
			return runOperatorDeploymentAct(c.Context, o, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// runOperatorDeploymentAct is resume or approve-proposal: refused without
// an interactive terminal, signed with the operator key once the id is
// typed back.
func runOperatorDeploymentAct(ctx context.Context, o nodeDeploymentActOptions, stdout, _ io.Writer) error {
	if !isTerminal(o.stdin) || !isTerminal(stdout) {
		return fmt.Errorf("wicket node %s needs an interactive terminal (stdin and stdout); a pipe or a script cannot do it", o.verb)
	}
	client, p, err := armClientAt(o.project, o.addr)
	if err != nil {
		return err
	}
	key, err := operatorKey(p)
	if err != nil {
		return err
	}
	if o.act == deploy.ActApproveNext {
		return operatorActFor(ctx, client, key, o.act, o.id, strconv.Itoa(o.next), o.stdin, stdout)
	}
	return operatorAct(ctx, client, key, o.act, o.id, 0, o.stdin, stdout)
}

// operatorAct asks the operator to type name back, then signs act on it
// with a fresh challenge and sends it.
func operatorAct(ctx context.Context, client *node.Client, key ed25519.PrivateKey, act, name string, d time.Duration, in io.Reader, out io.Writer) error {
	var forWhat string
	if d > 0 {
		forWhat = d.String()
	}
	return operatorActFor(ctx, client, key, act, name, forWhat, in, out)
}

// operatorActFor is operatorAct with the request's For as the act takes
// it: a duration (arm), a count (approve-next), or none.
func operatorActFor(ctx context.Context, client *node.Client, key ed25519.PrivateKey, act, name, forWhat string, in io.Reader, out io.Writer) error {
	base := "/" + url.PathEscape(name)
	if act == deploy.ActApprove {
		base = "/proposals/" + url.PathEscape(name)
	}
	rctx, cancel := context.WithTimeout(ctx, nodeCallTimeout)
	defer cancel()
	if act != deploy.ActApprove {
		var det deploy.Detail
		if err := client.DeploymentsGet(rctx, base, nil, &det); err != nil {
			return err
		}
		printDeployment(out, det.Deployment)
	} else if err := showProposal(rctx, client, name, out); err != nil {
		return err
	}
	fmt.Fprintf(out, "Type %s to %s: ", name, act)
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && line == "" {
		return errors.New("nothing done: no answer")
	}
	if typed := strings.TrimSpace(line); typed != name {
		return fmt.Errorf("nothing done: %q is not %q", typed, name)
	}
	if act == deploy.ActApprove {
		got, err := approveProposal(rctx, client, key, name)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "approved %s: %s %s %s\n", got.ClientOrderID, got.Side, got.Quantity, got.Status)
		return nil
	}
	req, err := signedAct(rctx, client, key, act, name, base, forWhat)
	if err != nil {
		return err
	}
	var got deploy.Deployment
	if err := client.DeploymentsPost(rctx, base+"/"+act, req, &got); err != nil {
		return err
	}
	if act == deploy.ActArm || act == deploy.ActArmWithoutPlan {
		fmt.Fprintf(out, "%s is armed until %s (lapses then, and at any node restart)\n", got.ID, got.ArmedUntil.Local().Format(time.RFC1123))
		if got.PlanOverride != "" {
			fmt.Fprintf(out, "%s: %s\n", got.ID, got.PlanOverride)
		}
		return nil
	}
	if act == deploy.ActApproveNext {
		fmt.Fprintf(out, "%s: its next %d orders are approved; each is sent as it is decided (the approval lapses at any node restart)\n", got.ID, got.PreApproved)
		return nil
	}
	fmt.Fprintf(out, "%s is %s\n", got.ID, got.State)
	return nil
}

// deploymentsClient is the node's deployments surface (*node.Client).
type deploymentsClient interface {
	DeploymentsGet(ctx context.Context, sub string, q url.Values, out any) error
	DeploymentsPost(ctx context.Context, sub string, body, out any) error
}

// signedAct asks the node for a one-use challenge for act on name (its
// path under /v1/deployments is base) and signs the act with the operator
// key, name typed back as the confirmation.
func signedAct(ctx context.Context, client deploymentsClient, key ed25519.PrivateKey, act, name, base, forWhat string) (node.ArmRequest, error) {
	var ch deploy.Challenge
	if err := client.DeploymentsGet(ctx, base+"/challenge", url.Values{"act": {act}}, &ch); err != nil {
		return node.ArmRequest{}, err
	}
	req := node.ArmRequest{Confirm: name, Challenge: ch.Challenge, For: forWhat}
	req.Signature = node.SignOperator(key, deploy.Statement(act, name, req))
	return req, nil
}

// approveProposal sends a waiting proposal, approved by the operator:
// wicket node approve-proposal and wicket approve both come here.
func approveProposal(ctx context.Context, client deploymentsClient, key ed25519.PrivateKey, cid string) (deploy.Intent, error) {
	base := "/proposals/" + url.PathEscape(cid)
	req, err := signedAct(ctx, client, key, deploy.ActApprove, cid, base, "")
	if err != nil {
		return deploy.Intent{}, err
	}
	var got deploy.Intent
	err = client.DeploymentsPost(ctx, base+"/approve", req, &got)
	return got, err
}

func oneDeployment(c *cli.Context, verb string) (string, error) {
	pos, err := trailingFlags(c)
	if err != nil {
		return "", err
	}
	if len(pos) != 1 || !strings.HasPrefix(pos[0], deploy.IDPrefix) {
		return "", usagef("node %s takes one deployment ID (%s..., see wicket node deployments)", verb, deploy.IDPrefix)
	}
	return pos[0], nil
}

// The deployments' bar sources (wicket node serve --bars).
const (
	barsMarks = "marks"
	barsTape  = "tape"
)

// tapePoll is how often a deployment on the tape looks for its next bar.
const tapePoll = 200 * time.Millisecond

// tapePage bounds the bars one read of the tape returns.
const tapePage = 1000

// printExitReplay prints the report's replay of protective exits (nil:
// the strategy has none).
func printExitReplay(w io.Writer, x *deploy.ExitReplay) {
	if x == nil {
		return
	}
	if x.Error != "" {
		fmt.Fprintf(w, "exits        not replayed: %s\n", x.Error)
		return
	}
	fmt.Fprintf(w, "exits        %d filled live, %d in the replay, %d equal (bar, kind, price to the cent); replay's final equity %s\n",
		x.Live, x.Replayed, x.Equal, x.FinalEquity)
	for _, f := range x.Fills {
		replay := "none in the replay"
		if f.Replay.IsPositive() {
			replay = fmt.Sprintf("replay %s (%s bps against)", f.Replay, f.SlippageBps)
		}
		fmt.Fprintf(w, "exit         %s on the bar of %s: live %s, %s\n", f.Exit, f.Bar.Format(time.RFC3339), f.Live, replay)
	}
	for _, f := range x.MissedLive {
		fmt.Fprintf(w, "EXIT MISSED  %s on the bar of %s at %s in the replay, not live\n", f.Exit, f.Bar.Format(time.RFC3339), f.Replay)
	}
}
