package script

import (
	"testing"

	"go.starlark.net/starlark"
)

// TestNoneTestsKeepTheFilesNone: `x == None` reads a global bound to None
// only in a file that never binds the name None; a file that does (at the
// top level, as a parameter, a local, a loop variable) compares with its
// own None, as Starlark says.
func TestNoneTestsKeepTheFilesNone(t *testing.T) {
	for _, c := range []struct {
		src  string
		want bool
	}{
		{"r = (1 == None, None != None)\n", false},
		{"None = 1\nr = 1 == None\n", true},
		{"def f(None):\n    return 1 == None\nr = f(1)\n", true},
		{"def f(x, None=1):\n    return 1 == None\nr = f(0)\n", true},
		{"def f():\n    None = 1\n    return 1 == None\nr = f()\n", true},
		{"def f():\n    for None in [1]:\n        return 1 == None\nr = f()\n", true},
		{"r = [1 == None for None in [1]][0]\n", true},
		{"def f():\n    (a, None) = (0, 1)\n    return None != 1\nr = not f()\n", true},
		{"r = (lambda None: 1 == None)(1)\n", true},
	} {
		f, prog, errs := compile("t.star", c.src, isStrategyPredeclared)
		if len(errs) > 0 || f == nil {
			t.Fatalf("%q: %v", c.src, errs)
		}
		g, err := prog.Init(&starlark.Thread{}, predeclared(nil))
		if err != nil {
			t.Fatalf("%q: %v", c.src, err)
		}
		r := g["r"]
		if tup, ok := r.(starlark.Tuple); ok {
			r = starlark.Bool(tup[0].Truth() || tup[1].Truth())
		}
		if r != starlark.Bool(c.want) {
			t.Errorf("%q: r = %v, want %v", c.src, r, c.want)
		}
	}
}
