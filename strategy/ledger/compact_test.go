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

// compactCorpus is JSON and near-JSON that the ledger's compaction must
// treat as json.Compact does: valid compact values, values with space,
// and every way encoding/json's scanner refuses a text.
var compactCorpus = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1`, `-1.5e+10`, `1E-7`, `0.25`, `true`, `false`, `null`,
	`{"a":1,"b":[1,2,{"c":null}],"d":"x\"y\\z\/\b\f\n\r\t\u00e9\uD834"}`,
	`{"stats":{"sr":0.031,"skew":-0.4,"kurt":3.2,"t":17000},"blocks":[{"n":1096,"s":0.01,"q":1e-5}],"winner":true}`,
	`"<tag> & é — ` + "\u2028" + `"`, "\"\xff\xfe bytes\"",
	// space, to compact
	` {}`, `{} `, "{\n\t\"a\": 1\n}", `[1, 2]`, `{"a" :1}`, "\r\n0",
	// not JSON
	``, ` `, `{`, `}`, `[`, `]`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[,1]`, `{,}`, `{1:2}`, `{'a':1}`,
	`01`, `-`, `-a`, `1.`, `.5`, `1e`, `1e+`, `+1`, `0x10`, `1.5.2`, `NaN`, `Infinity`, `-Infinity`,
	`tru`, `truee`, `nul`, `nulll`, `fals`, `True`, `{}{}`, `[] []`, `1 2`, `"a" "b"`,
	`"abc`, `"\x"`, `"\u12"`, `"\u12g4"`, "\"a\x01b\"", "\"tab\tin\"", `"\`, `{"a":1`, `[1`,
	strings.Repeat("[", 70) + strings.Repeat("]", 70), // deeper than isCompactJSON follows
	strings.Repeat("[", 70) + strings.Repeat("]", 69),
}

// TestCompactJSONIsCompact: compactJSON answers as json.Compact does, the
// same bytes for a value and an error for a text that is not one, over
// the corpus, each of its texts cut at every byte, and random texts made
// of JSON's own characters.
func TestCompactJSONIsCompact(t *testing.T) {
	check := func(src string) {
		t.Helper()
		var want bytes.Buffer
		werr := json.Compact(&want, []byte(src))
		got, err := compactJSON([]byte(src))
		switch {
		case (werr == nil) != (err == nil):
			t.Fatalf("%q: error %v, json.Compact's %v", src, err, werr)
		case err == nil && !bytes.Equal(got, want.Bytes()):
			t.Fatalf("%q: %q, json.Compact wrote %q", src, got, want.Bytes())
		case err != nil && err.Error() != werr.Error():
			t.Fatalf("%q: error %q, json.Compact's %q", src, err, werr)
		}
	}
	for _, src := range compactCorpus {
		for cut := 0; cut <= len(src); cut++ {
			check(src[:cut])
			check(src[cut:])
		}
	}
	const alphabet = `{}[]":,0123456789-+.eEtrufalsn \\/bu"a`
	rng := rand.New(rand.NewPCG(7, 11))
	for range 200_000 {
		b := make([]byte, 1+rng.IntN(12))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		check(string(b))
	}
	if !isCompactJSON([]byte(compactCorpus[13])) {
		t.Fatal("a compact audit was not recognised as compact: every row would pay json.Compact")
	}
}

// FuzzCompactJSON holds compactJSON to json.Compact on any text.
func FuzzCompactJSON(f *testing.F) {
	for _, s := range compactCorpus {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		var want bytes.Buffer
		werr := json.Compact(&want, []byte(src))
		got, err := compactJSON([]byte(src))
		if (werr == nil) != (err == nil) || (err == nil && !bytes.Equal(got, want.Bytes())) {
			t.Fatalf("%q: %q (%v), json.Compact: %q (%v)", src, got, err, want.Bytes(), werr)
		}
	})
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
