package worker

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"unicode/utf8"

	"wicket/internal/jsoncompact"
)

// A sweep chunk's answer crosses the worker pipe in a binary form when
// the caller decodes it into a SweepChunkResult (Request.Binary): a
// hundred trials' scores, statistics and blocks as IEEE 754 bits and
// their metrics as the bytes the worker's backtest wrote, instead of JSON
// that the worker wrote number by number and the caller scanned twice
// (encoding/json's check, then its decoding): about 1 ms each way for a
// 100-combination chunk. A research cluster's worker asks for the binary
// form undecoded (SweepAnswer) and passes it on to the sweep. Every other
// answer, and a sweep's asked for as a json.RawMessage, is JSON as before.
//
// The caller reads the same SweepChunkResult the JSON would have given
// it (TestSweepWireIsJSON): NaN and infinite scores read as NaN, empty
// lists and maps as nil, a string that is not UTF-8 and a value that is
// not a finite number, a string, a bool or null in a trial's values go
// as JSON, and a trial's metrics are what json.Marshal would have
// written of them and are checked to be JSON on the caller's side, as
// the JSON answer was.

// sweepWireMagic begins a binary answer: a byte no JSON text begins with,
// and the form's version.
const sweepWireMagic = "\x00wsr1"

// SweepAnswer is a sweep chunk's answer as its strategy worker gave it,
// in the binary form, not decoded: a research cluster's worker passes it
// on as it is, and the sweep reads it (DecodeSweepAnswer), so it is
// decoded once, where the result is used, as on the sweep's own machine.
type SweepAnswer []byte

// DecodeSweepAnswer reads a SweepAnswer, the binary form or JSON, into
// the SweepChunkResult the pool would have given: it checks what the
// pool checks (the metrics are JSON, the form is whole).
func DecodeSweepAnswer(raw SweepAnswer) (SweepChunkResult, error) {
	var res SweepChunkResult
	err := decodeAnswer(raw, &res)
	return res, err
}

// acceptsBinary reports whether resp, the value a caller decodes an
// answer into, reads the binary form.
func acceptsBinary(resp any) bool {
	switch resp.(type) {
	case *SweepChunkResult, *SweepAnswer:
		return true
	}
	return false
}

// encodeAnswer is a handler's answer as the response body: the binary
// form for a SweepChunkResult when the request accepts it, else JSON.
func encodeAnswer(answer any, binaryOK bool) ([]byte, error) {
	if r, ok := answer.(SweepChunkResult); ok && binaryOK {
		return appendSweepWire(make([]byte, 0, 256+len(r.Trials)*1024), &r)
	}
	return json.Marshal(answer)
}

// decodeAnswer reads a response body into resp.
func decodeAnswer(raw []byte, resp any) error {
	if a, ok := resp.(*SweepAnswer); ok {
		*a = SweepAnswer(raw)
		return nil
	}
	if !bytes.HasPrefix(raw, []byte(sweepWireMagic)) {
		return json.Unmarshal(raw, resp)
	}
	r, ok := resp.(*SweepChunkResult)
	if !ok {
		return fmt.Errorf("a binary sweep answer for a %T", resp)
	}
	return readSweepWire(raw[len(sweepWireMagic):], r)
}

// Value tags of a trial's values, and string tags.
const (
	tagFloat byte = iota
	tagString
	tagTrue
	tagFalse
	tagNull
	tagJSON // json.Marshal's text, read back by json.Unmarshal
)

func appendSweepWire(b []byte, r *SweepChunkResult) ([]byte, error) {
	b = append(b, sweepWireMagic...)
	b = appendWireString(b, r.Bars.Digest)
	b = binary.AppendVarint(b, int64(r.Bars.Count))
	b = binary.AppendVarint(b, r.Bars.First)
	b = binary.AppendVarint(b, r.Bars.Last)
	keys := make([]string, 0, len(r.Computed))
	for k := range r.Computed {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		b = appendWireString(b, k)
		b = binary.AppendUvarint(b, r.Computed[k])
	}
	b = appendF64(b, r.Seconds)
	b = appendF64(b, r.Work)
	if r.Trials == nil {
		b = binary.AppendUvarint(b, 0)
	} else {
		b = binary.AppendUvarint(b, uint64(len(r.Trials))+1)
	}
	for i := range r.Trials {
		var err error
		if b, err = appendWireTrial(b, &r.Trials[i]); err != nil {
			return nil, fmt.Errorf("trial %d: %w", i, err)
		}
	}
	return b, nil
}

