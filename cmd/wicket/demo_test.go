package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestDemo builds the real binary and runs `wicket demo`: the whole loop
// end to end, as `make demo` does. It passes only if every step behaved.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs the whole demo")
	}
	cmd := exec.Command(builtWicket(t), "demo")
	cmd.Env = append(os.Environ(), "WICKET_PROJECT=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("wicket demo: %v\n%s", err, out)
	}
	for _, want := range []string{"every step behaved as expected", "REFUSED [profile]", "accepted: order", "TOOL"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("demo transcript lacks %q:\n%s", want, out)
		}
	}
}
