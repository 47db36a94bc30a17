package wire

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// response is what mcp-go writes for a request whose id is sur.
func response(sur string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":"` + sur + `","result":{}}` + "\n")
}

func TestWireIDsRoundTrip(t *testing.T) {
	for _, id := range []string{`1`, `0`, `-7`, `1.5`, `12345678901234567890`, `18446744073709551616`, `1e400`, `"x"`, `"wk-00000000:1"`, `"\u00e9\"q"`} {
		w := NewIDs()
		body := []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
		var m Message
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		out, sur := w.Inbound(body, &m, nil)
		if sur == "" || !bytes.Contains(out, []byte(`"`+sur+`"`)) {
			t.Fatalf("id %s: no surrogate in %s", id, out)
		}
		back, drop, _ := w.Outbound(response(sur))
		want := `{"jsonrpc":"2.0","id":` + id + `,"result":{}}` + "\n"
		if drop || string(back) != want {
			t.Errorf("id %s came back as %s (drop %v)", id, back, drop)
		}
		if w.Outstanding() != 0 {
			t.Errorf("id %s: still outstanding", id)
		}
	}
}

// TestWireKeepsText: rewriting the id leaves the rest of the message's
// text as the client wrote it.
func TestWireKeepsText(t *testing.T) {
	w := NewIDs()
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"source":"if a < b && c > d: pass"}}}`)
	var m Message
	_ = json.Unmarshal(body, &m)
	out, _ := w.Inbound(body, &m, nil)
	if !bytes.Contains(out, []byte(`"if a < b && c > d: pass"`)) {
		t.Errorf("rewritten message changed the text: %s", out)
	}
}

func TestWireCancelledIsDropped(t *testing.T) {
	w := NewIDs()
	req := []byte(`{"jsonrpc":"2.0","id":99,"method":"tools/call"}`)
	var m Message
	_ = json.Unmarshal(req, &m)
	_, sur := w.Inbound(req, &m, nil)
	cancel := []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`)
	var cm Message
	_ = json.Unmarshal(cancel, &cm)
	out, _ := w.Inbound(cancel, &cm, nil)
	if !bytes.Contains(out, []byte(`"requestId":"`+sur+`"`)) {
		t.Fatalf("cancellation not pointed at the surrogate: %s", out)
	}
	if _, drop, _ := w.Outbound(response(sur)); !drop {
		t.Error("the response of a cancelled request was written")
	}
	select {
	case <-w.Idle():
	default:
		t.Error("a dropped response left its request outstanding")
	}
}

// FuzzWireIDs: whatever id a client sends, the response carries the same
// bytes back.
func FuzzWireIDs(f *testing.F) {
	for _, s := range []string{`1`, `"a"`, `12345678901234567890`, `-0.5e-3`, `"\\\""`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		body := []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
		var m Message
		if json.Unmarshal(body, &m) != nil || !m.IsRequest() {
			return
		}
		var v any
		if json.Unmarshal(m.ID, &v) != nil {
			return
		}
		switch v.(type) {
		case string, float64:
		default:
			return // JSON-RPC ids are strings or numbers
		}
		w := NewIDs()
		_, sur := w.Inbound(body, &m, nil)
		back, _, _ := w.Outbound(response(sur))
		if want := `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{}}` + "\n"; string(back) != want {
			t.Fatalf("id %s came back as %s", m.ID, back)
		}
	})
}

func TestSizeText(t *testing.T) {
	for n, want := range map[int]string{4 << 20: "4 MiB", 512 << 10: "512 KiB", 1000: "1000 bytes"} {
		if got := SizeText(n); got != want {
			t.Errorf("SizeText(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestRestoreSubscriptionID: a listen stream's acknowledgement and final
// result name the client's own request id in _meta, not the surrogate.
func TestRestoreSubscriptionID(t *testing.T) {
	w := NewIDs()
	m := &Message{ID: json.RawMessage(`12345678901234567891`), Method: "subscriptions/listen"}
	_, sur := w.Inbound([]byte(`{"jsonrpc":"2.0","id":12345678901234567891,"method":"subscriptions/listen","params":{}}`), m, nil)
	ack := `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"` + sur + `"}}}`
	if got := string(w.RestoreSubscriptionID([]byte(ack))); !strings.Contains(got, `"io.modelcontextprotocol/subscriptionId":12345678901234567891}`) {
		t.Fatalf("ack = %s", got)
	}
	final := `{"jsonrpc":"2.0","id":"` + sur + `","result":{"_meta":{"io.modelcontextprotocol/subscriptionId":"` + sur + `"}}}`
	out, drop, _ := w.Outbound(w.RestoreSubscriptionID([]byte(final)))
	if drop || string(out) != `{"jsonrpc":"2.0","id":12345678901234567891,"result":{"_meta":{"io.modelcontextprotocol/subscriptionId":12345678901234567891}}}` {
		t.Fatalf("final = %s (drop %v)", out, drop)
	}
	other := `{"jsonrpc":"2.0","method":"x","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"client-own"}}}`
	if got := string(w.RestoreSubscriptionID([]byte(other))); got != other {
		t.Fatalf("a client's own id was changed: %s", got)
	}
}

// TestIDScanLargeID: the exact bytes of a large integer id are kept (a
// decode through float64 would hide a changed digit).
func TestIDScanLargeID(t *testing.T) {
	var sc IDScan
	sc.Feed([]byte(`{"jsonrpc":"2.0", "id" : 12345678901234567890 ,"method":"ping","params":{"pad":"`))
	if got := string(sc.ID()); got != "12345678901234567890" {
		t.Errorf("large id scanned as %s", got)
	}
}

// TestLineTooLongHead: a body over the limit is refused with its id when
// the part read shows it (HTTP's 413).
func TestLineTooLongHead(t *testing.T) {
	pad := strings.Repeat("x", 4096)
	if got := string(LineTooLong(1024, []byte(`{"id":"r1","method":"tools/call","params":{"x":"`+pad))); !strings.Contains(got, `"id":"r1"`) {
		t.Errorf("HTTP refusal: %s", got)
	}
}
