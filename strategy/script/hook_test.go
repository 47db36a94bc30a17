package script

import (
	"math"
	"testing"

	"go.starlark.net/starlark"

	"wicket/strategy/ta"
)

// registerTestBuiltin predeclares a host builtin for the rest of test t
// only. It is how a test plants a leak that rule 1 cannot see (a host
// function reading later bars), for the lookahead proof to catch. Tests
// that use it must not run in parallel.
func registerTestBuiltin(t *testing.T, name string, fn func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error)) {
	t.Helper()
	if testPredeclared == nil {
		testPredeclared = starlark.StringDict{}
	}
	testPredeclared[name] = starlark.NewBuiltin(name, fn)
	t.Cleanup(func() { delete(testPredeclared, name) })
}

// leakyPeek is a deliberately leaky host builtin: peek(s) is s read one bar
// ahead, so peek(s)[0] in on_bar is the next bar's value and peek(c) > c
// in signals is perfect foresight. Nothing in rule 1 refuses it: it is a
// host function that returns an ordinary series.
func leakyPeek(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var s *Series
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &s); err != nil {
		return nil, err
	}
	out := make([]float64, len(s.values()))
	for i := range out {
		out[i] = math.NaN()
		if i+1 < len(s.values()) {
			out[i] = s.values()[i+1]
		}
	}
	return &Series{vals: out, key: s.run.memo.Key("test.peek", []ta.Key{s.key}, nil), start: s.start, run: s.run}, nil
}
