// Package testkit holds the helpers the module's tests share: a hand-set
// clock, a decimal from its text, and keys and secrets made at test run
// time. It is for tests only: it fails tests through testing.TB, and it
// must never be imported by the binary's own code (only _test.go files and
// the other test helpers, such as node/nodetest, may import it;
// cmd/wicket's layering test checks that). It never holds a
// fixed key or secret: every one is drawn from crypto/rand when asked for.
package testkit
