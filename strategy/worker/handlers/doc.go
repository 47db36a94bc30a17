// Package handlers is the inside of a strategy worker: the request handlers
// (validate, params, backtest, sweep chunk) that load a strategy, ask it
// for its decisions in its own style and run the backtest engine over
// them, with the worker's indicator cache and bar cache shared across
// requests.
//
// It executes strategy code, so it must only ever be registered in a
// worker process (`wicket __worker`, or a test binary's
// worker.ServeIfWorker); the callers of workers import strategy/worker,
// which never links the Starlark interpreter.
package handlers
