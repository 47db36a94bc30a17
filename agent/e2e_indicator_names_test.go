package agent_test

import (
	"strings"
	"testing"
)

// TestListIndicatorsTALibNames checks that list_indicators answers a name in
// TA-Lib's upper-case spelling with the same entry as the lower-case one.
func TestListIndicatorsTALibNames(t *testing.T) {
	s := startMCP(t, nil, newProject(t))
	lower := s.call(t, "list_indicators", `{"name":"sma"}`)
	for _, name := range []string{"SMA", "Sma"} {
		r := s.call(t, "list_indicators", `{"name":"`+name+`"}`)
		if r.IsError || text(r) != text(lower) {
			t.Errorf("name %q: %s (want the entry for sma)", name, text(r))
		}
	}
	if r := s.call(t, "list_indicators", `{"name":"SMAX"}`); !r.IsError || !strings.Contains(text(r), `no indicator named "SMAX"`) {
		t.Errorf("unknown upper-case name: %s", text(r))
	}
}
