// Package worker runs strategy code in subprocesses of the same binary,
// each limited in memory and CPU, behind a typed request/response protocol
// on pipes, and keeps a pool of them that callers share.
//
// Step caps bound how long Starlark runs, not how much memory it asks for:
// `[[0] * 100000000 for i in range(40)]` is a few dozen steps and 64 GB. So
// strategy code runs only in workers: `wicket __worker` (or a test binary
// through ServeIfWorker) sets RLIMIT_AS and RLIMIT_CPU on itself before it
// reads a request. A worker that exceeds a limit dies; the pool reports a
// clean *Error naming the limit ("the strategy used more than 2 GiB of
// memory") and starts a fresh worker for the next request. Cancelling a
// request's context kills the worker that runs it.
//
// Requests have a kind and a JSON body; a worker dispatches them through a
// Handlers table, so a new kind is one entry in the table the worker
// process is started with and one Call on the caller side. This package
// declares the request and result types of every kind (validate, params,
// summaries, backtest, sweep chunk, decide); strategy/worker/handlers serves them.
// Workers start with a scrubbed environment (WorkerEnv): no key or token
// of the parent reaches strategy code.
//
// This package never executes Starlark and does not link it; the worker
// side never writes anything but protocol frames to its stdout (fd 1 is
// pointed at stderr before a request is served) and never runs a request
// before its limits are in place.
package worker
