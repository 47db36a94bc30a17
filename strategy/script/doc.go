// Package script is the Starlark strategy runtime: it compiles a strategy's
// source, runs its top level with the param, ta and math modules, discovers
// its knobs, validates it, and runs its entry points over bars, either
// vectorised (signals(bars)) or event-driven (setup(ctx) then on_bar(ctx)
// once per bar).
//
// Series are host values backed by []float64: s[0] is the current bar and
// s[k] the bar k bars earlier; a negative index is a lookahead error, and
// warm-up positions read as None. Arithmetic and comparisons on series run
// elementwise in Go and are memoised together with the ta.* indicators, so
// a strategy's per-bar code never copies a series.
//
// Every execution is bounded: a step cap for the top level, signals, setup
// and each on_bar, a wall-clock limit per run, and cancellation through a
// context. print goes to a capture the caller reads. The only load allowed
// is load("indicators/<name>", ...), read from the fs.FS the caller hands
// over (the project's indicators directory), never from a path.
//
// This package must never be used to run strategy code outside a worker
// process (see strategy/worker): step caps do not bound memory, only the
// worker's address-space limit does. It never writes to stdout, never
// touches a file other than a user indicator the caller's fs.FS yields,
// and never lets a Go panic in a strategy escape as anything but an error.
package script
