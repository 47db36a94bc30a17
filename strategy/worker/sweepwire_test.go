package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
)

// sampleSweepResult is a chunk's answer with what its forms must carry
// alike: NaN, infinite and negative-zero scores, empty and missing lists
// and maps, values of every kind (a string that is not UTF-8, an int, a
// list), metrics with space and characters json.Marshal escapes, a
// failed trial, returns and blocks with NaN and infinite sums.
func sampleSweepResult() SweepChunkResult {
	nan, inf := math.NaN(), math.Inf(1)
	return SweepChunkResult{
		Bars:     BarsSeen{Digest: "ab12", Count: 17544, First: -86400, Last: 1735689600},
		Computed: map[string]uint64{"sma(close,5)": 1, "ema(close,20)": 3},
		Seconds:  0.0123, Work: 0.011,
		Trials: []Trial{
			{
				Values:  map[string]any{"fast": 5.0, "slow": 200.0, "mode": "cross", "on": true, "off": false, "none": nil, "count": 7, "list": []any{1.0, "x"}},
				Metrics: json.RawMessage(`{"total_return":-0.773998,"expectancy":"-13.75","start":"2023-01-01T00:00:00Z","bars":17544}`),
				Scores:  Scores{Sharpe: -1.768535, CAGR: Num(nan), Calmar: Num(inf), ProfitFactor: Num(math.Inf(-1)), TotalReturn: Num(math.Copysign(0, -1)), MaxDrawdown: 1e-300, WinRate: 0.3},
				Stats:   ReturnStats{SR: 0.0123456789012345, Skew: Num(nan), Kurt: 3.5, T: 17500},
				Trades:  563, Warmup: 199,
				Returns: Returns{0.1, -0.2, nan, inf, math.Copysign(0, -1)},
				Blocks:  Blocks{{N: 1096, Sum: 0.01, SumSq: 1e-5}, {N: 0, Sum: nan, SumSq: inf}},
			},
			{
				Values:  map[string]any{"name\xff": "bad\xfe utf8", "html": "<a&b>"},
				Metrics: json.RawMessage("{\n  \"note\": \"<tag> & \u2028\",\n  \"x\": 1\n}"),
				Error:   "strategy.star:3:1: boom \xff",
				Stats:   ReturnStats{SR: Num(nan), Skew: Num(nan), Kurt: Num(nan)},
			},
			{Values: map[string]any{}, Metrics: json.RawMessage{}, Returns: Returns{}, Blocks: Blocks{}},
			{},
		},
	}
}

// viaJSON is res as the caller read it when the answer was JSON.
func viaJSON(t *testing.T, res SweepChunkResult) SweepChunkResult {
	t.Helper()
	b, err := encodeAnswer(res, false)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(b) {
		t.Fatalf("the JSON answer is not JSON: %.40q", b)
	}
	var back SweepChunkResult
	if err := decodeAnswer(b, &back); err != nil {
		t.Fatal(err)
	}
	return back
}

// TestSweepWireIsJSON: a chunk's answer read from its binary form is the
// SweepChunkResult its JSON gave, field for field (NaN as NaN, nil as
// nil, each value of the same type), for the sample and for answers
// with no trials at all.
func TestSweepWireIsJSON(t *testing.T) {
	answers := []SweepChunkResult{sampleSweepResult(), {}, {Trials: []Trial{}}}
	for _, m := range []string{`{"a":"x` + "\u2028" + `y"}`, `{"a":"x` + "\u2029" + `"}`, `{"a":"<"}`, `{"a":">"}`, `{"a":"&"}`,
		"{\"a\":\t1}", "{\"a\":\r\n1}", `{"a":"` + "\u2027\u202a\xe2" + `"}`, `{"a":"é"}`, `[1,2]`} {
		answers = append(answers, SweepChunkResult{Trials: []Trial{{Metrics: json.RawMessage(m)}}})
	}
	for i, res := range answers {
		b, err := encodeAnswer(res, true)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(b), sweepWireMagic) {
			t.Fatalf("answer %d: not in the binary form: %.20q", i, b)
		}
		var got SweepChunkResult
		if err := decodeAnswer(b, &got); err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
		if g, w := fmt.Sprintf("%#v", got), fmt.Sprintf("%#v", viaJSON(t, res)); g != w {
			t.Fatalf("answer %d:\nbinary %s\n  JSON %s", i, g, w)
		}
	}
}

