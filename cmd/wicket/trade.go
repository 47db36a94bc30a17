package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/urfave/cli/v2"

	"wicket/cmd/wicket/internal/trade"
	"wicket/internal/project"
	"wicket/node"
	"wicket/node/command"
)

func tradeCommand() *cli.Command {
	subs := []*cli.Command{
		{
			Name:  "snapshot",
			Usage: "print the node's state: trading state, venues with cash and equity, positions, open orders, marks",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "venue", Usage: "only this `VENUE`"},
				&cli.IntFlag{Name: "events", Usage: "also list the `N` most recent events (at most 200)"},
				&cli.BoolFlag{Name: "json", Usage: "print the snapshot as the node's JSON"},
				tradeNodeFlag(),
			},
			Action: tradeSnapshotAction,
		},
		{
			Name:      "ticket",
			Usage:     "print a sent command's outcome by its ticket id (after a pending one)",
			ArgsUsage: "TICKET",
			Flags:     []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "machine-readable output"}, tradeNodeFlag()},
			Action:    tradeTicketAction,
		},
	}
	for _, sp := range command.Specs() {
		sub := &cli.Command{
			Name:            string(sp.Verb),
			Usage:           sp.Summary,
			ArgsUsage:       trade.PositionalUsage(sp.Verb) + " [field=value]... [--reason TEXT] [--yes] [--json] [--node HOST:PORT]",
			SkipFlagParsing: true, // the trade line grammar reads fields and flags in any order
			Action:          tradeVerbAction(sp.Verb),
		}
		if s := trade.ShortName(sp.Verb); s != "" {
			sub.Aliases = []string{s}
		}
		subs = append(subs, sub)
	}
	return &cli.Command{
		Name:  "trade",
		Usage: "trade by hand: the agent's write verbs in a REPL, each previewed and confirmed; snapshot and one-shot verbs for scripts",
		Description: "Without a subcommand, an interactive prompt (or, when stdin is not a terminal, one command per line " +
			"from stdin) with the same verbs and fields as the agent's write tools, e.g.\n\n" +
			"   submit buy 0.5 BTC-USD limit 41000 --reason \"breakout retest\"\n\n" +
			"Every write shows its preview (the resolved command, the guardrail's checks with their numbers, the node's " +
			"dry run) and asks send? [y/N]; then the outcome is awaited for 2 s. Type help, or help VERB, at the prompt.\n\n" +
			"At a terminal the line is edited as in a shell: the arrow keys move in it and recall this session's command " +
			"lines (never the answers), Ctrl-R searches them, Ctrl-C (or Ctrl-D on an empty line) leaves; history lists them and !N runs one " +
			"again, previewed again.\n\n" +
			"`wicket trade VERB ...` previews one command and exits without sending; add --yes to send it (exit 1 when the " +
			"node rejects it). `wicket trade VERB --help` shows a verb's fields.\n\n" +
			"The node is --node HOST:PORT, else wicket.toml [node] address. Keys come from WICKET_NODE_OBSERVE_KEY and " +
			"WICKET_NODE_CONTROL_KEY in the environment, then the project's settings/secrets.env.",
		Flags:       []cli.Flag{tradeNodeFlag()},
		Subcommands: subs,
		Action:      tradeREPLAction,
	}
}

func tradeNodeFlag() cli.Flag {
	return &cli.StringFlag{Name: "node", Usage: "the node's `HOST:PORT` (default: wicket.toml [node] address)"}
}

// tradeNodeAddr is --node from the innermost command that was given it.
func tradeNodeAddr(c *cli.Context) string {
	for _, x := range c.Lineage() {
		if x.IsSet("node") {
			return x.String("node")
		}
	}
	return ""
}

// tradeTarget is what every trade subcommand needs: the configuration
// (venues and guardrail limits), the project if there is one, and the
// node's address.
type tradeTarget struct {
	cfg  project.Config
	proj *project.Project
	addr string
}

