package ledger

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestCompactJSONIsCompact: compactJSON answers as json.Compact does, the
// same bytes for a value and the same error for a text that is not one
// (internal/jsoncompact holds its reader to json.Compact on many more),
// and keeps a compact text as it is.
func TestCompactJSONIsCompact(t *testing.T) {
	for _, src := range []string{`{"a":1,"b":[true,null,"x"]}`, "{\n \"a\": [1, 2] }", ` 0 `, `{"a":1,}`, `01`, ``, `"<&>"`} {
		var want bytes.Buffer
		werr := json.Compact(&want, []byte(src))
		got, err := compactJSON([]byte(src))
		switch {
		case (werr == nil) != (err == nil) || (err != nil && err.Error() != werr.Error()):
			t.Fatalf("%q: error %v, json.Compact's %v", src, err, werr)
		case err == nil && !bytes.Equal(got, want.Bytes()):
			t.Fatalf("%q: %q, json.Compact wrote %q", src, got, want.Bytes())
		}
	}
	audit := []byte(`{"stats":{"sr":0.031,"skew":-0.4,"kurt":3.2,"t":17000},"blocks":[{"n":1096,"s":0.01,"q":1e-5}],"winner":true}`)
	if got, _ := compactJSON(audit); &got[0] != &audit[0] {
		t.Fatal("a compact audit was copied through json.Compact: every row would pay its scanner")
	}
}

// TestCanonicalIsMarshal: a row's canonical text, written directly, is
// byte for byte json.Marshal of the []string of its fields, for both
// chain formats, over strings json.Marshal escapes (quotes, backslashes,
// control characters, <, > and &, U+2028, invalid UTF-8, multi-byte
// characters) and the JSON a sweep's rows carry.
func TestCanonicalIsMarshal(t *testing.T) {
	odd := []string{"", "plain", `q"uote`, `back\slash`, "ctl\x00\x01\x1f\n\t\r\b\f", "<a href>&amp;", "line\u2028sep\u2029",
		"bad\xff\xfeutf8", "é—日本", "\x7f", `{"a":"<b>","c":"\"x\\"}`, strings.Repeat(`{"n":1096,"s":0.01}`, 40)}
	marshal := func(r *Row, format string) []byte {
		sr := ""
		if !math.IsNaN(r.SharpePerPeriod) {
			sr = strconv.FormatFloat(r.SharpePerPeriod, 'g', -1, 64)
		}
		fields := []string{format, strconv.FormatInt(r.Seq, 10), r.Time, r.Kind, r.RunID, r.Who.Surface, r.Who.Session, r.Who.Caller,
			r.Strategy, r.Digest, r.Series, r.From, r.To, string(r.Params), string(r.Costs), string(r.Metrics), sr}
		if format == formatKeyed {
			fields = append(fields, string(r.Audit))
		}
		b, err := json.Marshal(append(fields, r.PrevHash))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	rng := rand.New(rand.NewPCG(3, 5))
	pick := func() string { return odd[rng.IntN(len(odd))] }
	for i := range 2000 {
		r := Row{Seq: int64(i) * 7919, Time: pick(), Kind: pick(), RunID: pick(), Who: Who{Surface: pick(), Session: pick(), Caller: pick()},
			Strategy: pick(), Digest: pick(), Series: pick(), From: pick(), To: pick(), Params: json.RawMessage(pick()),
			Costs: json.RawMessage(pick()), Metrics: json.RawMessage(pick()), Audit: json.RawMessage(pick()), PrevHash: pick(),
			SharpePerPeriod: []float64{math.NaN(), 0, -0.03125, 1e-9, 123456789.5, math.Copysign(0, -1)}[i%6]}
		for _, format := range []string{formatPlain, formatKeyed} {
			if got, want := r.canonical(format), marshal(&r, format); !bytes.Equal(got, want) {
				t.Fatalf("row %d, %s:\n got %s\nwant %s", i, format, got, want)
			}
		}
	}
}
