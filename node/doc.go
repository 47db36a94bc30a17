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
// The write path is here too, in write.go, so that every surface writes the
// same way: NewPreview resolves a command (minting its client order id),
// runs the client-side guardrail over a fresh snapshot and asks the node
// for a dry run, sending nothing; Send submits exactly the previewed command
// and awaits its own ticket for TicketWait, telling a lost answer as
// pending (PendingAdvice), never resending it. The agent's write tools and
// wicket trade both call them through Conn. arm.go is the client side of an
// operator arming and disarming a real venue (Client.Arming, Arm, Disarm):
// only `wicket node arm` (at a terminal) and `wicket node disarm` call it,
// never an agent tool.
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
