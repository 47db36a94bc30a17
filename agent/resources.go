package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"wicket/node"
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

// venueKinds remembers each node venue's kind, environment, armed state
// and mark source as the last snapshot showed them.
type venueKinds struct {
	mu    sync.Mutex
	kinds map[string]node.Venue
}

func (v *venueKinds) set(nv node.Venue) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.kinds == nil {
		v.kinds = map[string]node.Venue{}
	}
	v.kinds[nv.Name] = nv
}

func (v *venueKinds) list() []map[string]any {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := []map[string]any{}
	for n, k := range v.kinds {
		e := map[string]any{"name": n, "kind": k.Kind, "environment": k.Environment, "armed": k.Armed, "mark_source": k.MarkSource}
		if !k.ArmedUntil.IsZero() {
			e["armed_until"] = k.ArmedUntil
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["name"].(string) < out[j]["name"].(string) })
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
	return map[string]any{
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
