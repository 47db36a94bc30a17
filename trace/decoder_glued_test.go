package trace

import (
	"strings"
	"testing"
)

// TestDecoderGluedEntry: an entry appended behind a write cut short (by
// another writer, before the fragment was ended) is read, and the fragment
// is reported as torn, once.
func TestDecoderGluedEntry(t *testing.T) {
	one := `{"ts":"2026-05-01T00:00:00.000Z","session":"s","seq":1,"tool":"a","write":false,"profile":"full","verdict":"ok","ms":1}`
	two := `{"ts":"2026-05-01T00:00:02.000Z","session":"s","seq":2,"tool":"b","write":false,"profile":"full","args":{"ts":"x","q":{"ts":"2026-05-01T00:00:00.000Z"}},"verdict":"ok","ms":1}`
	three := `{"ts":"2026-05-01T00:00:03.000Z","session":"s","seq":3,"tool":"c","write":false,"profile":"full","verdict":"ok","ms":1}`
	tests := []struct{ name, text, want string }{
		{"one fragment", one + "\n" + two[:40] + two + "\n" + three + "\n", "a#1 torn line@2 b#2 c#3"},
		{"a fragment whose arguments hold an entry's start",
			one + "\n" + two[:len(two)-30] + three + "\n", "a#1 torn line@2 c#3"},
		{"two fragments", two[:25] + one[:50] + three + "\n", "torn line@1 c#3"},
		{"nothing whole after it", one[:60] + "\n" + three + "\n", "malformed line@1 c#3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeStream(strings.NewReader(tt.text))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("got %v, want %s", got, tt.want)
			}
		})
	}
	p := &Problem{Kind: KindTorn, Path: "m.jsonl", Line: 2, Err: &fragment{n: 40}}
	if msg := p.Error(); !strings.Contains(msg, "m.jsonl line 2: the first 40 bytes are a write cut short") || !strings.Contains(msg, "that entry was read") {
		t.Errorf("problem reads %q", msg)
	}
}
