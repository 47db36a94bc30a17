package main

import (
	"strings"
	"testing"
)

// TestCallersOAuthCommands: grants, revoke and approve --oauth name what
// they need and refuse what they cannot do (the flow itself is in
// agent/e2e_2026_oauth_builtin_test.go).
func TestCallersOAuthCommands(t *testing.T) {
	proj := initProject(t)
	if code, _, stderr := wicket(t, "--project", proj, "callers", "grants"); code != 0 || !strings.Contains(stderr, "no OAuth grants") {
		t.Errorf("grants with none: %d %s", code, stderr)
	}
	if code, stdout, _ := wicket(t, "--project", proj, "callers", "grants", "--json"); code != 0 || strings.TrimSpace(stdout) != "[]" {
		t.Errorf("grants --json with none: %d %q", code, stdout)
	}
	if code, _, stderr := wicket(t, "--project", proj, "callers", "revoke", "claude-abc123"); code != 2 || !strings.Contains(stderr, `no such OAuth grant named "claude-abc123"`) {
		t.Errorf("revoke of an unknown grant: %d %s", code, stderr)
	}
	if code, _, stderr := wicket(t, "--project", proj, "callers", "revoke"); code != 2 || !strings.Contains(stderr, "takes one NAME") {
		t.Errorf("revoke without a name: %d %s", code, stderr)
	}
	if code, _, stderr := wicket(t, "--project", proj, "approve", "--oauth"); code == 0 || !strings.Contains(stderr, "approve --oauth needs an interactive terminal") {
		t.Errorf("approve --oauth from a pipe: %d %s", code, stderr)
	}
}
