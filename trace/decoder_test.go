package trace

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

// goldenText is the golden files' lines, oldest first.
func goldenText(t testing.TB) string {
	var b strings.Builder
	for _, name := range []string{"2026-04.jsonl", "2026-05.jsonl"} {
		data, err := os.ReadFile(filepath.Join(goldenDir, name))
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
	}
	return b.String()
}

// decoded is what a Decoder made of a stream: entries (by seq and tool) and
// problems (by kind and line).
func decodeStream(r io.Reader) (got []string, err error) {
	d := NewDecoder(r)
	for {
		e, err := d.Next()
		if err == io.EOF {
			return got, nil
		}
		var p *Problem
		switch {
		case errors.As(err, &p) && (p.Kind == KindTorn || p.Kind == KindMalformed):
			got = append(got, fmt.Sprintf("%s@%d", p.Kind, p.Line))
		case err != nil:
			return got, err
		default:
			got = append(got, fmt.Sprintf("%s#%d", e.Tool, e.Seq))
		}
	}
}

// TestDecoderChunks feeds the same text whole, in one-byte chunks and in
// halves: the result does not depend on how the bytes arrive.
func TestDecoderChunks(t *testing.T) {
	golden := goldenText(t)
	want := []string{"list_templates#1", "run_backtest#2", "submit_order#3", "submit_order#4",
		"flatten#1", "plaec_order#2", "node_snapshot#3", "validate_strategy#4"}
	torn := golden + golden[:strings.Index(golden, "\n")/2] // half a line, no newline
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"whole lines", golden, want},
		{"torn last line", torn, append(append([]string{}, want...), "torn line@9")},
		{"last line lacks only its newline", strings.TrimSuffix(golden, "\n"), want},
		{"blank lines and CRLF", "\n" + strings.ReplaceAll(golden, "\n", "\r\n\n"), want},
		{"malformed line in the middle", strings.Replace(golden, "\n", "\nnot json\n", 1),
			append(append([]string{want[0]}, "malformed line@2"), want[1:]...)},
		{"empty", "", nil},
		{"only a fragment", `{"ts":"2026`, []string{"torn line@1"}},
	}
	readers := map[string]func(string) io.Reader{
		"whole":   func(s string) io.Reader { return strings.NewReader(s) },
		"onebyte": func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
		"half":    func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) },
		"dataerr": func(s string) io.Reader { return iotest.DataErrReader(strings.NewReader(s)) },
	}
	for _, tt := range tests {
		for rname, mk := range readers {
			t.Run(tt.name+"/"+rname, func(t *testing.T) {
				got, err := decodeStream(mk(tt.text))
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(got) != fmt.Sprint(tt.want) {
					t.Errorf("got  %v\nwant %v", got, tt.want)
				}
			})
		}
	}
}

func TestDecoderRejects(t *testing.T) {
	valid := `{"ts":"2026-05-01T00:00:00.000Z","session":"s","seq":1,"tool":"a","write":false,"profile":"full","verdict":"ok","ms":1}`
	tests := []struct {
		name, line, why string
	}{
		{"unknown verdict", strings.Replace(valid, `"ok"`, `"maybe"`, 1), "unknown verdict"},
		{"verdict not a string", strings.Replace(valid, `"ok"`, `1`, 1), "verdict"},
		{"no verdict", strings.Replace(valid, `"verdict":"ok",`, ``, 1), `missing "verdict"`},
		{"null verdict", strings.Replace(valid, `"ok"`, `null`, 1), `missing "verdict"`},
		{"no ts", strings.Replace(valid, `"ts":"2026-05-01T00:00:00.000Z",`, ``, 1), `missing "ts"`},
		{"bad ts", strings.Replace(valid, `2026-05-01T`, `2026-05-01 `, 1), `bad "ts"`},
		{"not an object", `[1,2]`, "cannot unmarshal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewDecoder(strings.NewReader(tt.line + "\n")).Next()
			var p *Problem
			if !errors.As(err, &p) || p.Kind != KindMalformed || p.Line != 1 || !strings.Contains(err.Error(), tt.why) {
				t.Errorf("Next() = %v, want a malformed line 1 mentioning %q", err, tt.why)
			}
		})
	}
	// Unknown fields are a newer writer's, not a mistake.
	if _, err := NewDecoder(strings.NewReader(strings.Replace(valid, `"ms":1`, `"ms":1,"later":{"x":1}`, 1))).Next(); err != nil {
		t.Errorf("unknown field: %v", err)
	}
}

// TestDecoderLongLine: a line over the limit is skipped without holding it,
// and the next line is read.
func TestDecoderLongLine(t *testing.T) {
	golden := goldenText(t)
	first := golden[:strings.Index(golden, "\n")+1]
	text := strings.Repeat("x", maxReadLine+10) + "\n" + first
	got, err := decodeStream(iotest.HalfReader(strings.NewReader(text)))
	if err != nil {
		t.Fatal(err)
	}
	if want := "[malformed line@1 list_templates#1]"; fmt.Sprint(got) != want {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestDecoderReadError(t *testing.T) {
	golden := goldenText(t)
	d := NewDecoder(iotest.TimeoutReader(iotest.OneByteReader(strings.NewReader(golden))))
	_, err := d.Next()
	var p *Problem
	if !errors.As(err, &p) || p.Kind != KindIO || !errors.Is(err, iotest.ErrTimeout) {
		t.Fatalf("Next() = %v, want a KindIO Problem wrapping the read error", err)
	}
	if _, again := d.Next(); again != err {
		t.Errorf("a read error is not sticky: %v", again)
	}
}

// FuzzDecoder: no input makes the Decoder panic or loop, every entry it
// returns encodes again, and it never returns more items than lines.
func FuzzDecoder(f *testing.F) {
	golden := goldenText(f)
	f.Add(golden)
	f.Add(golden[:len(golden)/2])
	f.Add("\n\n\r\n")
	f.Add(`{"ts":"2026-05-01T00:00:00Z","verdict":"ok","args":{"a":[1,2,{"b":null}]}}`)
	f.Add(`{"ts":"2026-05-01T00:00:00Z","verdict":"error","seq":-1,"ms":1e308}` + "\n" + `{"ts":`)
	f.Fuzz(func(t *testing.T, text string) {
		d := NewDecoder(strings.NewReader(text))
		items := 0
		for {
			e, err := d.Next()
			if err == io.EOF {
				break
			}
			items++
			if items > strings.Count(text, "\n")+1 {
				t.Fatalf("%d items from %d lines", items, strings.Count(text, "\n")+1)
			}
			if err != nil {
				var p *Problem
				if !errors.As(err, &p) || (p.Kind != KindTorn && p.Kind != KindMalformed) {
					t.Fatalf("unexpected error %v", err)
				}
				continue
			}
			if _, err := e.MarshalJSON(); err != nil {
				t.Fatalf("a decoded entry does not encode: %v", err)
			}
		}
	})
}
