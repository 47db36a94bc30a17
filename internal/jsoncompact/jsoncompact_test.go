package jsoncompact

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// corpus is JSON and near-JSON that Is must judge as json.Compact does:
// valid compact values, values with space, and every way encoding/json's
// scanner refuses a text.
var corpus = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1`, `-1.5e+10`, `1E-7`, `0.25`, `true`, `false`, `null`,
	`{"a":1,"b":[1,2,{"c":null}],"d":"x\"y\\z\/\b\f\n\r\t\u00e9\uD834"}`,
	`{"stats":{"sr":0.031,"skew":-0.4,"kurt":3.2,"t":17000},"blocks":[{"n":1096,"s":0.01,"q":1e-5}],"winner":true}`,
	`"<tag> & é — ` + "\u2028" + `"`, "\"\xff\xfe bytes\"",
	// space
	` {}`, `{} `, "{\n\t\"a\": 1\n}", `[1, 2]`, `{"a" :1}`, "\r\n0",
	// not JSON
	``, ` `, `{`, `}`, `[`, `]`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[,1]`, `{,}`, `{1:2}`, `{'a':1}`,
	`01`, `-`, `-a`, `1.`, `.5`, `1e`, `1e+`, `+1`, `0x10`, `1.5.2`, `NaN`, `Infinity`, `-Infinity`,
	`tru`, `truee`, `nul`, `nulll`, `fals`, `True`, `{}{}`, `[] []`, `1 2`, `"a" "b"`,
	`"abc`, `"\x"`, `"\u12"`, `"\u12g4"`, "\"a\x01b\"", "\"tab\tin\"", `"\`, `{"a":1`, `[1`,
	strings.Repeat("[", maxCompactDepth+6) + strings.Repeat("]", maxCompactDepth+6), // deeper than Is follows
	strings.Repeat("[", maxCompactDepth+6) + strings.Repeat("]", maxCompactDepth+5),
}

// agree checks Is(src) against json.Compact: Is says yes exactly when
// json.Compact accepts src and returns it unchanged, but for a value
// nested deeper than Is follows, where it may say no.
func agree(t *testing.T, src string) {
	t.Helper()
	var out bytes.Buffer
	compact := json.Compact(&out, []byte(src)) == nil && out.String() == src
	got := Is([]byte(src))
	switch {
	case got && !compact:
		t.Fatalf("%q: Is says compact JSON; json.Compact does not (%q)", src, out.String())
	case !got && compact && strings.Count(src, "[")+strings.Count(src, "{") <= maxCompactDepth:
		t.Fatalf("%q: compact JSON that Is leaves to encoding/json", src)
	}
}

// TestIsAgreesWithCompact: over the corpus, each of its texts cut at
// every byte, and random texts of JSON's own characters.
func TestIsAgreesWithCompact(t *testing.T) {
	for _, src := range corpus {
		for cut := 0; cut <= len(src); cut++ {
			agree(t, src[:cut])
			agree(t, src[cut:])
		}
	}
	const alphabet = `{}[]":,0123456789-+.eEtrufalsn \\/bu"a`
	rng := rand.New(rand.NewPCG(7, 11))
	for range 200_000 {
		b := make([]byte, 1+rng.IntN(12))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		agree(t, string(b))
	}
}

// FuzzIs holds Is to json.Compact on any text.
func FuzzIs(f *testing.F) {
	for _, s := range corpus {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) { agree(t, src) })
}
