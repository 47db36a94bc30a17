// Package research is wicket's research API: list the stored series and
// the project's strategies, backtest, sweep a grid of knob values and run
// a walk-forward analysis. The MCP server, the CLI and the data service
// (`wicket data serve`) call it.
//
// Two implementations have the same method set, so a caller cannot tell
// them apart except by latency: Local orchestrates in this process over
// the project's history store and a pool of strategy worker processes,
// and Client sends the same requests over HTTP to a data service, which
// answers them with a Local (see NewServer). Requests and results are
// plain JSON: money as decimal strings, lists bounded (a result says when
// it clamped one), the same inputs giving byte-identical output.
//
// A sweep expands the grid against the strategy's declared knobs before
// any work (errors name the knob and its range), refuses more combinations
// than the cap naming the count, and evaluates chunks of combinations in
// the worker pool: each chunk is one request (worker.KindSweep) to a
// worker that finds the bars in its cache by digest, compiles the strategy
// once and evaluates every combination in one streaming pass against its
// own indicator cache, so a knob that does not change an indicator's
// inputs does not recompute it; only each combination's metrics and
// scores come back. A request's series may name a series set (a list or
// patterns such as *@1d): results per series and pooled (seriesset.go). The winner's deflated Sharpe ratio follows
// Bailey and López de Prado, "The Deflated Sharpe Ratio: Correcting for
// Selection Bias, Backtest Overfitting and Non-Normality", Journal of
// Portfolio Management 40(5), 2014 (see DeflatedSharpeRatio).
//
// An optimisation (Optimize) searches a grid on a budget: strategy/optimize
// proposes a batch, the batch runs as one sweep's chunks on the same
// workers or cluster, and each batch is recorded in the ledger, with what
// resuming it needs, before the next is proposed.
//
// A walk-forward analysis lays rolling or anchored windows over the range,
// picks the best combination on each in-sample window (whose bars end
// before its out-of-sample window begins) and trades it, flat at the
// start, on the out-of-sample window that follows; the out-of-sample
// windows never overlap and are stitched into one equity curve.
//
// Strategy code never runs in the process that calls Local or Client, and
// this package does not even link the Starlark interpreter: Local hands
// every strategy execution (and the parsing of strategy summaries) to
// worker processes through strategy/worker. This package never writes to stdout and never turns a strategy or series name
// into a path without validating it first.
package research
