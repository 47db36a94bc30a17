package script

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzCompile feeds arbitrary text through what happens to every source
// before it runs (parse, the comparison rewrite, resolve, compile) and
// through the static indicator description: an error is fine, a panic or a
// hang is not. Execution is bounded by step caps and the worker's memory
// limit, not fuzzed in-process: a few steps can ask for gigabytes.
func FuzzCompile(f *testing.F) {
	seeds, _ := filepath.Glob("../templates/star/*.star")
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	for _, s := range []string{
		"", "x = 1 +", "def f(:\n", "a < b < c", "x = [y for y in z if y > 1]", "lambda x: x >= 2",
		"def signals(bars):\n    return {'long': bars.close[-1] > 0}\n", "load('indicators/x', 'f')\n",
		"x = {1: 2 == 3, 'a': not 4 != 5}\n", "f(a=b<c, *d, **e)\n", "x = a[1:2:3] <= b\n",
		"\"\"\"doc\"\"\"\ndef f(a, b=1 > 2, *c, d, **e):\n    return (a if b < c else d) == e\n",
		"while x != y:\n    for a, b in c:\n        if a > b: break\n", "x = ((((((1))))))", "\t\x00\xff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		file, prog, errs := compile("f.star", src, isStrategyPredeclared)
		if len(errs) == 0 && (file == nil || prog == nil) {
			t.Fatal("no program and no error")
		}
		for _, e := range errs {
			if e.Kind != KindSyntax || e.Hint == "" {
				t.Fatalf("compile error %+v", e)
			}
		}
		_ = docstring(file)
		_ = describeIndicator("f", []byte(src))
	})
}
