package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/mark3labs/mcp-go/mcp"
)

// ring groups tools by what they reach.
type ring int

// Rings, from the innermost out.
const (
	ringAuthoring ring = iota // offline: parses and lists, touches nothing outside the process
	ringResearch              // the history store / data service
	ringLiveRead              // reads a node
	ringLiveWrite             // writes to a node, through the preview gate
)

func (r ring) String() string {
	return [...]string{"authoring", "research", "live read", "live write"}[r]
}

// hints are a tool's MCP annotations, always set explicitly (mcp-go's
// defaults would declare every tool destructive and open-world).
// OpenWorld is a pointer because "declares nothing" is a real state: the
// offline profile withholds such a tool.
type hints struct {
	ReadOnly    bool
	Destructive bool
	Idempotent  bool
	OpenWorld   *bool
}

func flag(b bool) *bool { return &b }

// toolSpec is one tool: what tools/list shows and what tools/call runs.
type toolSpec struct {
	Name        string
	Title       string
	Description string // one sentence first; clients cut near 240 characters
	Ring        ring
	Hints       hints
	Params      []param
	Output      map[string]any // output JSON schema, when the shape is fixed
	// Write marks a gated write tool. Only the write roster sets it;
	// isWriteTool reads it, and so do the read-only ring and the gate.
	Write bool
	// UI is the ui:// resource of the MCP Apps view its results are shown
	// in (report_app.go), declared as _meta.ui.resourceUri; "" for none.
	UI     string
	Handle func(ctx context.Context, c *call) *result
}

// registry is the ordered set of tool specs a server knows.
type registry struct {
	specs []*toolSpec
	index map[string]*toolSpec
}

// newRegistry indexes specs; a duplicate name is a programming error.
func newRegistry(specs ...*toolSpec) *registry {
	r := &registry{index: map[string]*toolSpec{}}
	for _, s := range specs {
		if _, dup := r.index[s.Name]; dup {
			panic("agent: duplicate tool " + s.Name)
		}
		r.index[s.Name] = s
		r.specs = append(r.specs, s)
	}
	sort.Slice(r.specs, func(i, j int) bool { return r.specs[i].Name < r.specs[j].Name })
	return r
}

// Lookup returns the spec with that name.
func (r *registry) Lookup(name string) (*toolSpec, bool) {
	s, ok := r.index[name]
	return s, ok
}

// Specs returns every spec, sorted by name.
func (r *registry) Specs() []*toolSpec { return r.specs }

// Names returns every tool name, sorted.
func (r *registry) Names() []string {
	out := make([]string, len(r.specs))
	for i, s := range r.specs {
		out[i] = s.Name
	}
	return out
}

// isWriteTool reports whether name is on the write roster: the tools the
// preview gate routes. The read-only ring is its negation.
func (r *registry) isWriteTool(name string) bool {
	s, ok := r.index[name]
	return ok && s.Write
}

// mcpTool renders the spec for tools/list.
func (s *toolSpec) mcpTool() mcp.Tool {
	t := mcp.NewToolWithRawSchema(s.Name, s.Description, inputSchema(s.Params))
	t.Title = s.Title // the top-level title only: annotations.title would repeat it in every tools/list
	t.Annotations = mcp.ToolAnnotation{
		ReadOnlyHint:    flag(s.Hints.ReadOnly),
		DestructiveHint: flag(s.Hints.Destructive),
		IdempotentHint:  flag(s.Hints.Idempotent),
		OpenWorldHint:   s.Hints.OpenWorld,
	}
	if s.Hints.ReadOnly { // the spec reads destructive and idempotent only when readOnlyHint is false
		t.Annotations.DestructiveHint, t.Annotations.IdempotentHint = nil, nil
	}
	if s.Output != nil {
		b, err := json.Marshal(s.Output)
		if err != nil {
			panic(fmt.Sprintf("agent: output schema of %s: %v", s.Name, err))
		}
		t.RawOutputSchema = b
	}
	if s.UI != "" {
		t.Meta = uiMeta(s.UI)
	}
	return t
}

// Check builds the registry with no backends and derives the access set:
// what `wicket mcp --check` prints and what start-up validates.
func Check(profile string, deny []string) (*ToolAccess, error) {
	return newToolAccess(newRegistry((&toolbox{}).specs()...), profile, deny)
}
