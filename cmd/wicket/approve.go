package main

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"fmt"
	"io"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"wicket/agent/approval"
	"wicket/deploy"
)

func approveCommand() *cli.Command {
	return &cli.Command{
		Name:  "approve",
		Usage: "approve or decline, at a terminal, the confirmed writes this project's `wicket mcp --approval operator` servers hold, and the node's deployment proposals",
		Description: "Watches the approval sockets in settings/state/ of this project and shows each waiting command in plain words: " +
			"the resolved command, the guardrail, the node's dry run, the venue's environment and state, and how long is left. " +
			"Answer y to send it, n to decline it, s to skip it (it is then refused when its window passes); q or Ctrl-D quits. " +
			"It needs an interactive terminal: approving a write is a person's decision, so it refuses a pipe or a file on stdin. " +
			"It also shows the waiting proposals of the node's propose-mode deployments (wicket node deployments lists them): y sends the order once, " +
			"as wicket node approve-proposal does; n or s leaves it to lapse when the next bar closes. " +
			"Every answer is signed with the operator key (settings/operator.key, or WICKET_OPERATOR_KEY in its environment); the servers and the node take no other. " +
			"Nothing is ever approved by default, by a timeout or by an error. " +
			"With --oauth it answers the built-in OAuth issuer's authorization requests instead (docs/oauth.md): each is shown with its client, " +
			"redirect host and scopes; y grants them and prints a one-time code, signed with the operator key, to type on the client's authorize page. " +
			"With --http it serves approvals away from the desk instead: each waiting command gets a one-time link, bound to its preview and sent to " +
			"wicket.toml's [alerts] webhook; the link shows the preview, and its answer is signed here with the operator key; a replayed or forged link is refused.",
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "poll", Value: 250 * time.Millisecond, Usage: "how often the servers are asked for waiting commands", Hidden: true},
			nodeAddrFlag(),
			&cli.BoolFlag{Name: "oauth", Usage: "answer the built-in OAuth issuer's authorization requests instead: a grant prints the one-time code to type on the authorize page"},
			&cli.BoolFlag{Name: "http", Usage: "serve one-time approval links instead: each waiting command's link goes to [alerts]'s webhook; the answer is signed here with the operator key"},
			&cli.BoolFlag{Name: "json", Usage: "print what is waiting (commands and proposals) as JSON and exit, deciding nothing; reads a pipe"},
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:7880", Usage: "with --http: the loopback `HOST:PORT` the links are served on (a proxy may front it: [alerts] approve_url)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("approve takes no arguments, got %q", c.Args().First())
			}
			if c.Bool("json") && (c.Bool("oauth") || c.Bool("http")) {
				return usagef("approve --json lists what is waiting; it does not go with --oauth or --http")
			}
			if c.Bool("oauth") { // approve_oauth.go
				return runApproveOAuth(c.Context, approveOptions{project: c.String("project"), poll: c.Duration("poll"), stdin: c.App.Reader, now: time.Now},
					c.App.Writer)
			}
			o := approveOptions{project: c.String("project"), addr: c.String("addr"), poll: c.Duration("poll"), stdin: c.App.Reader, now: time.Now}
			if c.Bool("json") { // approve_json.go
				return runApproveList(c.Context, o, c.App.Writer)
			}
			if c.Bool("http") {
				return runApproveHTTP(c.Context, o, c.String("listen"), c.App.Writer, c.App.ErrWriter)
			}
			return runApprove(c.Context, o, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// approveOptions is what wicket approve works with, filled from its
// flags.
type approveOptions struct {
	project string           // the --project flag
	addr    string           // the node's HOST:PORT; empty: wicket.toml's
	poll    time.Duration    // how often the servers are asked
	stdin   io.Reader        // the operator's terminal
	now     func() time.Time // the clock waiting commands expire by
}

// runApprove is one approval session at the operator's terminal: refused
// without one, every answer signed with the operator key.
func runApprove(ctx context.Context, o approveOptions, stdout, _ io.Writer) error {
	if !isTerminal(o.stdin) || !isTerminal(stdout) {
		return usagef("wicket approve needs an interactive terminal: approving a write is a person's decision, " +
			"so it does not read a pipe or a file; run it in a terminal")
	}
	p, _, err := openProjectAt(o.project)
	if err != nil {
		return err
	}
	key, err := operatorKey(p) // every answer is signed with it
	if err != nil {
		return err
	}
	a := &approver{
		dir: p.StateDir(), key: key, in: startLines(o.stdin), out: stdout,
		by: whoAmI(o.stdin), poll: o.poll, now: o.now,
	}
	if client, _, err := armClientAt(o.project, o.addr); err != nil {
		fmt.Fprintf(stdout, "note: the node's deployment proposals are not shown: %v\n", err)
	} else {
		a.node = client
	}
	return a.run(ctx)
}

// approver is one `wicket approve` session.
type approver struct {
	dir  string
	key  ed25519.PrivateKey // the operator's: signs each answer
	in   <-chan string      // lines typed; closed at EOF
	out  io.Writer
	by   string
	poll time.Duration
	now  func() time.Time
	node deploymentsClient // the node's proposals; nil: not shown
}

func startLines(r io.Reader) <-chan string {
	ch := make(chan string)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			ch <- strings.TrimSpace(sc.Text())
		}
	}()
	return ch
}

