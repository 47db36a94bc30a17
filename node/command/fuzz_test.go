package command

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzDecode feeds arbitrary bytes as the arguments of every verb. Decoding
// must never panic; it either fails with an *Error or yields a command that
// validates, whose wire form decodes back to the same intent and the same
// bytes.
func FuzzDecode(f *testing.F) {
	seeds := []string{
		`{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"limit","quantity":"0.5","price":"41000"}`,
		`{"venue":"paper","symbol":"ETH-USD","side":"sell","type":"market","quantity":1.25,"client_order_id":"wk-1"}`,
		`{"venue":"paper","symbol":"BTC-USD","side":"sell","type":"stop","quantity":"1","stop_price":"39000"}`,
		`{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"stop_limit","quantity":"1","stop_price":"41000","limit_price":41100.5}`,
		`{"venue":"paper","symbol":"BTC-USD","side":"sell","type":"trailing_stop","quantity":"1","trail_percent":"2.5"}`,
		`{"venue":"paper","symbol":"BTC-USD","side":"sell","type":"oco","quantity":"1","price":"44000","stop_price":"39000","limit_price":"38900"}`,
		`{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"bracket","quantity":"1","price":"40000","take_profit":"44000","stop_price":"39000","limit_price":"38900"}`,
		`{"venue":"paper","order_id":"ord-1","stop_price":"39000","trail_percent":"2"}`,
		`{"venue":"paper","order_id":"ord-00000001"}`,
		`{"venue":"paper","client_order_id":"wk-1","quantity":"2","price":"3.5"}`,
		`{"venue":"paper","symbol":"BTC-USD","side":"sell"}`,
		`{"state":"halted"}`,
		`{}`, `null`, ``, `[]`, `"x"`, `{"venue":null}`, `{"quantity":1e400}`, `{"quantity":"-0"}`,
		`{"venue":"paper","venue":"paper"}`, `{"a":{"b":[1,2,{"c":null}]}}`, "{\"venue\":\"\xff\"}",
	}
	for i, s := range seeds {
		f.Add(uint8(i), []byte(s))
	}
	verbs := Verbs()
	f.Fuzz(func(t *testing.T, v uint8, data []byte) {
		verb := verbs[int(v)%len(verbs)]
		c, _, err := DecodeWith(string(verb), data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Decode error %v is not an *Error", err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("decoded command does not validate: %v", err)
		}
		wire, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		var back Command
		if err := json.Unmarshal(wire, &back); err != nil {
			t.Fatalf("wire form %s does not decode: %v", wire, err)
		}
		if err := c.SameIntent(back); err != nil {
			t.Fatalf("round trip changed intent: %v", err)
		}
		again, _ := json.Marshal(back)
		if string(again) != string(wire) {
			t.Fatalf("wire form not stable:\n%s\n%s", wire, again)
		}
	})
}

// FuzzEnvelope feeds arbitrary bytes to the node's request decoding: it
// never panics, and what it accepts re-encodes to bytes that decode to the
// same envelope.
func FuzzEnvelope(f *testing.F) {
	for _, s := range []string{
		`{"command":{"verb":"submit_order","venue":"paper","symbol":"BTC-USD","side":"buy","type":"market","quantity":"1"},"reason":"why"}`,
		`{"command":{"verb":"set_trading_state","state":"halted"}}`,
		`{"command":{"verb":"market_exit"},"reason":"a\u0000b\u202e"}`,
		`{"command":null}`, `{"reason":1}`, `{}`, `[]`, `{"command":{"verb":7}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var e Envelope
		if err := json.Unmarshal(data, &e); err != nil {
			return
		}
		if len([]rune(e.Reason)) > MaxReasonRunes || e.Reason != SanitizeReason(e.Reason) {
			t.Fatalf("reason not sanitized: %q", e.Reason)
		}
		wire, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var back Envelope
		if err := json.Unmarshal(wire, &back); err != nil {
			t.Fatalf("%s does not decode: %v", wire, err)
		}
		if back.Reason != e.Reason || e.Command.SameIntent(back.Command) != nil || back.Command.ClientOrderID != e.Command.ClientOrderID {
			t.Fatalf("round trip changed %s", wire)
		}
	})
}
