package strategy

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"unsafe"
)

// Encode is the bars in the byte form Digest hashes: the count, the
// times, then the open, high, low, close and volume columns, each value
// 8 bytes little-endian. So hex(sha256(Encode())) == Digest(), and the
// bytes round-trip exactly through DecodeBars. The series name is not
// part of it.
func (b Bars) Encode() []byte {
	var out bytes.Buffer
	out.Grow(EncodedLen(b.Len()))
	b.WriteEncoded(&out) //nolint:errcheck // a bytes.Buffer does not fail
	return out.Bytes()
}

// EncodedLen is the length of Encode's bytes for n bars: the count, then
// six columns of 8 bytes a bar.
func EncodedLen(n int) int { return 8 + 48*n }

// WriteEncoded writes Encode's bytes to w without holding them, through
// a buffer of encodeBuf bytes; where this machine stores numbers
// little-endian a column's memory is its encoding and is copied in whole
// pieces. Writes come from the one buffer, not from the columns: a new
// file takes them several times faster so.
func (b Bars) WriteEncoded(w io.Writer) error {
	e := encoder{w: w, buf: make([]byte, 0, encodeBuf)}
	e.word(uint64(b.Len()))
	words(&e, b.Time, func(t int64) uint64 { return uint64(t) })
	for _, col := range [][]float64{b.Open, b.High, b.Low, b.Close, b.Volume} {
		words(&e, col, math.Float64bits)
	}
	e.flush()
	return e.err
}

// encodeBuf is WriteEncoded's buffer.
const encodeBuf = 256 << 10

type encoder struct {
	w   io.Writer
	buf []byte
	err error
}

func (e *encoder) flush() {
	if e.err == nil && len(e.buf) > 0 {
		_, e.err = e.w.Write(e.buf)
	}
	e.buf = e.buf[:0]
}

func (e *encoder) word(u uint64) {
	if len(e.buf)+8 > cap(e.buf) {
		e.flush()
	}
	e.buf = binary.LittleEndian.AppendUint64(e.buf, u)
}

// words encodes col: its memory in whole pieces on a little-endian
// machine, else word by word through bits.
func words[T int64 | float64](e *encoder, col []T, bits func(T) uint64) {
	if !littleEndian {
		for _, x := range col {
			e.word(bits(x))
		}
		return
	}
	if len(col) == 0 {
		return
	}
	mem := unsafe.Slice((*byte)(unsafe.Pointer(&col[0])), 8*len(col))
	for len(mem) > 0 {
		if len(e.buf) == cap(e.buf) {
			e.flush()
		}
		n := copy(e.buf[len(e.buf):cap(e.buf)], mem)
		e.buf, mem = e.buf[:len(e.buf)+n], mem[n:]
	}
}

// littleEndian says this machine stores numbers in the encoding's order.
// Tests turn it off to check the word-by-word path.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// NativeEncoding says this machine stores numbers as Encode writes them,
// so the columns of encoded bars can be read in place.
func NativeEncoding() bool { return littleEndian }

// DecodeBars reads bars written by Encode. When digest is not empty the
// bytes must hash to it.
func DecodeBars(data []byte, series, digest string) (Bars, error) {
	if digest != "" {
		got, _ := digestOf(func(h io.Writer) error { _, err := h.Write(data); return err })
		if got != digest {
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
