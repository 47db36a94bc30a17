package main

import (
	"strings"
	"testing"
)

// transportRules are the package-level edges inside agent that the area
// rules of TestDependencyDirection cannot see: the HTTP front desk
// (agent/front) depends on agent and never the other way, never reaches
// the preview gate or the node itself (a session's Server holds them), and
// the wire layer (agent/wire) imports no other wicket package.
var transportRules = map[string][]string{
	"wicket/agent":       {"wicket/agent/front"},
	"wicket/agent/front": {"wicket/gate", "wicket/node"},
	"wicket/agent/wire":  {"wicket/"},
}

// TestTransportDirection enforces transportRules.
func TestTransportDirection(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range modulePackages(t) {
		rules, ok := transportRules[p.ImportPath]
		if !ok {
			continue
		}
		seen[p.ImportPath] = true
		for _, imp := range p.Imports {
			for _, f := range rules {
				if imp == f || (strings.HasSuffix(f, "/") && strings.HasPrefix(imp, f)) || strings.HasPrefix(imp, f+"/") {
					t.Errorf("%s imports %s: it must never import %s", p.ImportPath, imp, f)
				}
			}
		}
	}
	for p := range transportRules {
		if !seen[p] {
			t.Errorf("package %s is gone: update transportRules", p)
		}
	}
}
