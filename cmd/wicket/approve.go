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
)

func approveCommand() *cli.Command {
	return &cli.Command{
		Name:  "approve",
		Usage: "approve or decline, at a terminal, the confirmed writes this project's `wicket mcp --approval operator` servers hold",
		Description: "Watches the approval sockets in settings/state/ of this project and shows each waiting command in plain words: " +
			"the resolved command, the guardrail, the node's dry run, the venue's environment and state, and how long is left. " +
			"Answer y to send it, n to decline it, s to skip it (it is then refused when its window passes); q or Ctrl-D quits. " +
			"It needs an interactive terminal: approving a write is a person's decision, so it refuses a pipe or a file on stdin. " +
			"Every answer is signed with the operator key (settings/operator.key, or WICKET_OPERATOR_KEY in its environment); the servers take no other. " +
			"Nothing is ever approved by default, by a timeout or by an error.",
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "poll", Value: 250 * time.Millisecond, Usage: "how often the servers are asked for waiting commands", Hidden: true},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("approve takes no arguments, got %q", c.Args().First())
			}
			if !isTerminal(c.App.Reader) || !isTerminal(c.App.Writer) {
				return usagef("wicket approve needs an interactive terminal: approving a write is a person's decision, " +
					"so it does not read a pipe or a file; run it in a terminal")
			}
			p, _, err := openProject(c)
			if err != nil {
				return err
			}
			key, err := operatorKey(p) // every answer is signed with it
			if err != nil {
				return err
			}
			a := &approver{
				dir: p.StateDir(), key: key, in: startLines(c.App.Reader), out: c.App.Writer,
				by: whoAmI(c.App.Reader), poll: c.Duration("poll"), now: time.Now,
			}
			return a.run(c.Context)
		},
	}
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
