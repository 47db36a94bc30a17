// Package deploy runs researched strategies on the trading node: a
// deployment is a strategy source (kept by content hash), knob values, one
// series, a venue, a capital and an allowance, and the Runner evaluates it
// at every closed bar with the backtest's decision function (in a strategy
// worker) and turns each change of target into an order.
//
// It sits above node and strategy, as agent does: it imports both, and
// neither imports it. Orders go through the node's one write path
// (node.NewPreview and node.Send over a node.Conn to its own node; in
// wicket node serve that is the node's in-process server.Local, acting as
// the control key), so the guardrail, journal, audit and pending rules
// are the node's. Its
// own state (deployments, bars, decisions, intents and fills) is an SQLite
// journal written before any order is sent, and client order ids are
// derived from (deployment id, bar time, intent number), so a restart
// that evaluates the same bar again mints the same id and the node
// refuses the duplicate.
//
// It never runs strategy code in its own process, never reaches a venue
// but through the node's write path, never sends an order twice, never
// trades a bar missed while it was down, and never resumes a paused
// deployment or arms one without the operator's signature.
package deploy