func appendWireTrial(b []byte, t *Trial) ([]byte, error) {
	keys := make([]string, 0, len(t.Values))
	for k := range t.Values {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		b = appendWireString(b, k)
		switch v := t.Values[k].(type) {
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("value %s: %v is not a JSON number", k, v)
			}
			b = appendF64(append(b, tagFloat), v)
		case string:
			b = appendWireString(b, v)
		case bool:
			tag := tagFalse
			if v {
				tag = tagTrue
			}
			b = append(b, tag)
		case nil:
			b = append(b, tagNull)
		default:
			j, err := json.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("value %s: %w", k, err)
			}
			b = appendWireBytes(append(b, tagJSON), j)
		}
	}
	metrics := []byte(t.Metrics)
	if marshalEscapes(metrics) {
		// json.Marshal compacts a raw message and escapes these: its
		// text, then, as the JSON answer carried it
		var err error
		if metrics, err = json.Marshal(t.Metrics); err != nil {
			return nil, err
		}
	}
	b = appendWireBytes(b, metrics)
	s := &t.Scores
	for _, x := range [...]Num{s.Sharpe, s.CAGR, s.Calmar, s.ProfitFactor, s.TotalReturn, s.MaxDrawdown, s.Sortino, s.WinRate, s.Exposure,
		t.Stats.SR, t.Stats.Skew, t.Stats.Kurt} {
		b = appendF64(b, float64(x))
	}
	b = binary.AppendVarint(b, int64(t.Stats.T))
	b = binary.AppendVarint(b, int64(t.Trades))
	b = binary.AppendVarint(b, int64(t.Warmup))
	b = binary.AppendUvarint(b, uint64(len(t.Returns)))
	for _, x := range t.Returns {
		b = appendF64(b, x)
	}
	b = binary.AppendUvarint(b, uint64(len(t.Blocks)))
	for _, k := range t.Blocks {
		if k.N < 0 || k.N > math.MaxUint32 {
			return nil, fmt.Errorf("block of %d returns", k.N)
		}
		b = binary.AppendUvarint(b, uint64(k.N))
		b = appendF64(appendF64(b, k.Sum), k.SumSq)
	}
	return appendWireString(b, t.Error), nil
}

// marshalEscapes reports whether json.Marshal would write a raw message
// otherwise than as it is: it drops space between tokens, and writes <,
// >, &, U+2028 and U+2029 escaped.
func marshalEscapes(m []byte) bool {
	for i, c := range m {
		if !escapeBytes[c] {
			continue
		}
		if c != 0xE2 || (i+2 < len(m) && m[i+1] == 0x80 && m[i+2]&^1 == 0xA8) {
			return true
		}
	}
	return false
}

// escapeBytes are the bytes marshalEscapes looks at: space, <, >, & and
// the first byte of U+2028 and U+2029.
var escapeBytes = func() (t [256]bool) {
	for _, c := range []byte(" \t\r\n<>&\xE2") {
		t[c] = true
	}
	return t
}()

func appendF64(b []byte, x float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
}

