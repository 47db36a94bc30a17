package agent_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestResourceErrorCodes (issue 31, item 12): over the real binary, a
// template URI naming nothing answers -32002 (resource not found), not
// -32603; a malformed variable -32602; resources/subscribe refuses a URI
// that sends no updates (-32602 for a resource this server has, -32002 for
// one it does not) while the stored ones still read.
func TestResourceErrorCodes(t *testing.T) {
	proj := seededProject(t)
	read := func(id int, uri string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":%q}}`+"\n", id, uri)
	}
	sub := func(id int, uri string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/subscribe","params":{"uri":%q}}`+"\n", id, uri)
	}
	in := initLine +
		read(1, "wicket://series/NOPE-USD@1d") +
		read(2, "wicket://strategy/nope") +
		read(3, "wicket://runs/run-nope") +
		read(4, "wicket://series/BTC-USD@1d") +
		read(5, "wicket://series/..") +
		sub(6, "wicket://session") +
		sub(7, "wicket://nothing/here") +
		sub(8, "https://example.com/x")
	want := map[float64]float64{1: -32002, 2: -32002, 3: -32002, 5: -32602, 6: -32602, 7: -32002, 8: -32002}
	got := map[float64]bool{}
	cmd := exec.Command(wicketBin, "--project", proj, "mcp")
	cmd.Env = append(os.Environ(), cleanEnv...)
	cmd.Stdin = strings.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("wicket mcp: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		m := rpc(t, line)
		id, _ := m["id"].(float64)
		if id == 0 {
			continue
		}
		got[id] = true
		e, _ := m["error"].(map[string]any)
		if id == 4 {
			if e != nil || !strings.Contains(line, "BTC-USD") {
				t.Errorf("reading a stored series: %.300s", line)
			}
			continue
		}
		if e == nil || e["code"] != want[id] {
			t.Errorf("request %v: %.300s; want code %v", id, line, want[id])
		}
	}
	if len(got) != 8 {
		t.Errorf("answered %d of 8 requests", len(got))
	}
}
