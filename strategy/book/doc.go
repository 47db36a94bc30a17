// Package book is the one account book of research and deployments: how a
// fill moves cash, position and fees and opens or closes a round trip, how
// a target becomes a quantity, how an allowance's sizing limits clip an
// order, when its breakers trip, and where a venue liquidates an
// isolated position (LiquidationPrice, over a notional bracket table). The single-series backtest, the
// portfolio engine and the deployment loop all keep their accounts by it,
// so a rule changed here changes everywhere at once.
//
// The rules are written once, generically over Number (Account, Position,
// Trip, Limits, Day): a deployment keeps decimals (shopspring/decimal
// satisfies Number), research may instantiate them with Float. Because a
// generic call costs an indirect call per operation and the research loop
// walks millions of bars, the float64 path also has a hand-specialised
// copy (FloatAccount, FloatPosition, FloatTrip, FloatLimits, FloatDay) that
// performs the same operations in the same order. The tests bind the two:
// a table of cases every implementation passes bit for bit, and property
// tests running random bar paths and intents through the float copy, the
// generic code at Float, and the generic code at decimal (on prices where
// both number types are exact), demanding identical cash, position and
// fees. A change to one copy that is not made to the other fails them.
//
// The book never reads a clock, a file or a venue; it holds no money on
// the wire (a deployment's amounts stay decimal) and never decides what
// to trade: it books what a caller filled and sizes what a caller asks.
package book
