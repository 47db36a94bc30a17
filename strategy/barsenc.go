package strategy

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
)

// Encode is the bars in the byte form Digest hashes: the count, the
// times, then the open, high, low, close and volume columns, each value
// 8 bytes little-endian. So hex(sha256(Encode())) == Digest(), and the
// bytes round-trip exactly through DecodeBars. The series name is not
// part of it.
func (b Bars) Encode() []byte {
	n := b.Len()
	out := make([]byte, 0, 8+48*n)
	out = binary.LittleEndian.AppendUint64(out, uint64(n))
	for _, t := range b.Time {
		out = binary.LittleEndian.AppendUint64(out, uint64(t))
	}
	for _, col := range [][]float64{b.Open, b.High, b.Low, b.Close, b.Volume} {
		for _, x := range col {
			out = binary.LittleEndian.AppendUint64(out, math.Float64bits(x))
		}
	}
	return out
}

// DecodeBars reads bars written by Encode. When digest is not empty the
// bytes must hash to it.
func DecodeBars(data []byte, series, digest string) (Bars, error) {
	if digest != "" {
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != digest {
			return Bars{}, fmt.Errorf("bars digest %s does not match the expected %s", got, digest)
		}
	}
	if len(data) < 8 {
		return Bars{}, fmt.Errorf("encoded bars of %d bytes are too short", len(data))
	}
	n := binary.LittleEndian.Uint64(data)
	if n > uint64(len(data)-8)/48 || uint64(len(data)-8) != 48*n {
		return Bars{}, fmt.Errorf("encoded bars of %d bytes do not hold %d bars", len(data), n)
	}
	b := Bars{Series: series, Time: make([]int64, n)}
	p := data[8:]
	for i := range b.Time {
		b.Time[i] = int64(binary.LittleEndian.Uint64(p))
		p = p[8:]
	}
	cols := make([][]float64, 5)
	for c := range cols {
		col := make([]float64, n)
		for i := range col {
			col[i] = math.Float64frombits(binary.LittleEndian.Uint64(p))
			p = p[8:]
		}
		cols[c] = col
	}
	b.Open, b.High, b.Low, b.Close, b.Volume = cols[0], cols[1], cols[2], cols[3], cols[4]
	return b, nil
}
