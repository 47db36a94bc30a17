package testkit

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// D is the decimal s spells ("0.5", "-12", "1e3"), for the literals a
// test writes: in a table, a package-level fixture or a helper that has
// no testing.TB. Text that is not a decimal is a bug in the test: D
// panics naming it, which fails the test (or the package's tests, for a
// package-level fixture) that hit it.
func D(s string) decimal.Decimal {
	v, err := decimal.NewFromString(s)
	if err != nil {
		panic(fmt.Sprintf("testkit.D(%q): %v", s, err))
	}
	return v
}

// Time is the instant s spells in RFC 3339 (fractions of a second
// allowed), for the literals a test writes; like D, any other text
// panics naming it, failing the test that hit it.
func Time(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(fmt.Sprintf("testkit.Time(%q): %v", s, err))
	}
	return t
}

// Key is an ed25519 private key made for this test run from crypto/rand;
// its public half is Key(tb).Public(). No two calls return the same key.
func Key(tb testing.TB) ed25519.PrivateKey {
	tb.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		tb.Fatalf("testkit.Key: %v", err)
	}
	return key
}

// Secret is n random bytes from crypto/rand in lower-case hex (2n
// characters): an API key, a bearer token or a shared key made up for
// this test run.
func Secret(tb testing.TB, n int) string {
	tb.Helper()
	return hex.EncodeToString(Bytes(tb, n))
}

// Bytes is n random bytes from crypto/rand, made for this test run.
func Bytes(tb testing.TB, n int) []byte {
	tb.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		tb.Fatalf("testkit: random bytes: %v", err)
	}
	return b
}
