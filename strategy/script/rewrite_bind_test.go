package script

import (
	"slices"
	"strings"
	"testing"

	"go.starlark.net/starlark"
)

// TestOnlyUsedComparisonsAreBound: a file's top level binds the
// comparison globals its rewritten code calls and no others (a file
// without comparisons none), and the comparisons it makes still answer
// as Starlark's, inside functions and at the top level.
func TestOnlyUsedComparisonsAreBound(t *testing.T) {
	for _, c := range []struct {
		src  string
		want []string // the comparison globals bound
	}{
		{"def signals(bars):\n    return {\"long\": ta.cross_above(bars.close, 1)}\nr = 1\n", nil},
		{"r = 2 > 1\n", []string{"$gt"}},
		{"def f(x):\n    return x <= 3 and x != 0\nr = f(2) and not (1 >= 2) and 1 < 2 and 1 == 1\n", []string{"$eq", "$ge", "$le", "$lt", "$ne"}},
		{"\"\"\"doc\"\"\"\nr = [x for x in [1, 2, 3] if x > 1] == [2, 3]\n", []string{"$eq", "$gt"}},
	} {
		_, prog, errs := compile("t.star", c.src, isStrategyPredeclared)
		if len(errs) > 0 {
			t.Fatalf("%q: %v", c.src, errs)
		}
		g, err := prog.Init(&starlark.Thread{}, predeclared(nil))
		if err != nil {
			t.Fatalf("%q: %v", c.src, err)
		}
		var bound []string
		for name := range g {
			if strings.HasPrefix(name, "$") && name != noneGlobal {
				bound = append(bound, name)
			}
		}
		slices.Sort(bound)
		if !slices.Equal(bound, c.want) {
			t.Errorf("%q binds %v, want %v", c.src, bound, c.want)
		}
		if r := g["r"]; r != starlark.Bool(true) && r != starlark.MakeInt(1) {
			t.Errorf("%q: r is %v", c.src, r)
		}
	}
}
