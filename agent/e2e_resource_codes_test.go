package agent_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestResourceErrorCodesRemaining (issue 44, item 17): the two reads that
// still answered -32603 — a malformed strategy name and a malformed run
// URI — answer -32602 like the series template; a subscribe of the node
// snapshot on a server without --node says why, without contradicting
// itself.
func TestResourceErrorCodesRemaining(t *testing.T) {
	proj := seededProject(t)
	read := func(id int, uri string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":%q}}`+"\n", id, uri)
	}
	in := initLine + read(1, "wicket://strategy/..bad") + read(2, "wicket://runs/") +
		`{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"wicket://node/snapshot"}}` + "\n"
	cmd := exec.Command(wicketBin, "--project", proj, "mcp")
	cmd.Env = append(os.Environ(), cleanEnv...)
	cmd.Stdin = strings.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("wicket mcp: %v", err)
	}
	want := map[float64]float64{1: -32602, 2: -32602, 3: -32002}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		m := rpc(t, line)
		id, _ := m["id"].(float64)
		if id == 0 {
			continue
		}
		seen++
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != want[id] {
			t.Errorf("request %v: %.300s; want code %v", id, line, want[id])
			continue
		}
		msg, _ := e["message"].(string)
		if id == 3 && (strings.Contains(msg, "only wicket://node/snapshot") || !strings.Contains(msg, "--node")) {
			t.Errorf("subscribe without --node: %q", msg)
		}
	}
	if seen != 3 {
		t.Errorf("%d answers of 3:\n%s", seen, out)
	}
}