// TestSweepWireRefusesDamage: a binary answer cut anywhere, with bytes
// after its end, or with metrics that are not JSON is an error, never a
// result (nor a panic).
func TestSweepWireRefusesDamage(t *testing.T) {
	b, err := encodeAnswer(sampleSweepResult(), true)
	if err != nil {
		t.Fatal(err)
	}
	for n := len(sweepWireMagic); n < len(b); n++ {
		var got SweepChunkResult
		if err := decodeAnswer(b[:n], &got); err == nil {
			t.Fatalf("cut at %d of %d bytes: read without an error", n, len(b))
		}
	}
	var got SweepChunkResult
	if err := decodeAnswer(append(b[:len(b):len(b)], 0), &got); err == nil {
		t.Fatal("a byte after the answer's end: read without an error")
	}
	bad := sampleSweepResult()
	bad.Trials[0].Metrics = json.RawMessage(`{"a":1,}`)
	if b, err = encodeAnswer(bad, true); err != nil {
		t.Fatal(err)
	}
	if err := decodeAnswer(b, &got); err == nil || !strings.Contains(err.Error(), "metrics that are not JSON") {
		t.Fatalf("metrics that are not JSON: %v", err)
	}
	var other []string
	if err := decodeAnswer(b, &other); err == nil {
		t.Fatal("a binary answer read into another type without an error")
	}
}

// TestSweepWireOverThePipe: Pool.Sweep reads a worker's chunk answer as
// the JSON one read; an answer asked for as a SweepAnswer (a research
// cluster's worker passes it on) is the binary form, which
// DecodeSweepAnswer reads as the same; one asked for as a json.RawMessage
// is still JSON.
func TestSweepWireOverThePipe(t *testing.T) {
	p := newPool(t, Config{Size: 1})
	got, err := p.Sweep(context.Background(), SweepChunk{Name: "x.star"})
	if err != nil {
		t.Fatal(err)
	}
	if g, w := fmt.Sprintf("%#v", got), fmt.Sprintf("%#v", viaJSON(t, sampleSweepResult())); g != w {
		t.Fatalf("over the pipe:\n  got %s\n JSON %s", g, w)
	}
	var answer SweepAnswer
	if err := p.Do(context.Background(), KindSweep, SweepChunk{Name: "x.star"}, &answer); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(answer), sweepWireMagic) {
		t.Fatalf("the answer passed on is not in the binary form: %.20q", answer)
	}
	relayed, err := DecodeSweepAnswer(answer)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := fmt.Sprintf("%#v", relayed), fmt.Sprintf("%#v", viaJSON(t, sampleSweepResult())); g != w {
		t.Fatalf("passed on:\n  got %s\n JSON %s", g, w)
	}
	if _, err := DecodeSweepAnswer(answer[:len(answer)-1]); err == nil {
		t.Fatal("an answer cut short read without an error")
	}
	var raw json.RawMessage
	if err := p.Do(context.Background(), KindSweep, SweepChunk{Name: "x.star"}, &raw); err != nil {
		t.Fatal(err)
	}
	var back SweepChunkResult
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatalf("the raw answer is not JSON: %v (%.30q)", err, raw)
	}
	if g, w := fmt.Sprintf("%#v", back), fmt.Sprintf("%#v", viaJSON(t, sampleSweepResult())); g != w {
		t.Fatalf("raw:\n  got %s\n JSON %s", g, w)
	}
}

// FuzzSweepAnswer: whatever bytes a research cluster's worker relays as
// its chunk's answer, DecodeSweepAnswer returns a result or an error,
// never a panic nor an allocation the bytes do not bound. A result read
// from the binary form encodes again, and (its strings made valid UTF-8 by
// that first encoding, as JSON would) reads back the same ever after.
func FuzzSweepAnswer(f *testing.F) {
	for _, res := range []SweepChunkResult{sampleSweepResult(), {}, {Trials: []Trial{{}}}} {
		b, err := encodeAnswer(res, true)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"trials":[]}`))
	f.Add([]byte(sweepWireMagic + "\xff\xff\xff\xff\x0f"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		res, err := DecodeSweepAnswer(SweepAnswer(raw))
		if err != nil || !strings.HasPrefix(string(raw), sweepWireMagic) {
			return
		}
		roundTrip := func(r SweepChunkResult) SweepChunkResult {
			b, err := encodeAnswer(r, true)
			if err != nil {
				t.Fatalf("a result read from the binary form does not encode: %v", err)
			}
			var back SweepChunkResult
			if err := decodeAnswer(b, &back); err != nil {
				t.Fatalf("a result read from the binary form does not read back: %v", err)
			}
			return back
		}
		once := roundTrip(res)
		if g, w := fmt.Sprintf("%#v", roundTrip(once)), fmt.Sprintf("%#v", once); g != w {
			t.Fatalf("read back differently:\n  got %s\n want %s", g, w)
		}
	})
}
