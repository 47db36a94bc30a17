// Package history is the bar history store: one SQLite file per project
// (settings/state/history.db, WAL mode) holding named bar series
// (SYMBOL@GRANULARITY, e.g. BTC-USD@1h) keyed by bar open time in UTC.
//
// It loads a time range as columnar strategy.Bars, writes a whole series in
// one transaction or appends a provider's page after its last bar, lists the
// series with their source and first and last bar, reads CSV files for
// import in wicket's, Yahoo's, Binance's, TradingView's and Alpaca's layouts
// (checking the granularity grid, naming the offending rows, accepting all
// or nothing), writes wicket CSV for export, and generates the deterministic
// demo series behind `wicket data seed-demo`.
//
// Every series name passes project.ValidName and strategy.ParseSeries before
// it reaches SQL. The store never executes strategy code, never fetches data
// from the network, and never leaves a series half written: an import or a
// seed either lands whole or changes nothing.
package history
