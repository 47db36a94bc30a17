package agent_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/mark3labs/mcp-go/mcp"

	"wicket/node/nodetest"
)

// terminal is `wicket approve` running on a pseudo-terminal.
type terminal struct {
	t   *testing.T
	f   *os.File
	cmd *exec.Cmd
	mu  sync.Mutex
	out bytes.Buffer
}

func startApprove(t *testing.T, proj string, env ...string) *terminal {
	t.Helper()
	cmd := exec.Command(wicketBin, "--project", proj, "approve")
	cmd.Env = append(append(os.Environ(), cleanEnv...), env...)
	f, err := pty.Start(cmd)
	if err != nil {
		t.Fatalf("start wicket approve on a pty: %v", err)
	}
	term := &terminal{t: t, f: f, cmd: cmd}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			term.mu.Lock()
			term.out.Write(buf[:n])
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		f.Close()
	})
	return term
}

// waitFor waits until the terminal has shown s n times in all.
func (term *terminal) waitFor(s string, n int) string {
	term.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		term.mu.Lock()
		out := term.out.String()
		term.mu.Unlock()
		if strings.Count(out, s) >= n {
			return out
		}
		time.Sleep(20 * time.Millisecond)
	}
	term.mu.Lock()
	defer term.mu.Unlock()
	term.t.Fatalf("wicket approve never showed %q %d times; it showed:\n%s", s, n, term.out.String())
	return ""
}

func (term *terminal) typeLine(s string) {
	term.t.Helper()
	if _, err := io.WriteString(term.f, s+"\n"); err != nil {
		term.t.Fatal(err)
	}
}

// confirmAsync previews and then confirms in the background (the confirm
// waits for the operator).
func confirmAsync(t *testing.T, s *session) (coid string, done <-chan *mcp.CallToolResult) {
	t.Helper()
	prev := object(t, s.call(t, "submit_order", "{"+marketBuy+"}"))
	tok, _ := prev["preview_token"].(string)
	coid, _ = prev["client_order_id"].(string)
	ch := make(chan *mcp.CallToolResult, 1)
	go func() {
		ch <- s.call(t, "submit_order", "{"+marketBuy+`,"confirm":true,"preview_token":"`+tok+`"}`)
	}()
	return coid, ch
}

// TestOperatorApprovalThroughTerminal drives `wicket approve` on a
// pseudo-terminal against two servers of one project: approve sends exactly
// one order (the previewed client order id), decline sends none, an answer
// after the window sends none, and every outcome is traced with who
// decided.
func TestOperatorApprovalThroughTerminal(t *testing.T) {
	n := nodetest.NewServer(t)
	proj := newProject(t)
	traceDir := filepath.Join(t.TempDir(), "trace")
	s := startMCP(t, nodeEnv(n), proj, "--node", n.Addr, "--trace-dir", traceDir, "--approval", "operator")
	if !strings.Contains(s.init.Instructions, "wicket approve") {
		t.Errorf("instructions do not name wicket approve:\n%s", s.init.Instructions)
	}
	term := startApprove(t, proj)
	term.waitFor("Nothing is waiting.", 1)

	// Approve: one order, the previewed client order id.
	coid, done := confirmAsync(t, s)
	out := term.waitFor("Send it?", 1)
	for _, w := range []string{"submit_order: buy 0.01 BTC-USD at market", coid, "guardrail: all checks passed",
		"dry run: the node would accept it", "environment paper", "decide within"} {
		if !strings.Contains(out, w) {
			t.Errorf("wicket approve did not show %q:\n%s", w, out)
		}
	}
	assertOrders(t, n, 0) // nothing before the decision
	term.typeLine("y")
	res := <-done
	if r := object(t, res); r["status"] != "accepted" || r["client_order_id"] != coid {
		t.Fatalf("approved write = %v", r)
	}
	term.waitFor("approved: the server sends it now", 1)
	audit := auditEntries(t, n)
	if len(audit) != 1 || audit[0].ClientOrderID != coid {
		t.Fatalf("node audit = %+v", audit)
	}

	// Decline: nothing sent.
	_, done = confirmAsync(t, s)
	term.waitFor("Send it?", 2)
	term.typeLine("n")
	if res := <-done; !res.IsError || !strings.Contains(text(res), "REFUSED [approval] the operator declined") {
		t.Errorf("declined write: %q", text(res))
	}
	term.waitFor("declined: nothing is sent.", 1)
	assertOrders(t, n, 1)

	// Window expiry, on a second server of the project with a short window:
	// the late yes finds nothing waiting, and nothing is sent.
	s2 := startMCP(t, nodeEnv(n), proj, "--node", n.Addr, "--trace-dir", traceDir, "--approval", "operator", "--approval-timeout", "1s")
	_, done = confirmAsync(t, s2)
	term.waitFor("Send it?", 3)
	res = <-done
	if !res.IsError || !strings.Contains(text(res), "REFUSED [approval] no operator approved this command before") {
		t.Errorf("expired write: %q", text(res))
	}
	term.typeLine("y")
	term.waitFor("no longer waiting", 1)
	assertOrders(t, n, 1)
	term.typeLine("q")

	s.Close()
	s2.Close()
	var got []string
	for _, e := range confirms(readTrace(t, traceDir)) {
		got = append(got, e.Verdict.String()+":"+e.Approval)
		if e.Approval != "timeout" && !strings.Contains(e.ApprovedBy, "(pid ") {
			t.Errorf("%s without who decided: %+v", e.Approval, e)
		}
	}
	if want := "ok:accepted refused:declined refused:timeout"; strings.Join(got, " ") != want {
		t.Errorf("traced confirms %v, want %s", got, want)
	}
}

// TestApproveRefusesAPipe: approvals are typed by a person, never piped.
func TestApproveRefusesAPipe(t *testing.T) {
	proj := newProject(t)
	cmd := exec.Command(wicketBin, "--project", proj, "approve")
	cmd.Env = append(os.Environ(), cleanEnv...)
	cmd.Stdin = strings.NewReader("y\ny\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), "needs an interactive terminal") {
		t.Errorf("piped approve: %v, stderr %q", err, stderr.String())
	}
}
