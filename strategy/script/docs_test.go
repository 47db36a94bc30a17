package script

import (
	"os"
	"strings"
	"testing"

	"go.starlark.net/starlark"
)

// TestLookaheadDocsCoverEveryMember: the audit in docs/strategies.md names
// every member dir() shows of bars, ctx, ctx.bar, param and math, so a
// member added here without saying why it is causal fails.
func TestLookaheadDocsCoverEveryMember(t *testing.T) {
	doc, err := os.ReadFile("../../docs/strategies.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(doc), "## Lookahead: impossible by construction, proven on every run")
	if !ok {
		t.Fatal("docs/strategies.md has no lookahead section")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	r := newRun(nil, nil)
	members := map[string][]string{
		"bars":    (&barsValue{r: r}).AttrNames(),
		"ctx":     ctxBuiltins,
		"ctx.bar": (&barView{r: r}).AttrNames(),
		"param":   paramModule.AttrNames(),
		"math":    predeclared(nil)["math"].(starlark.HasAttrs).AttrNames(),
	}
	for what, names := range members {
		for _, name := range names {
			if !strings.Contains(sec, "`"+name+"`") {
				t.Errorf("the lookahead audit does not name %s.%s", what, name)
			}
		}
	}
}
