package strategy

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
)

// Digest is a content digest of the bars (count, times and every price
// column), the same in every process: the sweep's caller and its workers
// agree on bars by it without sending them.
func (b Bars) Digest() string {
	h := sha256.New()
	buf := make([]byte, 0, 64<<10)
	flush := func() {
		h.Write(buf)
		buf = buf[:0]
	}
	put := func(u uint64) {
		if len(buf)+8 > cap(buf) {
			flush()
		}
		buf = binary.LittleEndian.AppendUint64(buf, u)
	}
	put(uint64(b.Len()))
	for _, t := range b.Time {
		put(uint64(t))
	}
	for _, col := range [][]float64{b.Open, b.High, b.Low, b.Close, b.Volume} {
		for _, x := range col {
			put(math.Float64bits(x))
		}
	}
	flush()
	return hex.EncodeToString(h.Sum(nil))
}
