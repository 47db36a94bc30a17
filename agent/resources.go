package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// Resource URIs.
const (
	uriSnapshot = "wicket://node/snapshot"
	uriSeries   = "wicket://series"
	uriSession  = "wicket://session"
)

// toolResources maps a resource to the tool it routes into; a resource is
// served exactly when its tool is.
var toolResources = []struct {
	uri, name, tool, description string
}{
	{uriSnapshot, "node snapshot", "node_snapshot", "The node's trading state, venues, positions and recent events (the same as node_snapshot with no arguments)."},
	{uriSeries, "bar series", "list_series", "The bar series in the history store (the same as list_series)."},
}

// addResources registers the resources the access set admits.
func (s *Server) addResources() {
	for _, r := range toolResources {
		if !s.access.Served(r.tool) {
			continue
		}
		spec, _ := s.reg.Lookup(r.tool)
		uri := r.uri
		s.mcp.AddResource(mcp.NewResource(r.uri, r.name,
			mcp.WithResourceDescription(r.description), mcp.WithMIMEType("application/json")),
			func(ctx context.Context, _ mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				res := s.run(ctx, spec, &call{tool: spec.Name, args: args{}})
				if res.errText != "" {
					return nil, fmt.Errorf("%s", res.errText)
				}
				b, err := json.Marshal(res.structured)
				if err != nil {
					return nil, err
				}
				return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "application/json", Text: string(b)}}, nil
			})
	}
	s.mcp.AddResource(mcp.NewResource(uriSession, "session",
		mcp.WithResourceDescription("What this server is: profile, deny list, served and refused tools, tracing, data service and node."),
		mcp.WithMIMEType("application/json")),
		func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			b, err := json.Marshal(s.sessionInfo())
			if err != nil {
				return nil, err
			}
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: uriSession, MIMEType: "application/json", Text: string(b)}}, nil
		})
}

// venueKinds remembers each node venue's kind (paper or live) once a
// snapshot has shown it.
type venueKinds struct {
	mu    sync.Mutex
	kinds map[string]string
}

func (v *venueKinds) set(name, kind string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.kinds == nil {
		v.kinds = map[string]string{}
	}
	v.kinds[name] = kind
}

func (v *venueKinds) list() []map[string]string {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := []map[string]string{}
	for n, k := range v.kinds {
		out = append(out, map[string]string{"name": n, "kind": k})
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["name"] < out[j]["name"] })
	return out
}

// sessionInfo is the wicket://session document. It touches nothing
// outside the process.
func (s *Server) sessionInfo() map[string]any {
	denied := s.access.Denied
	if denied == nil {
		denied = []string{}
	}
	node := any(nil)
	if s.opts.NodeAddr != "" {
		node = map[string]any{"address": s.opts.NodeAddr, "venues": s.venues.list()}
	}
	trace := map[string]any{"enabled": s.opts.Trace != nil}
	if s.opts.TraceDir != "" {
		trace["dir"] = s.opts.TraceDir
	}
	approvalInfo, budgets := s.loop.status() // loop.go
	return map[string]any{
		"approval":     approvalInfo,
		"budgets":      budgets,
		"server":       "wicket",
		"version":      s.opts.Version,
		"session":      s.session,
		"profile":      s.access.Profile,
		"deny_tool":    denied,
		"served":       s.access.ServedNames(),
		"refused":      s.access.RefusedNames(),
		"trace":        trace,
		"data_service": s.opts.DataService,
		"node":         node,
	}
}
