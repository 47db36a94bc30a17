// Package node is the client of a wicket trading node and the protocol both
// sides speak: the wire types (snapshot, orders, positions, events, ticket
// outcomes, dry-run verdicts, audit entries), the HMAC request signing and
// the protocol's error type.
//
// A Client signs every request, reads with the observe key, writes with the
// control key, and reports failures as *Error with a kind (auth, forbidden,
// bad request, not found, rejected, timeout, unreachable, unavailable) read
// with errors.As. Money, prices and quantities are decimal strings on the
// wire.
//
// The subpackages hold the rest: command (the write vocabulary), guardrail
// (client-side limit checks), paper (simulated venues), alpaca and binance
// (real venues' adapters, with fakes for tests), venuecall (their shared
// rate-limit and retry discipline), journal (the durable SQLite log),
// server (the daemon) and nodetest (a real node for other packages'
// tests). exchange.go holds the vocabulary adapters hand the node.
//
// This package never logs, never prints or returns a key (a Client's String
// shows only its address), never sends a write signed with anything but the
// control key, and never carries money as float64.
package node
