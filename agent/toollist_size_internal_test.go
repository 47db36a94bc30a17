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
// 12): each description says what the tool is for in one short first
// sentence, and the whole list stays under maxToolListBytes. The bound
// was 34,000 bytes until the protective orders (issue 26) added four
// submit_order arguments and four order types, and run_backtest its
// intrabar and robustness arguments: 34,610 bytes after the descriptions
// that grew were cut back. Raise it only for new arguments, never for
// longer prose.
const (
	maxFirstSentence = 160
	maxDescription   = 220
	// 34,610 used, + run_optimize's measured 3,979 bytes (issue 29 item 3: a tool
	// of its own), + run_sweep's deflate_by and the bracket's and modify's new
	// arguments (issues 28 and 26), and run_backtest's allowance (issue 25) as
	// merged: 39,344 bytes; + the deployment tools' measured 3,069 bytes
	// (issue 25 item 4: deploy_strategy, stop_deployment, deployment_report)
	// and node_snapshot's deployments (81): 42,494 bytes; measured 42,499, + the
	// kill, heartbeat and stream_loss in node_snapshot's and risk_status's
	// outputSchemas and risk_status itself (issue 43: no arguments, the kill
	// and heartbeat shallow in its schema), measured: 43,890 bytes; + the
	// research plans (issue 45: research_plan, research_verdict, run_*'s
	// plan and research_history's two kinds, the two tools' shallow
	// outputSchemas), measured: 46,038 bytes.
	maxToolListBytes = 46038
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
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	list := lines[len(lines)-1]
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
