package node

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"
	"time"
)

// TestSignIsTheSpecFormula recomputes the signature from the protocol's
// definition, field by field.
func TestSignIsTheSpecFormula(t *testing.T) {
	body := []byte(`{"command":{"verb":"market_exit"}}`)
	sum := sha256.Sum256(body)
	m := hmac.New(sha256.New, []byte("k-0123456789abcdef"))
	fmt.Fprintf(m, "POST\n/v1/commands\n1700000000\nnonce-0123456789\n%s", hex.EncodeToString(sum[:]))
	want := hex.EncodeToString(m.Sum(nil))
	if got := Sign("k-0123456789abcdef", "POST", "/v1/commands", "1700000000", "nonce-0123456789", body); got != want {
		t.Errorf("Sign = %s, want %s", got, want)
	}
	// Every input matters.
	base := Sign("k", "GET", "/v1/snapshot?venue=a", "1", "n", nil)
	for _, other := range []string{
		Sign("k2", "GET", "/v1/snapshot?venue=a", "1", "n", nil),
		Sign("k", "POST", "/v1/snapshot?venue=a", "1", "n", nil),
		Sign("k", "GET", "/v1/snapshot?venue=b", "1", "n", nil),
		Sign("k", "GET", "/v1/snapshot?venue=a", "2", "n", nil),
		Sign("k", "GET", "/v1/snapshot?venue=a", "1", "m", nil),
		Sign("k", "GET", "/v1/snapshot?venue=a", "1", "n", []byte("x")),
	} {
		if other == base {
			t.Error("a changed input gave the same signature")
		}
	}
	if a, b := NewNonce(), NewNonce(); len(a) != 32 || a == b {
		t.Error("NewNonce is not 16 fresh random bytes")
	}
}

func ExampleSign() {
	ts := Timestamp(time.Unix(1700000000, 0))
	fmt.Println(ts)
	fmt.Println(Sign("not-a-real-key", "GET", "/v1/health", ts, "0123456789abcdef", nil))
	// Output:
	// 1700000000
	// 7bfa7b0f1d4b54172f351dc4340d8f5f416c1a05a09ab3c5f4b0ccfbc974216d
}
