package agent_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// rawSession runs `wicket mcp` with input piped in whole, then closed, and
// returns every stdout line.
func rawSession(t *testing.T, input string, args ...string) []string {
	t.Helper()
	cmd := exec.Command(wicketBin, append([]string{"mcp"}, args...)...)
	cmd.Env = append(os.Environ(), cleanEnv...)
	cmd.Stdin = strings.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("wicket mcp: %v\n%s", err, stderr.String())
	}
	var lines []string
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

// rpc decodes a stdout line, failing the test when it is not a JSON-RPC
// 2.0 message.
func rpc(t *testing.T, line string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil || m["jsonrpc"] != "2.0" {
		t.Fatalf("stdout line is not a JSON-RPC message: %.200q", line)
	}
	return m
}

const initLine = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}` + "\n"

func toolsCall(id int, tool string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`+"\n", id, tool)
}

// TestStdoutHygiene feeds malformed, empty, non-object, huge and
// notification lines: every stdout line is a JSON-RPC message and the
// server still answers afterwards.
func TestStdoutHygiene(t *testing.T) {
	huge := `{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"list_templates","arguments":{"name":"` + strings.Repeat("x", 2<<20) + `"}}}` + "\n"
	input := initLine +
		"{not json\n" +
		"\n" +
		"   \n" +
		"[]\n" + "42\n" + `"str"` + "\n" + "null\n" + "{}\n" +
		`[{"jsonrpc":"2.0","id":4,"method":"ping"}]` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"list_templates"}}` + "\n" +
		`{"jsonrpc":"2.0","id":5,"method":"no/such/method"}` + "\n" +
		huge +
		`{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"list_indicators","arguments":{}}}` + "\n"
	// The seven lines that are not a JSON-RPC message each get an error
	// without an id; the notifications get nothing.
	const badLines = 7
	lines := rawSession(t, input)
	byID := map[string]map[string]any{}
	nullIDs := 0
	for _, l := range lines {
		m := rpc(t, l)
		if _, isNote := m["method"]; isNote {
			continue
		}
		if m["id"] == nil {
			nullIDs++
			e, _ := m["error"].(map[string]any)
			if code, _ := e["code"].(float64); code != -32700 && code != -32600 {
				t.Errorf("a line without an id was answered with %s, want a -32700 or -32600 error", l)
			}
			continue
		}
		byID[fmt.Sprint(m["id"])] = m
	}
	if nullIDs != badLines {
		t.Errorf("%d answers without an id, want one per bad line (%d): a notification was answered or a bad line was not", nullIDs, badLines)
	}
	if r := byID["99"]; r == nil || r["result"] == nil {
		t.Errorf("the server did not answer after the bad lines: %v", byID)
	}
	if r := byID["5"]; r == nil || r["error"].(map[string]any)["code"].(float64) != -32601 {
		t.Errorf("unknown method: %v", r)
	}
	if r := byID["77"]; r == nil {
		t.Error("the huge line got no answer")
	}
	if len(byID) != 4 {
		t.Errorf("answered ids %v, want init, 5, 77 and 99 only", byID)
	}
}

// TestNoLostResponses writes 30 tools/call lines at once and closes stdin,
// 100 times: every request gets exactly one response. The last round ends
// with an unterminated line.
func TestNoLostResponses(t *testing.T) {
	rounds := 100
	if testing.Short() {
		rounds = 10
	}
	start := time.Now()
	for round := 0; round < rounds; round++ {
		var in strings.Builder
		in.WriteString(initLine)
		for i := 1; i <= 30; i++ {
			tool := "list_templates"
			if i%2 == 0 {
				tool = "list_indicators"
			}
			in.WriteString(toolsCall(i, tool))
		}
		input := in.String()
		if round == rounds-1 {
			input = strings.TrimSuffix(input, "\n")
		}
		seen := map[string]int{}
		for _, l := range rawSession(t, input) {
			m := rpc(t, l)
			seen[fmt.Sprint(m["id"])]++
		}
		for i := 1; i <= 30; i++ {
			if seen[fmt.Sprint(i)] != 1 {
				t.Fatalf("round %d: request %d answered %d times", round, i, seen[fmt.Sprint(i)])
			}
		}
	}
	t.Logf("%d rounds in %v", rounds, time.Since(start))
}
