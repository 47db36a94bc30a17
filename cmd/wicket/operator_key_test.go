package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitOperatorKeyMigrates: for a project made before the operator key
// (no settings/operator.key nor .pub) `wicket init --operator-key` makes
// one and never replaces it, and `wicket secrets list` shows whether it is
// there without printing it. (TestNodeArmNeedsAnOperatorAtATerminal sees
// wicket node arm refuse without it.)
func TestInitOperatorKeyMigrates(t *testing.T) {
	for _, k := range []string{"WICKET_PROJECT", "WICKET_NODE_OBSERVE_KEY", "WICKET_NODE_CONTROL_KEY", "WICKET_DATA_TOKEN", "WICKET_OPERATOR_KEY"} {
		t.Setenv(k, "")
	}
	dir := filepath.Join(t.TempDir(), "proj")
	if code, _, stderr := wicket(t, "init", dir); code != 0 {
		t.Fatalf("init: %d %s", code, stderr)
	}
	key := filepath.Join(dir, "settings", "operator.key")
	for _, f := range []string{key, filepath.Join(dir, "settings", "operator.pub")} {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, _ := wicket(t, "--project", dir, "secrets", "list")
	if code != 0 || !strings.Contains(stdout, "WICKET_OPERATOR_KEY") || !strings.Contains(stdout, "missing") {
		t.Errorf("secrets list without the operator key: %d\n%s", code, stdout)
	}
	code, stdout, stderr := wicket(t, "init", "--operator-key", dir)
	if code != 0 || !strings.Contains(stdout, "made the operator key") {
		t.Fatalf("init --operator-key: %d %s %s", code, stdout, stderr)
	}
	made, err := os.ReadFile(key)
	if err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := wicket(t, "init", "--operator-key", dir); code == 0 || !strings.Contains(stderr, "never overwritten") {
		t.Errorf("a second init --operator-key: %d %s", code, stderr)
	}
	if again, _ := os.ReadFile(key); string(again) != string(made) {
		t.Error("a refused init --operator-key changed the key")
	}
	code, stdout, stderr = wicket(t, "--project", dir, "secrets", "list", "--json")
	if code != 0 || !strings.Contains(stdout, `"name": "WICKET_OPERATOR_KEY"`) || !strings.Contains(stdout, `"source": "settings/operator.key"`) {
		t.Errorf("secrets list with the operator key: %d\n%s%s", code, stdout, stderr)
	}
	for _, line := range strings.Split(string(made), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") && strings.Contains(stdout+stderr, line) {
			t.Error("secrets list printed the operator key")
		}
	}
}
