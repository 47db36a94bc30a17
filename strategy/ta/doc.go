// Package ta is the indicator catalog: the technical-analysis functions a
// strategy calls as ta.<name>, described as data and computed over float64
// columns.
//
// Each Entry says what a function is for, which inputs and parameters it
// takes (with defaults and bounds), what it outputs and how many bars it
// needs before its first value (its warm-up). The same entries drive the
// Starlark `ta` module and the list_indicators tool, so the listing cannot
// drift from what runs. The catalog holds all 161 TA-Lib functions — the
// 61 candlestick patterns (candles.go) and the math transforms and
// operators (mathfns.go) among them — plus the helpers. Values reproduce
// TA-Lib C at every parameter its bounds allow, and the bounds are
// TA-Lib's: most functions are backed by github.com/markcheno/go-talib,
// and where that port leaves TA-Lib (talibfix.go, hilbert.go: MACD and
// MACDEXT seeding, APO/PPO, the stochastics' %D, BBANDS, the linear
// regression slope, one-bar directional movement, the Hilbert phase,
// zeros in the warm-up, panics on short inputs) the function is computed
// here. testdata/talib holds the TA-Lib C reference it is tested against.
//
// Missing values are NaN: a warm-up position, a position before the inputs
// have values, or an input too short for the function. Compute strips the
// leading missing values of its inputs before it runs a function, so
// indicators chain (an SMA of an RSI starts where the RSI does).
//
// A Memo caches results per (function, inputs, parameters), keyed by the
// provenance of the inputs rather than their identity, so a worker that
// evaluates many parameter combinations over the same bars computes each
// distinct indicator once; its Stats count the computations.
//
// This package never executes strategy code, never reads files and never
// returns a zero where TA-Lib has no value.
package ta
