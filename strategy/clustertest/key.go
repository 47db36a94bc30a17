package clustertest

import (
	"crypto/rand"
	"encoding/hex"
)

// NewKey makes up a cluster key for this test run, in the form `wicket
// init` writes one (64 hex digits).
func NewKey() []byte {
	var b [32]byte
	rand.Read(b[:]) // never fails
	return []byte(hex.EncodeToString(b[:]))
}