// whoAmI names the operator: user and terminal.
func whoAmI(r io.Reader) string {
	name := "unknown user"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	if f, ok := r.(*os.File); ok {
		if tty, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd())); err == nil {
			return name + " on " + tty
		}
	}
	return name
}

func (a *approver) run(ctx context.Context) error {
	fmt.Fprintf(a.out, "wicket approve: watching this project's wicket mcp servers for commands to approve (q or Ctrl-D quits).\n")
	seen := map[string]bool{}
	idle := false
	reported := map[string]bool{}
	for {
		waiting, errs := approval.List(ctx, a.dir)
		for _, err := range errs {
			if !reported[err.Error()] {
				reported[err.Error()] = true
				fmt.Fprintf(a.out, "note: %v\n", err)
			}
		}
		var next *approval.Waiting
		for i := range waiting {
			if !seen[waiting[i].ID] && a.now().Before(waiting[i].Expires) {
				next = &waiting[i]
				break
			}
		}
		if next == nil && a.node != nil {
			if p, total, ok := a.nextProposal(ctx, seen, reported); ok {
				idle = false
				seen[p.ClientOrderID] = true
				if quit := a.askProposal(ctx, p, total); quit {
					fmt.Fprintln(a.out, "bye (anything still waiting is refused when its window passes)")
					return nil
				}
				continue
			}
		}
		if next == nil {
			if !idle {
				fmt.Fprintf(a.out, "Nothing is waiting.\n")
				idle = true
			}
			select {
			case line, ok := <-a.in:
				if !ok || line == "q" {
					fmt.Fprintln(a.out, "bye")
					return nil
				}
			case <-time.After(a.poll):
			case <-ctx.Done():
				return nil
			}
			continue
		}
		idle = false
		seen[next.ID] = true
		if quit := a.ask(ctx, *next, len(waiting)); quit {
			fmt.Fprintln(a.out, "bye (anything still waiting is refused when its window passes)")
			return nil
		}
	}
}

// waitingProposal is a node deployment's proposal with its deployment.
type waitingProposal struct {
	deploy.Proposal
	dep deploy.Deployment
}

// nextProposal is the first waiting proposal of the node not seen yet,
// and how many are waiting.
func (a *approver) nextProposal(ctx context.Context, seen, reported map[string]bool) (waitingProposal, int, bool) {
	rctx, cancel := context.WithTimeout(ctx, nodeCallTimeout)
	defer cancel()
	var list struct {
		Deployments []deploy.Deployment `json:"deployments"`
	}
	if err := a.node.DeploymentsGet(rctx, "", nil, &list); err != nil {
		if msg := "the node's deployment proposals cannot be read: " + err.Error(); !reported[msg] {
			reported[msg] = true
			fmt.Fprintf(a.out, "note: %s\n", msg)
		}
		return waitingProposal{}, 0, false
	}
	var waiting []waitingProposal
	for _, d := range list.Deployments {
		for _, p := range d.Proposals {
			// The node lists only waiting proposals; one waits while its
			// strategy still wants its target.
			waiting = append(waiting, waitingProposal{Proposal: p, dep: d})
		}
	}
	for _, w := range waiting {
		if !seen[w.ClientOrderID] {
			return w, len(waiting), true
		}
	}
	return waitingProposal{}, len(waiting), false
}

