package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/urfave/cli/v2"

	"wicket/agent"
	"wicket/agent/approval"
	"wicket/agent/budget"
	"wicket/internal/project"
)

// mcpLoopFlags are wicket mcp's approval and budget flags; their defaults
// come from wicket.toml's [agent] table, and a flag given overrides it.
func mcpLoopFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "approval", Usage: "who must agree before a confirmed write is sent: " + strings.Join(project.ApprovalModes, ", ") +
			" (default: [agent] approval in wicket.toml, else none)"},
		&cli.DurationFlag{Name: "approval-timeout", Usage: "how long a person has to decide (at most until the preview expires; default: until it expires)"},
		&cli.IntFlag{Name: budget.NameWrites, Usage: "confirmed writes this session may send; 0 = no limit (default: [agent] max_writes)"},
		&cli.StringFlag{Name: budget.NameNotional, Usage: "total order notional this session may send, a decimal `AMOUNT`; 0 = no limit (default: [agent] max_notional)"},
		&cli.IntFlag{Name: budget.NamePerMinute, Usage: "confirmed writes this session may send in any minute; 0 = no limit (default: [agent] max_writes_per_minute)"},
	}
}

// mcpLoopOptions are wicket mcp's approval and budget flags, as given.
type mcpLoopOptions struct {
	approval        string
	approvalTimeout time.Duration
	maxWrites       int
	maxPerMinute    int
	maxNotional     string          // the decimal's text
	set             map[string]bool // the flags given on the command line
}

// mcpLoopFlagsOf reads the approval and budget flags from c.
func mcpLoopFlagsOf(c *cli.Context) mcpLoopOptions {
	return mcpLoopOptions{
		approval: c.String("approval"), approvalTimeout: c.Duration("approval-timeout"),
		maxWrites: c.Int(budget.NameWrites), maxPerMinute: c.Int(budget.NamePerMinute), maxNotional: c.String(budget.NameNotional),
		set: setFlags(c, "approval", budget.NameWrites, budget.NamePerMinute, budget.NameNotional),
	}
}

// mcpLoopConfig resolves the flags over the [agent] defaults. It opens no
// socket.
func mcpLoopConfig(o mcpLoopOptions, cfg project.Config) (agent.Loop, error) {
	a := cfg.Agent
	l := agent.Loop{
		Approval: a.Approval,
		Timeout:  o.approvalTimeout,
		Budget:   budget.Limits{MaxWrites: a.MaxWrites, MaxNotional: a.MaxNotional, MaxPerMinute: a.MaxWritesPerMinute},
	}
	if o.set["approval"] {
		l.Approval = o.approval
	}
	if l.Approval == "" {
		l.Approval = project.ApprovalNone
	}
	if err := project.ValidApproval(l.Approval); err != nil {
		return l, usagef("--approval: %v", err)
	}
	if o.set[budget.NameWrites] {
		l.Budget.MaxWrites = o.maxWrites
	}
	if o.set[budget.NamePerMinute] {
		l.Budget.MaxPerMinute = o.maxPerMinute
	}
	if o.set[budget.NameNotional] {
		n, err := decimal.NewFromString(strings.TrimSpace(o.maxNotional))
		if err != nil {
			return l, usagef("--%s %q is not a decimal amount (e.g. 25000 or 2500.50)", budget.NameNotional, o.maxNotional)
		}
		l.Budget.MaxNotional = n
	}
	if l.Timeout < 0 {
		return l, usagef("--approval-timeout must not be negative")
	}
	if err := l.Budget.Validate(); err != nil {
		return l, usagef("--%v", err)
	}
	return l, nil
}

// mcpLoop is mcpLoopConfig plus, for operator approval, the process's
// approval socket in the project's settings/state (close it when done).
func mcpLoop(o mcpLoopOptions, cfg project.Config, p *project.Project) (agent.Loop, func(), error) {
	l, err := mcpLoopConfig(o, cfg)
	if err != nil {
		return l, func() {}, err
	}
	if l.Approval != project.ApprovalOperator {
		return l, func() {}, nil
	}
	if p == nil {
		return l, func() {}, usagef("--approval operator needs a project: its settings/state holds the socket `wicket approve` talks to")
	}
	operator, err := p.OperatorPublic() // the public half only: the private key stays with `wicket approve`
	if err != nil {
		return l, func() {}, fmt.Errorf("--approval operator: answers are verified with the operator's public key: %w", err)
	}
	q, err := approval.Listen(p.StateDir(), time.Now, operator)
	if err != nil {
		return l, func() {}, err
	}
	l.Queue, l.Project = q, p.Root
	return l, func() { q.Close() }, nil
}

// printLoop is the --check report of approval and budgets.
func printLoop(w io.Writer, l agent.Loop) {
	fmt.Fprintf(w, "approval: %s\n", l.Approval)
	if l.Timeout > 0 && l.Approval != project.ApprovalNone {
		fmt.Fprintf(w, "approval-timeout: %s\n", l.Timeout)
	}
	fmt.Fprintf(w, "budgets: %s\n", l.Budget)
}
