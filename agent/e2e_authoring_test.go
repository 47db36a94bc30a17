package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// hostile strategies: each must come back as a clean, positioned problem or
// tool error, and the same server must answer the next call.
var hostile = []struct {
	name, source, want string
}{
	{"infinite loop", "def signals(bars):\n    x = 0\n    for i in range(1000000000):\n        x += 1\n    return {}\n", "limit"},
	{"memory bomb", "x = [[0] * 100000000 for i in range(40)]\ndef signals(bars):\n    return {}\n", "memory"},
	{"lookahead", "def signals(bars):\n    c = bars.close\n    v = c[-1]\n    return {\"long\": c > 0}\n", "lookahead"},
	{"file load", "load(\"/etc/passwd\", \"x\")\ndef signals(bars):\n    return {}\n", "load"},
	{"deep recursion", "def f(n):\n    return f(n + 1)\ndef signals(bars):\n    f(0)\n    return {}\n", ""},
}

func TestAuthoringToolsAndHostileStrategies(t *testing.T) {
	proj := newProject(t)
	smallWorkerMemory(t, proj) // the memory bomb dies in a moment
	s := startMCP(t, nil, proj, "--profile", "offline")

	// A template validates and its knobs are discovered.
	tpl := object(t, s.call(t, "list_templates", `{"name":"sma_cross"}`))
	src, _ := tpl["source"].(string)
	if src == "" {
		t.Fatalf("template source missing: %v", tpl)
	}
	srcJSON, _ := json.Marshal(src)
	rep := object(t, s.call(t, "validate_strategy", `{"source":`+string(srcJSON)+`}`))
	if rep["valid"] != true || rep["style"] != "signals" {
		t.Fatalf("sma_cross template does not validate: %v", rep)
	}
	if c, _ := rep["lookahead_check"].(string); !strings.HasPrefix(c, "passed (") {
		t.Errorf("validate carries no lookahead_check: %v", rep)
	}
	// A name resolves as on the CLI: the project has no strategies/sma_cross.star,
	// so the template of that name stands in; a name that is neither is refused.
	if byName := object(t, s.call(t, "validate_strategy", `{"name":"sma_cross"}`)); byName["valid"] != true || byName["summary"] != rep["summary"] {
		t.Errorf("validate by template name: %v", byName)
	}
	if r := s.call(t, "discover_params", `{"name":"nosuch"}`); !r.IsError || !strings.Contains(text(r), "no template has that name") {
		t.Errorf("unknown name: %q", text(r))
	}
	knobs := object(t, s.call(t, "discover_params", `{"source":`+string(srcJSON)+`}`))
	if knobs["count"].(float64) < 2 {
		t.Fatalf("discover_params: %v", knobs)
	}
	if r := s.call(t, "validate_strategy", `{"name":"sma_cross","source":"x"}`); !r.IsError || !strings.Contains(text(r), "not both") {
		t.Errorf("name and source together: %q", text(r))
	}
	if r := s.call(t, "validate_strategy", `{"name":"../../etc/passwd"}`); !r.IsError || !strings.Contains(text(r), "invalid strategy name") {
		t.Errorf("path as a name: %q", text(r))
	}

	// A worker killed at a limit is also announced as a log message.
	var got notes
	s.OnNotification(got.add)
	lvl := mcp.SetLevelRequest{}
	lvl.Params.Level = mcp.LoggingLevelWarning
	//lint:ignore SA1019 deprecated only from protocol 2026-07-28; this session speaks 2025-06-18, where it is current
	if err := s.SetLevel(context.Background(), lvl); err != nil {
		t.Fatal(err)
	}
	for _, h := range hostile {
		t.Run(h.name, func(t *testing.T) {
			body, _ := json.Marshal(h.source)
			r := s.call(t, "validate_strategy", `{"source":`+string(body)+`}`)
			out := text(r)
			if !r.IsError {
				var rep map[string]any
				if err := json.Unmarshal([]byte(out), &rep); err != nil || rep["valid"] != false {
					t.Fatalf("hostile strategy reported valid: %s", out)
				}
			}
			if !strings.Contains(strings.ToLower(out), h.want) {
				t.Errorf("result does not say %q: %.400s", h.want, out)
			}
			if h.want == "memory" {
				if !r.IsError {
					t.Fatalf("the memory bomb did not fail the call: %.300s", out)
				}
				got.wait(t, "notifications/message", "killed at its memory limit")
			}
			// The server answers the next call.
			if next := s.call(t, "list_indicators", `{}`); next.IsError {
				t.Fatalf("server did not answer after %s: %s", h.name, text(next))
			}
		})
	}
}