// openTrade resolves the project and the node address as wicket mcp does:
// a broken project is an error; without a project the defaults apply and
// --node is needed.
func openTrade(projectFlag, nodeAddr string) (tradeTarget, error) {
	if nodeAddr != "" && !strings.Contains(nodeAddr, "://") {
		if _, _, err := net.SplitHostPort(nodeAddr); err != nil {
			return tradeTarget{}, usagef("--node %q is not HOST:PORT (e.g. 127.0.0.1:7879)", nodeAddr)
		}
	}
	p, cfg, err := openProjectAt(projectFlag)
	t := tradeTarget{cfg: cfg, addr: nodeAddr}
	switch {
	case err == nil:
		t.proj = &p
		if t.addr == "" {
			t.addr = cfg.Node.Address
		}
	case errors.Is(err, project.ErrNoProject):
		if t.addr == "" {
			return t, fmt.Errorf("no node address: give --node HOST:PORT, or run inside a project (its wicket.toml [node] address): %w", err)
		}
		t.cfg = project.Defaults()
	default:
		return t, err
	}
	return t, nil
}

// tradeClient connects to the node with keys resolved as wicket mcp resolves
// them (environment, then settings/secrets.env).
func (t tradeTarget) tradeClient() (*trade.Client, error) {
	client, err := nodeClient(t.addr, t.proj)
	if err != nil {
		var ne *node.Error
		if errors.As(err, &ne) && ne.Code == "bad_address" {
			return nil, usageError{err}
		}
		return nil, err
	}
	return trade.NewClient(client, t.cfg), nil
}

// dialTrade is openTrade, and the client for its node.
func dialTrade(o tradeOptions) (tradeTarget, *trade.Client, error) {
	t, err := openTrade(o.project, o.node)
	if err != nil {
		return t, nil, err
	}
	tr, err := t.tradeClient()
	return t, tr, err
}

// tradeOptions is what the trade commands work with, filled from their
// arguments and flags.
type tradeOptions struct {
	project string // the --project flag
	node    string // --node of the innermost command given it (a verb's own line first)
	stdin   io.Reader
	verb    command.Verb // a one-shot verb
	line    trade.Line   // its parsed line
	venue   string       // snapshot: one venue
	events  int          // snapshot: recent events
	ticket  string       // ticket: its id
	json    bool
}

func tradeREPLAction(c *cli.Context) error {
	if c.NArg() > 0 {
		var valid []string
		for _, s := range c.Command.Subcommands {
			valid = append(valid, s.Name)
		}
		return usagef("wicket trade: unknown command %q; valid: %s (or none, for the REPL)", c.Args().First(), strings.Join(valid, ", "))
	}
	o := tradeOptions{project: c.String("project"), node: tradeNodeAddr(c), stdin: c.App.Reader}
	return runTradeREPL(c.Context, o, c.App.Writer, c.App.ErrWriter)
}

// runTradeREPL runs the trade prompt on o.stdin (a terminal, or one command
// per line from a pipe).
func runTradeREPL(ctx context.Context, o tradeOptions, stdout, stderr io.Writer) error {
	t, tr, err := dialTrade(o)
	if err != nil {
		return err
	}
	return trade.RunREPL(ctx, trade.Session{
		Client: tr, Config: t.cfg, Addr: t.addr,
		In: o.stdin, Out: stdout, Err: stderr,
		Terminal: isCharDevice(o.stdin),
	})
}

// tradeOneShotResult is a one-shot verb's --json output.
type tradeOneShotResult struct {
	Preview trade.Preview  `json:"preview"`
	Sent    bool           `json:"sent"`
	Outcome *trade.Outcome `json:"outcome,omitempty"`
	Note    string         `json:"note,omitempty"`
}

func tradeVerbAction(verb command.Verb) cli.ActionFunc {
	return func(c *cli.Context) error {
		ln, err := trade.ParseOneShot(verb, c.Args().Slice())
		if err != nil {
			return usagef("%v", err)
		}
		nodeAddr := ln.Node()
		if nodeAddr == "" {
			nodeAddr = tradeNodeAddr(c)
		}
		o := tradeOptions{project: c.String("project"), node: nodeAddr, verb: verb, line: ln}
		return runTradeVerb(c.Context, o, c.App.Writer, c.App.ErrWriter)
	}
}