// askProposal shows one proposal and takes the operator's answer; y
// sends it once, signed with the operator key; quit is true when the
// operator quits.
func (a *approver) askProposal(ctx context.Context, w waitingProposal, total int) (quit bool) {
	d := w.dep
	fmt.Fprintf(a.out, "\n--- waiting for approval (%d waiting): proposal %s of deployment %s\n", total, w.ClientOrderID, d.ID)
	fmt.Fprintf(a.out, "  order        %s %s %s at market on venue %s (target %v of the deployment's equity), decided at the bar of %s\n",
		w.Side, w.Quantity, d.Symbol, d.Venue, w.Target, w.Bar.UTC().Format(time.RFC3339))
	fmt.Fprintf(a.out, "  deployment   %s sha256 %s on %s, mode %s, equity %s, position %s\n", d.Strategy, short(d.StrategyHash), d.Series, d.Mode,
		d.Equity.StringFixed(2), d.Position)
	fmt.Fprintf(a.out, "  lapses       when its strategy decides another target, or the deployment pauses or stops; approved, it is sized again at the price then\n")
	for {
		fmt.Fprintf(a.out, "Send it? y = approve and send, n = decline, s = skip: ")
		var line string
		select {
		case l, ok := <-a.in:
			if !ok {
				return true
			}
			line = strings.ToLower(l)
		case <-ctx.Done():
			return true
		}
		switch line {
		case "y", "yes":
			rctx, cancel := context.WithTimeout(ctx, nodeCallTimeout)
			got, err := approveProposal(rctx, a.node, a.key, w.ClientOrderID)
			cancel()
			if err != nil {
				fmt.Fprintf(a.out, "not sent: %v\n", err)
			} else {
				fmt.Fprintf(a.out, "approved: order %s %s %s is %s.\n", got.ClientOrderID, got.Side, got.Quantity, got.Status)
			}
			return false
		case "n", "no":
			fmt.Fprintf(a.out, "declined: nothing is sent; the proposal lapses when its strategy decides another target.\n")
			return false
		case "s", "skip":
			fmt.Fprintf(a.out, "skipped: it waits until its strategy decides another target, unless approved from another terminal.\n")
			return false
		case "q", "quit":
			return true
		default:
			fmt.Fprintf(a.out, "answer y, n, s or q\n")
		}
	}
}

// ask shows one waiting command and takes the operator's answer; quit is
// true when the operator quits.
func (a *approver) ask(ctx context.Context, w approval.Waiting, total int) (quit bool) {
	fmt.Fprintf(a.out, "\n--- waiting for approval (%d waiting): %s, session %s, server pid %d\n%s\n",
		total, w.Tool, w.Session, w.Server, w.Describe(a.now()))
	for {
		fmt.Fprintf(a.out, "Send it? y = approve and send, n = decline, s = skip: ")
		var line string
		select {
		case l, ok := <-a.in:
			if !ok {
				return true
			}
			line = strings.ToLower(l)
		case <-ctx.Done():
			return true
		}
		switch line {
		case "y", "yes", "n", "no":
			approve := line[0] == 'y'
			dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err := approval.Decide(dctx, w, approve, a.by, a.key)
			cancel()
			switch {
			case err != nil:
				fmt.Fprintf(a.out, "not decided: %v\n", err)
			case approve:
				fmt.Fprintf(a.out, "approved: the server sends it now and reports the outcome to the agent.\n")
			default:
				fmt.Fprintf(a.out, "declined: nothing is sent.\n")
			}
			return false
		case "s", "skip":
			fmt.Fprintf(a.out, "skipped: it is refused when its window passes unless approved from another terminal.\n")
			return false
		case "q", "quit":
			return true
		default:
			fmt.Fprintf(a.out, "answer y, n, s or q\n")
		}
	}
}
