// Package script is the Starlark strategy runtime: it compiles a strategy's
// source, runs its top level with the param, ta and math modules, discovers
// its knobs, validates it, and runs its entry points over bars, either
// vectorised (signals(bars)) or event-driven (setup(ctx) then on_bar(ctx)
// once per bar).
//
// Series are host values backed by []float64. In setup and on_bar, s[0] is
// the current bar and s[k] the bar k bars earlier; a negative index is a
// lookahead error, and warm-up positions read as None. In signals(bars) a
// series is opaque (no element, length, truth, slice, iteration or list
// conversion), because there its "current" bar is the last one. Arithmetic
// and comparisons on series run elementwise in Go and are memoised together
// with the ta.* indicators, so a strategy's per-bar code never copies a
// series.
//
// Lookahead is also proven on every run: CheckLookahead reruns a strategy
// over prefixes of its bars and requires every decision and every series
// on the shared bars to be unchanged (lookahead.go).
//
// Every execution is bounded: a step cap for the top level, signals, setup
// and each on_bar, a wall-clock limit per run, and cancellation through a
// context. print goes to a capture the caller reads. The only load allowed
// is load("indicators/<name>", ...), read from the fs.FS the caller hands
// over (the project's indicators directory), never from a path.
//
// It must never let a strategy see a bar after the one it decides for, nor
// register a host builtin outside this package's tests.
//
// This package must never be used to run strategy code outside a worker
// process (see strategy/worker): step caps do not bound memory, only the
// worker's address-space limit does. It never writes to stdout, never
// touches a file other than a user indicator the caller's fs.FS yields,
// and never lets a Go panic in a strategy escape as anything but an error.
package script
