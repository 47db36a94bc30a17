package main

import (
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"wicket/node"
	"wicket/node/command"
	"wicket/node/nodetest"
)

// TestTradeREPLAtATerminal runs the wicket binary's REPL on a
// pseudo-terminal: lines are edited (the up arrow recalls the last command
// line, which is previewed again), an answer is never recalled, and only y
// sends.
func TestTradeREPLAtATerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the wicket binary on a pseudo-terminal")
	}
	n := nodetest.NewServer(t)
	proj := tradeProject(t, n) // the node keys in the environment the child inherits
	bin, err := exec.LookPath("wicket")
	if err != nil {
		t.Fatalf("the wicket binary is not on PATH (script_test.go's TestMain puts it there): %v", err)
	}
	cmd := exec.Command(bin, "--project", proj, "trade", "--node", n.Addr)
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	out := &syncBuffer{}
	go io.Copy(out, tty) //nolint:errcheck // ends when the process exits

	// waitFor waits until the output holds s count times.
	waitFor := func(s string, count int) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for strings.Count(out.String(), s) < count {
			if time.Now().After(deadline) {
				t.Fatalf("no %q (x%d) on the terminal:\n%s", s, count, out.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	typeKeys := func(keys string) {
		t.Helper()
		if _, err := tty.Write([]byte(keys)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor("wicket> ", 1)
	typeKeys("state halted --reason drill\r")
	waitFor("send? [y/N] ", 1)
	typeKeys("n\r")
	waitFor("not sent", 1)
	waitFor("wicket> ", 2)
	typeKeys("\x1b[A\r") // up arrow: the command line, not the answer n
	waitFor("send? [y/N] ", 2)
	typeKeys("y\r")
	waitFor("accepted (ticket ", 1)
	waitFor("wicket> ", 3)
	typeKeys("quit\r")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("wicket trade at a terminal: %v\n%s", err, out.String())
		}
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("wicket trade did not end after quit:\n%s", out.String())
	}
	a := auditOf(t, n)
	if len(a) != 1 || a[0].Command.Verb != command.SetTradingState || a[0].Reason != "drill" || a[0].Outcome.Status != node.Accepted {
		t.Fatalf("audit = %+v, want the recalled line sent once\n%s", a, out.String())
	}
}
