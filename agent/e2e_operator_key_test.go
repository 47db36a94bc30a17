package agent_test

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"wicket/node/nodetest"
)

// operatorKeyLine is the hex key line of the project's settings/operator.key.
func operatorKeyLine(t *testing.T, proj string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(proj, "settings", "operator.key"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			return line
		}
	}
	t.Fatal("no key in operator.key")
	return ""
}

// TestMCPRefusesTheOperatorKey: wicket mcp does not start with the
// operator key in its environment, and says why without echoing it.
func TestMCPRefusesTheOperatorKey(t *testing.T) {
	proj := newProject(t)
	key := operatorKeyLine(t, proj)
	cmd := exec.Command(wicketBin, "--project", proj, "mcp")
	cmd.Env = append(append(os.Environ(), cleanEnv...), "WICKET_OPERATOR_KEY="+key)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), "WICKET_OPERATOR_KEY is set in wicket mcp's environment") ||
		strings.Contains(stderr.String(), key) {
		t.Errorf("wicket mcp with the operator key: %v, stderr %q", err, stderr.String())
	}
}

// TestMCPNeverReadsTheOperatorKey: with settings/operator.key gone from
// the project, wicket mcp serves the agent as before, operator approval
// included (it verifies with settings/operator.pub); the answer comes from
// `wicket approve` holding the key in its own environment. An answer on
// the approval socket that the operator key did not sign is refused by the
// server, and the command is not sent.
func TestMCPNeverReadsTheOperatorKey(t *testing.T) {
	n := nodetest.NewServer(t)
	proj := newProject(t)
	key := operatorKeyLine(t, proj)
	if err := os.Remove(filepath.Join(proj, "settings", "operator.key")); err != nil {
		t.Fatal(err)
	}
	s := startMCP(t, nodeEnv(n), proj, "--node", n.Addr, "--approval", "operator")
	if res := s.call(t, "node_snapshot", `{}`); res.IsError {
		t.Fatalf("node_snapshot without the operator key: %s", text(res))
	}

	// Without the key, wicket approve refuses and says how to make one.
	noKey := startApprove(t, proj)
	noKey.waitFor("wicket init --operator-key", 1)

	// An unsigned answer, straight onto the socket: refused, still waiting.
	coid, done := confirmAsync(t, s)
	term := startApprove(t, proj, "WICKET_OPERATOR_KEY="+key)
	term.waitFor("Send it?", 1)
	socks, _ := filepath.Glob(filepath.Join(proj, "settings", "state", "approve-*.sock"))
	if len(socks) != 1 {
		t.Fatalf("approval sockets: %v", socks)
	}
	c, err := net.Dial("unix", socks[0])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	if _, err := c.Write([]byte(`{"op":"list"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	var list struct {
		Waiting []struct {
			ID string `json:"id"`
		} `json:"waiting"`
	}
	line, _ := br.ReadBytes('\n')
	if err := json.Unmarshal(line, &list); err != nil || len(list.Waiting) != 1 {
		t.Fatalf("list: %s %v", line, err)
	}
	if _, err := c.Write([]byte(`{"op":"decide","id":"` + list.Waiting[0].ID + `","approve":true,"by":"the agent"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	if line, _ := br.ReadBytes('\n'); !strings.Contains(string(line), "not signed by the project's operator key") {
		t.Errorf("an unsigned approval: %s", line)
	}
	assertOrders(t, n, 0)

	// The operator's signed yes sends it.
	term.typeLine("y")
	res := <-done
	if r := object(t, res); r["status"] != "accepted" || r["client_order_id"] != coid {
		t.Fatalf("approved write = %v", r)
	}
	assertOrders(t, n, 1)
}

// TestOperatorApprovalNeedsThePublicKey: in a project made before the
// operator key, wicket mcp --approval operator does not start, and says
// how to make one.
func TestOperatorApprovalNeedsThePublicKey(t *testing.T) {
	proj := newProject(t)
	for _, f := range []string{"operator.key", "operator.pub"} {
		if err := os.Remove(filepath.Join(proj, "settings", f)); err != nil {
			t.Fatal(err)
		}
	}
	code, stderr := runWicketCode(t, proj, "mcp", "--approval", "operator")
	if code == 0 || !strings.Contains(stderr, "wicket init --operator-key") {
		t.Errorf("wicket mcp --approval operator without settings/operator.pub: exit %d, stderr %q", code, stderr)
	}
}