// runTradeVerb previews one command (or prints the verb's help) and, with
// --yes, sends it.
func runTradeVerb(ctx context.Context, o tradeOptions, stdout, _ io.Writer) error {
	verb, ln := o.verb, o.line
	t, err := openTrade(o.project, o.node)
	if ln.Help() {
		cfg := t.cfg
		if err != nil {
			cfg = project.Defaults()
		}
		trade.PrintVerbHelp(stdout, verb, cfg, true)
		printHelpExamples(stdout, "trade "+string(verb)) // help_examples.go
		return nil
	}
	if err != nil {
		return err
	}
	cmd, err := ln.Build(t.cfg)
	if err != nil {
		return usagef("%v", err)
	}
	tr, err := t.tradeClient()
	if err != nil {
		return err
	}
	return tradeOneShot(ctx, tr, cmd, ln, stdout)
}

// tradeOneShot previews cmd and, with --yes, sends it.
func tradeOneShot(ctx context.Context, tr *trade.Client, cmd command.Command, ln trade.Line, w io.Writer) error {
	p := tr.Preview(ctx, cmd, ln.Reason())
	res := tradeOneShotResult{Preview: p}
	if !ln.Yes() {
		res.Note = "nothing was sent: run the same command with --yes to send it (it is previewed again just before sending)"
		if p.Command.Verb.HasOrder() && ln.Field("client_order_id") == "" {
			res.Note += "; a new client_order_id is minted then, unless you give client_order_id=ID"
		}
		if ln.JSON() {
			return writeJSON(w, res)
		}
		trade.PrintPreview(w, p)
		fmt.Fprintln(w, res.Note)
		return nil
	}
	if !ln.JSON() {
		trade.PrintPreview(w, p)
	}
	o := tr.Send(ctx, p)
	res.Sent, res.Outcome = o.Status != trade.SendFailed, &o
	if ln.JSON() {
		if err := writeJSON(w, res); err != nil {
			return err
		}
	} else {
		trade.PrintOutcome(w, o)
	}
	return o.Err()
}

func tradeSnapshotAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("wicket trade snapshot takes no arguments, got %q (use --venue V for one venue)", c.Args().First())
	}
	o := tradeOptions{project: c.String("project"), node: tradeNodeAddr(c), venue: c.String("venue"), events: c.Int("events"), json: c.Bool("json")}
	return runTradeSnapshot(c.Context, o, c.App.Writer, c.App.ErrWriter)
}

// runTradeSnapshot prints the node's state.
func runTradeSnapshot(ctx context.Context, o tradeOptions, stdout, _ io.Writer) error {
	venue, events := o.venue, o.events
	if venue != "" {
		if err := project.ValidName("venue", venue); err != nil {
			return usagef("--venue: %v", err)
		}
	}
	if events < 0 || events > 200 {
		return usagef("--events %d: give 0 (none) to 200", events)
	}
	_, tr, err := dialTrade(o)
	if err != nil {
		return err
	}
	snap, err := tr.Node().Snapshot(ctx, venue, events)
	if err != nil {
		return fmt.Errorf("cannot read the node: %w", err)
	}
	if o.json {
		return writeJSON(stdout, snap)
	}
	return trade.PrintSnapshot(stdout, snap)
}

func tradeTicketAction(c *cli.Context) error {
	id, err := oneArg(c, func(int) error { return usagef("wicket trade ticket takes one ticket id: wicket trade ticket TICKET") })
	if err != nil {
		return err
	}
	o := tradeOptions{project: c.String("project"), node: tradeNodeAddr(c), ticket: id, json: c.Bool("json")}
	return runTradeTicket(c.Context, o, c.App.Writer, c.App.ErrWriter)
}

// runTradeTicket prints a sent command's outcome by its ticket id.
func runTradeTicket(ctx context.Context, o tradeOptions, stdout, _ io.Writer) error {
	id := o.ticket
	_, tr, err := dialTrade(o)
	if err != nil {
		return err
	}
	res, err := tr.Node().Ticket(ctx, id, 0)
	if err != nil {
		return fmt.Errorf("cannot read ticket %s: %w", id, err)
	}
	out := trade.TicketOutcome(id, res)
	if o.json {
		return writeJSON(stdout, out)
	}
	trade.PrintOutcome(stdout, out)
	return nil
}
