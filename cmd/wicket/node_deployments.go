package main

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/urfave/cli/v2"

	"wicket/deploy"
	"wicket/internal/project"
	"wicket/node"
	"wicket/node/server"
	"wicket/strategy"
	"wicket/strategy/history"
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

// deployments is what `wicket node serve` runs its deployments with.
type deployments struct {
	handler *deploy.Handler
	start   func(ctx context.Context, srv *server.Server) // once the node is up
}

// nodeDeployments builds the deployments' surface and, when the project
// has strategies, the runner behind it: the worker pool research uses,
// the history store for warm-up, and the node's in-process connection
// (server.Local, acting as the control key) for the one write path.
// Without strategies the surface says the node runs none.
func nodeDeployments(p project.Project, cfg project.Config, bars string, tape *deploy.TapeRun, operator ed25519.PublicKey, log *slog.Logger) (*deployments, func(), error) {
	h := deploy.NewHandler()
	out := &deployments{handler: h, start: func(context.Context, *server.Server) {}}
	stars, _ := filepath.Glob(filepath.Join(p.StrategiesDir(), "*.star"))
	if len(stars) == 0 {
		return out, func() {}, nil
	}
	store, err := deploy.OpenStore(filepath.Join(p.StateDir(), "deployments.db"))
	if err != nil {
		return nil, nil, err
	}
	pool, err := researchPool(cfg)
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	// With --bars tape every deployment reads the recorded tape (a
	// wicket data record beside the node, or a test, appends it): the
	// node records nothing itself.
	candles, closeCandles, err := (*deploy.Candles)(nil), func() {}, error(nil)
	if bars != barsTape {
		candles, closeCandles, err = nodeCandles(p, cfg, log) // node_candles.go
	}
	if err != nil {
		pool.Close()
		store.Close()
		return nil, nil, err
	}
	closeAll := func() { pool.Close(); closeCandles(); store.Close() }
	out.start = func(ctx context.Context, srv *server.Server) {
		conn, err := srv.Local(node.KeyControl) // in process, acting as the control key; no HTTP to itself
		if err != nil {
			log.Error("deployments: no connection to the node", "err", err)
			return
		}
		dc := deploy.Config{Project: cfg, Store: store, Node: conn, Strategies: pool,
			IndicatorsDir: p.IndicatorsDir(), OperatorKey: operator, Logger: log,
			Research: localResearch(p, cfg, pool, nil), Candles: candles,
			History: historyWarmup(p.HistoryPath()), FundingRates: deploy.StoredFunding(p.HistoryPath()),
			Plans: ledgerPlans{p: p}, // node_plans.go
			Bars: func(vc project.Venue, series string) deploy.BarSource {
				if tape != nil && tape.Plays(series) && !vc.Real() && vc.Marks == "" { // node_tape.go
					return tape.Source()
				}
				if bars == barsTape {
					return &deploy.TapeBars{Read: historyTape(p.HistoryPath()), Every: tapePoll}
				}
				return &deploy.MarkBars{Node: conn, Venue: vc.Name, Every: time.Second, Now: time.Now}
			}}
		if tape != nil { // on the tape's clock
			dc.Now, dc.NextOpen = tape.Clock.Now, tape.NextOpen
		}
		r, err := deploy.New(ctx, dc)
		if err != nil {
			log.Error("deployments did not start", "err", err)
			return
		}
		h.Attach(r)
		r.Start(ctx)
		log.Info("deployments running", "count", len(r.List()))
	}
	return out, closeAll, nil
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

// historyTape reads the recorded tape of a series from the history store
// at path: the bars `wicket data record` appended after a time, or the
// latest one. A store or series not there yet has no bars.
func historyTape(path string) deploy.TapeRead {
	return func(ctx context.Context, series string, after time.Time) (strategy.Bars, error) {
		none := strategy.Bars{Series: series}
		store, err := history.OpenReadOnly(path)
		if err != nil {
			if history.IsNotFound(err) {
				return none, nil
			}
			return none, err
		}
		defer store.Close()
		info, err := store.Info(series)
		if err != nil {
			if history.IsNotFound(err) {
				return none, nil
			}
			return none, err
		}
		if info.Bars == 0 || !info.Last.After(after) {
			return none, nil
		}
		from, to := info.Last, info.Last
		if !after.IsZero() {
			g := info.Granularity.Duration()
			from = after.Add(g)
			if lim := from.Add(time.Duration(tapePage-1) * g); lim.Before(to) {
				to = lim
			}
		}
		return store.Load(series, from, to)
	}
}

// historyWarmup reads warm-up bars from the history store at path.
func historyWarmup(path string) deploy.History {
	return func(ctx context.Context, series string, before time.Time, n int) (strategy.Bars, error) {
		store, err := history.OpenReadOnly(path)
		if err != nil {
			if history.IsNotFound(err) {
				return strategy.Bars{Series: series}, nil
			}
			return strategy.Bars{}, err
		}
		defer store.Close()
		_, g, err := strategy.ParseSeries(series)
		if err != nil {
			return strategy.Bars{}, err
		}
		b, err := store.Load(series, before.Add(-time.Duration(n+1)*g.Duration()), before.Add(-g.Duration()))
		if err != nil {
			if history.IsNotFound(err) {
				return strategy.Bars{Series: series}, nil
			}
			return strategy.Bars{}, err
		}
		if b.Len() > n {
			b = b.Slice(b.Len()-n, b.Len())
		}
		return b, nil
	}
}

// showProposal prints the waiting proposal cid before the operator types
// it back: the order (side, quantity, symbol, venue), its bar's close and
// the venue's price now, since an approval sizes it again at that price.
func showProposal(ctx context.Context, client *node.Client, cid string, out io.Writer) error {
	var list struct {
		Deployments []deploy.Deployment `json:"deployments"`
	}
	if err := client.DeploymentsGet(ctx, "", nil, &list); err != nil {
		return err
	}
	for _, d := range list.Deployments {
		for _, p := range d.Proposals {
			if p.ClientOrderID != cid {
				continue
			}
			if p.Symbol != "" { // a portfolio's proposal is of its asset's symbol
				d.Symbol = p.Symbol
			}
			var now decimal.Decimal
			if snap, err := client.Snapshot(ctx, d.Venue, 0); err == nil {
				now, _ = snap.Mark(d.Venue, d.Symbol)
			}
			describeProposal(out, d, p, now)
			return nil
		}
	}
	return fmt.Errorf("no waiting proposal %s: it was approved, or it lapsed (wicket node deployments shows the waiting ones)", cid)
}

// describeProposal is the proposal as the operator sees it before
// approving; now is the venue's price (zero: unknown).
func describeProposal(w io.Writer, d deploy.Deployment, p deploy.Proposal, now decimal.Decimal) {
	if p.Symbol != "" { // a portfolio's proposal is of its asset's symbol
		d.Symbol = p.Symbol
	}
	describeProposalOrder(w, d, p)
	switch {
	case !now.IsPositive():
		fmt.Fprintf(w, "price now    unknown: the venue shows no price of %s, so an approval sends nothing\n", d.Symbol)
	case p.BarClose.IsPositive():
		fmt.Fprintf(w, "price now    %s (%s%% from the bar's close); approved, it is sized again at the price then, within the allowance\n",
			now, now.Sub(p.BarClose).Div(p.BarClose).Shift(2).StringFixed(2))
	default:
		fmt.Fprintf(w, "price now    %s; approved, it is sized again at the price then, within the allowance\n", now)
	}
}

// describeProposalOrder is the proposal, its order and its bar (what an
// approval link is bound to: wicket approve --http).
func describeProposalOrder(w io.Writer, d deploy.Deployment, p deploy.Proposal) {
	if p.Symbol != "" { // a portfolio's proposal is of its asset's symbol
		d.Symbol = p.Symbol
	}
	kind := "at market"
	if p.Type == "bracket" {
		kind = "at market with its stop-loss and take-profit (a bracket)"
	}
	fmt.Fprintf(w, "proposal     %s of deployment %s (%s on %s)\n", p.ClientOrderID, d.ID, d.Strategy, d.Series)
	fmt.Fprintf(w, "order        %s %s %s %s on venue %s, for target %v of the deployment's equity\n", p.Side, p.Quantity, d.Symbol, kind, d.Venue, p.Target)
	fmt.Fprintf(w, "bar          %s, closed at %s\n", p.Bar.UTC().Format(time.RFC3339), p.BarClose)
}

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
