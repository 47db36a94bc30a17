package strategy

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
)

// Digest is a content digest of the bars (count, times and every price
// column), the same in every process: the sweep's caller and its workers
// agree on bars by it without sending them. It is the SHA-256 of their
// encoding (Encode), in hex.
func (b Bars) Digest() string {
	d, _ := digestOf(b.WriteEncoded) // a hash does not fail
	return d
}

// DigestEncoded is the Digest of the bars encoded in r (as Encode writes
// them), read to its end without holding them.
func DigestEncoded(r io.Reader) (string, error) {
	return digestOf(func(h io.Writer) error {
		_, err := io.CopyBuffer(h, r, make([]byte, encodeBuf))
		return err
	})
}

// digestOf is the Digest of the encoding write writes.
func digestOf(write func(io.Writer) error) (string, error) {
	h := sha256.New()
	if err := write(h); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
