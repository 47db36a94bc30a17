// Package command is the node's write vocabulary, defined once: the seven
// verbs (submit_order, cancel_order, modify, flatten, market_exit,
// mass_cancel, set_trading_state), their fields as data, strict decoding from
// JSON arguments or text fields, the client-order-id mint, reason
// sanitising, the deterministic wire form and the intent comparison the
// preview gate uses.
//
// Every surface that writes to a node — the agent's write tools, the human
// trade REPL, the node itself when it reads a request — builds its commands
// here, so a verb or a rule exists in exactly one place.
//
// The package is pure: it never performs I/O, never reads a clock or a
// random source except through the id source its caller injects, and never
// rounds a decimal. It knows nothing of venues or prices; precision against
// a venue's instrument and the order limits are the guardrail's job.
package command
