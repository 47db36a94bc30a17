package strategy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestEncodeRoundTripsAndHashesToDigest(t *testing.T) {
	b := Bars{Series: "X@1d", Time: []int64{1, 2, 3}, Open: []float64{1, 2, 3}, High: []float64{2, 3, 4}, Low: []float64{0.5, 1, 2}, Close: []float64{1.5, 2.5, 3.5}, Volume: []float64{10, 20, 30}}
	data := b.Encode()
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != b.Digest() {
		t.Fatalf("sha256(Encode) = %s, Digest = %s", got, b.Digest())
	}
	back, err := DecodeBars(data, "X@1d", b.Digest())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, b) {
		t.Fatalf("round trip: %+v != %+v", back, b)
	}
	if _, err := DecodeBars(data, "X@1d", "00"); err == nil {
		t.Fatal("a wrong digest was accepted")
	}
	if _, err := DecodeBars(data[:len(data)-1], "X@1d", ""); err == nil {
		t.Fatal("truncated bars were accepted")
	}
}

// TestWriteEncodedPiecesAndWords: bars longer than the buffer encode to
// the same bytes copied as column memory and word by word, and a
// writer's failure is returned.
func TestWriteEncodedPiecesAndWords(t *testing.T) {
	n := encodeBuf/8 + 1001 // every column crosses a buffer boundary
	b := Bars{Series: "X@1m", Time: make([]int64, n), Open: make([]float64, n), High: make([]float64, n), Low: make([]float64, n), Close: make([]float64, n), Volume: make([]float64, n)}
	for i := range n {
		b.Time[i] = int64(i)*60 - 7
		b.Open[i], b.High[i], b.Low[i], b.Close[i], b.Volume[i] = float64(i)+0.25, float64(i)+1.5, float64(i)-0.5, -float64(i), float64(i%97)
	}
	var pieces bytes.Buffer
	if err := b.WriteEncoded(&pieces); err != nil {
		t.Fatal(err)
	}
	native := littleEndian
	littleEndian = false
	var words bytes.Buffer
	err := b.WriteEncoded(&words)
	littleEndian = native
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(pieces.Bytes(), words.Bytes()) {
		t.Fatal("column memory and word-by-word encodings differ")
	}
	back, err := DecodeBars(words.Bytes(), "X@1m", b.Digest())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, b) {
		t.Fatal("bars longer than the buffer did not round-trip")
	}
	if err := b.WriteEncoded(&failAfter{n: 2}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("a failing writer gave %v", err)
	}
}

// failAfter takes n writes, then fails every one.
type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n--; f.n < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}
