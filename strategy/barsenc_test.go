package strategy

import (
	"crypto/sha256"
	"encoding/hex"
	"reflect"
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
