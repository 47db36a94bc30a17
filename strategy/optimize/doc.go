// Package optimize proposes the next knob settings for a guided search of a
// strategy's parameters: random search, TPE (a tree-structured Parzen
// estimator) and CMA-ES, each behind one ask/tell interface over a Space
// of knobs, plus a Pareto front of Sharpe against drawdown for ranking
// the trials.
//
// An optimiser's proposals are a pure function of its seed and the trials
// told to it, in order; replaying recorded trials into a fresh optimiser
// restores it, which is how an optimisation resumes from the ledger.
//
// It is pure computation: it must never run a backtest, read or write a
// file, or touch the network. The caller evaluates the points and records
// every trial.
package optimize