func appendWireBytes(b, s []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// appendWireString writes s as it is when it is UTF-8, else as JSON
// (which replaces what is not, as the JSON answer did).
func appendWireString(b []byte, s string) []byte {
	if utf8.ValidString(s) {
		b = append(b, tagString)
		b = binary.AppendUvarint(b, uint64(len(s)))
		return append(b, s...)
	}
	j, _ := json.Marshal(s) // a string always encodes
	return appendWireBytes(append(b, tagJSON), j)
}

// wireReader reads the binary form; its first error sticks.
type wireReader struct {
	b   []byte
	err error
}

var errShortWire = errors.New("binary sweep answer cut short")

func (r *wireReader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
	r.b = nil
}

func (r *wireReader) byte() byte {
	if len(r.b) < 1 {
		r.fail(errShortWire)
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *wireReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail(errShortWire)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *wireReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail(errShortWire)
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a length no larger than the bytes left (each item takes
// at least one).
func (r *wireReader) count() int {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail(errShortWire)
		return 0
	}
	return int(n)
}

func (r *wireReader) f64() float64 {
	if len(r.b) < 8 {
		r.fail(errShortWire)
		return 0
	}
	x := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	return x
}

// num is a Num as JSON carries it: NaN and the infinities are null, read
// as NaN.
func (r *wireReader) num() Num {
	x := r.f64()
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return Num(math.NaN())
	}
	return Num(x)
}

func (r *wireReader) bytes() []byte {
	n := r.count()
	s := r.b[:n:n]
	r.b = r.b[n:]
	return s
}

func (r *wireReader) string() string {
	switch r.byte() {
	case tagString:
		return string(r.bytes())
	case tagJSON:
		var s string
		if err := json.Unmarshal(r.bytes(), &s); err != nil {
			r.fail(err)
		}
		return s
	}
	r.fail(errors.New("binary sweep answer: a string of an unknown form"))
	return ""
}

func readSweepWire(b []byte, res *SweepChunkResult) error {
	r := &wireReader{b: b}
	out := SweepChunkResult{}
	out.Bars.Digest = r.string()
	out.Bars.Count = int(r.varint())
	out.Bars.First = r.varint()
	out.Bars.Last = r.varint()
	if n := r.count(); n > 0 {
		out.Computed = make(map[string]uint64, n)
		for range n {
			k := r.string()
			out.Computed[k] = r.uvarint()
		}
	}
	out.Seconds = r.f64()
	out.Work = r.f64()
	if n := r.uvarint(); n > 0 && r.err == nil {
		if n-1 > uint64(len(r.b)) {
			return errShortWire
		}
		out.Trials = make([]Trial, n-1)
		for i := range out.Trials {
			if err := readWireTrial(r, &out.Trials[i]); err != nil {
				return fmt.Errorf("trial %d: %w", i, err)
			}
		}
	}
	switch {
	case r.err != nil:
		return r.err
	case len(r.b) > 0:
		return fmt.Errorf("binary sweep answer: %d bytes after its end", len(r.b))
	}
	*res = out
	return nil
}

func readWireTrial(r *wireReader, t *Trial) error {
	if n := r.count(); n > 0 {
		t.Values = make(map[string]any, n)
		for range n {
			k := r.string()
			switch tag := r.byte(); tag {
			case tagFloat:
				t.Values[k] = r.f64()
			case tagString:
				t.Values[k] = string(r.bytes())
			case tagTrue, tagFalse:
				t.Values[k] = tag == tagTrue
			case tagNull:
				t.Values[k] = nil
			case tagJSON:
				var v any
				if err := json.Unmarshal(r.bytes(), &v); err != nil {
					return fmt.Errorf("value %s: %w", k, err)
				}
				t.Values[k] = v
			default:
				return fmt.Errorf("value %s of an unknown form %d", k, tag)
			}
		}
	}
	if m := r.bytes(); len(m) > 0 {
		if !jsoncompact.Is(m) && !json.Valid(m) { // as the JSON answer's decoding checked them
			return errors.New("metrics that are not JSON")
		}
		t.Metrics = json.RawMessage(m)
	}
	s := &t.Scores
	for _, x := range [...]*Num{&s.Sharpe, &s.CAGR, &s.Calmar, &s.ProfitFactor, &s.TotalReturn, &s.MaxDrawdown, &s.Sortino, &s.WinRate, &s.Exposure,
		&t.Stats.SR, &t.Stats.Skew, &t.Stats.Kurt} {
		*x = r.num()
	}
	t.Stats.T = int(r.varint())
	t.Trades = int(r.varint())
	t.Warmup = int(r.varint())
	if n := r.count(); n > 0 {
		t.Returns = make(Returns, n)
		for i := range t.Returns {
			t.Returns[i] = r.f64()
		}
	}
	if n := r.count(); n > 0 {
		t.Blocks = make(Blocks, n)
		for i := range t.Blocks {
			t.Blocks[i] = BlockStat{N: int(r.uvarint()), Sum: r.f64(), SumSq: r.f64()}
		}
	}
	t.Error = r.string()
	return r.err
}
