package research

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoStarlarkOutsideWorkers: the research API, the worker pool and the
// agent do not link the Starlark interpreter at all; only the worker's
// handlers (strategy/worker/handlers) and the runtime itself do.
func TestNoStarlarkOutsideWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	for _, pkg := range []string{"wicket/strategy/research", "wicket/strategy/worker", "wicket/agent", "wicket/strategy/templates", "wicket/strategy/cluster"} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.HasPrefix(dep, "go.starlark.net") || dep == "wicket/strategy/script" || dep == "wicket/strategy/worker/handlers" {
				t.Errorf("%s links %s", pkg, dep)
			}
		}
	}
	// The check can fail: the worker's handlers do link it.
	out, err := exec.Command("go", "list", "-deps", "wicket/strategy/worker/handlers").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "go.starlark.net/starlark") {
		t.Errorf("strategy/worker/handlers does not list go.starlark.net: %v %s", err, out)
	}
}
