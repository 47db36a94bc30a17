// Package backtest turns bars and a strategy's decisions into a result a
// trader can trust: fills, trades, an equity curve, the metrics the spec
// defines, warnings, and a PNG chart of equity and drawdown.
//
// A strategy reaches the engine in one of two shapes, with one fill model
// for both. Vectorised strategies hand over a target exposure per bar
// (strategy.Signals.Targets; NaN means no change) and the engine runs its
// loop in Go with no call back into the strategy. Event-driven strategies
// implement Stepper, called once per bar after its close with the account
// as it stands. A decision taken at bar i's close fills at bar i+1's open
// (or, with the explicit and warned-about FillClose, at bar i's close),
// priced with slippage_bps against the trader and charged fee_bps on the
// filled notional. Targets are fractions of equity, negative for short;
// Qty intents trade a signed quantity.
//
// The accounting rules (fills, positions, cash, fees, round trips, the
// allowance's sizing and breakers) are strategy/book's, in its float64
// copy; deployments keep the same rules in decimals.
//
// Accounting is float64, and money is rounded only when reported (to cents
// in JSON, as decimal strings). A backtest over a million bars must run in
// tens of milliseconds, and decimal arithmetic costs two orders of magnitude
// more per bar; float64 carries 15-16 significant digits, so even a million
// fills leave the equity of a 10,000 account exact to far below a cent. What
// is rounded is the report, never the state the next bar computes from. Real
// money is decimal elsewhere: the node and the wire never see these floats.
//
// The engine is pure: identical inputs give identical results, and the JSON
// of a Result is byte-identical for identical inputs. It never executes
// strategy code itself (a Stepper does that, in a worker process), never
// reads files or the clock, and never writes to stdout.
package backtest
