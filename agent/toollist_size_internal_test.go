package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"

	"wicket/internal/project"
)

// Bounds on what tools/list puts into a model's context (issue 31, item
// 12; issue 44, item 16): each description says what the tool is for in
// one short first sentence, and the whole list stays under
// maxToolListBytes. The list had grown to 42,494 bytes; issue 44 cut it
// to 30,049 (output schemas describe the top level only, no required
// lists on derived ones, no hints the spec ignores for read-only tools,
// no annotations.title beside title, descriptions that repeat neither the
// enum nor the tool's own words). The bound is the 32,000: a new
// tool fits in what is left; raise it never for longer prose.
const (
	maxFirstSentence = 160
	maxDescription   = 220
	maxToolListBytes = 32000
)

// TestToolListSize: tools/list under the full profile, every tool served,
// keeps each description and the whole answer within the bounds.
func TestToolListSize(t *testing.T) {
	s, err := New(Options{Profile: ProfileFull, NewID: uuid.NewString}, Backends{Config: project.Defaults()})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n"
	if err := s.Serve(context.Background(), strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	var list string // the answers may come in any order: find id 2's
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if strings.Contains(line, `"id":2,`) {
			list = line
		}
	}
	var resp struct {
		Result struct {
			Tools []struct {
				Name        string `json:"name"`
				Description string `json:"description"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(list), &resp); err != nil || len(resp.Result.Tools) == 0 {
		t.Fatalf("tools/list: %v %.200s", err, list)
	}
	for _, tool := range resp.Result.Tools {
		first, _, _ := strings.Cut(tool.Description, ". ")
		if len(first) > maxFirstSentence || len(tool.Description) > maxDescription {
			t.Errorf("%s: description of %d characters, first sentence %d (at most %d and %d): %q",
				tool.Name, len(tool.Description), len(first), maxDescription, maxFirstSentence, tool.Description)
		}
	}
	t.Logf("tools/list: %d tools, %d bytes", len(resp.Result.Tools), len(list))
	if len(list) > maxToolListBytes {
		t.Errorf("tools/list is %d bytes, over %d: tighten descriptions (tool and argument) before adding", len(list), maxToolListBytes)
	}
}
