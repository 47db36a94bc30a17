package worker

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
)

// Returns are a trial's per-bar returns. On the wire they are one base64
// string of little-endian IEEE 754 doubles: exact, and far cheaper to
// write and read than a JSON number a bar, which made a sweep that keeps
// every combination's returns (a cross-validation's) spend most of its
// time in the caller's decoder. The array form reads too.
type Returns []float64

// MarshalJSON writes r as one base64 string.
func (r Returns) MarshalJSON() ([]byte, error) {
	raw := make([]byte, 0, 8*len(r))
	for _, x := range r {
		raw = binary.LittleEndian.AppendUint64(raw, math.Float64bits(x))
	}
	out := make([]byte, 0, base64.StdEncoding.EncodedLen(len(raw))+2)
	out = append(out, '"')
	out = base64.StdEncoding.AppendEncode(out, raw)
	return append(out, '"'), nil
}

// UnmarshalJSON reads the base64 string MarshalJSON writes, or an array
// of numbers.
func (r *Returns) UnmarshalJSON(data []byte) error {
	switch {
	case string(data) == "null":
		*r = nil
		return nil
	case len(data) > 0 && data[0] == '[':
		return json.Unmarshal(data, (*[]float64)(r))
	case len(data) < 2 || data[0] != '"' || data[len(data)-1] != '"':
		return fmt.Errorf("returns: want a base64 string or an array, got %.20q", data)
	}
	raw, err := base64.StdEncoding.AppendDecode(nil, data[1:len(data)-1])
	if err != nil {
		return fmt.Errorf("returns: %w", err)
	}
	if len(raw)%8 != 0 {
		return fmt.Errorf("returns: %d bytes is not a whole number of 8-byte doubles", len(raw))
	}
	out := make(Returns, len(raw)/8)
	for i := range out {
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
	}
	*r = out
	return nil
}
