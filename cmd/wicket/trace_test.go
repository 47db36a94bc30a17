package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"wicket/trace"
)

func TestTraceWhen(t *testing.T) {
	now := time.Date(2026, 5, 14, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want string // RFC3339, or "error"
	}{
		{"", "0001-01-01T00:00:00Z"},
		{"2h", "2026-05-14T10:00:00Z"},
		{"90m", "2026-05-14T10:30:00Z"},
		{"7d", "2026-05-07T12:00:00Z"},
		{"1d12h", "2026-05-13T00:00:00Z"},
		{"0s", "2026-05-14T12:00:00Z"},
		{"2026-05-01", "2026-05-01T00:00:00Z"},
		{"2026-05-01T09:30:00Z", "2026-05-01T09:30:00Z"},
		{"2026-05-01T09:30:00.250+02:00", "2026-05-01T07:30:00.25Z"},
		{"-2h", "error"},
		{"yesterday", "error"},
		{"7days", "error"},
		{"2026-5-1", "error"},
		{"d", "error"},
	}
	for _, tt := range tests {
		got, err := traceWhen("since", tt.in, now)
		if tt.want == "error" {
			var ue usageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), "a duration back from now") {
				t.Errorf("traceWhen(%q) = %v, %v; want a usage error naming the forms", tt.in, got, err)
			}
			continue
		}
		if err != nil || got.Format(time.RFC3339Nano) != tt.want {
			t.Errorf("traceWhen(%q) = %v, %v; want %s", tt.in, got.Format(time.RFC3339Nano), err, tt.want)
		}
	}
}

func TestTraceShortener(t *testing.T) {
	entries := []trace.Entry{
		{Session: "0198f0a2-aaaa", Token: "abc"},
		{Session: "0198f0a2-aaab"},
		{Session: "0198f0b9-0000"},
		{Session: "short"},
	}
	s := traceShortener(entries)
	want := map[string]string{
		"0198f0a2-aaaa": "0198f0a2-aaaa", "0198f0a2-aaab": "0198f0a2-aaab",
		"0198f0b9-0000": "0198f0b9", "short": "short", "abc": "abc",
	}
	for id, w := range want {
		if got := s.session(id); got != w {
			t.Errorf("short(%q) = %q, want %q", id, got, w)
		}
	}
	if got := s.session(""); got != "-" {
		t.Errorf("short(\"\") = %q", got)
	}
}

// lineWriter collects output and signals each complete line.
type lineWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	lines chan string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for {
		line, err := w.buf.ReadString('\n')
		if err != nil {
			w.buf.Reset()
			w.buf.WriteString(line)
			return len(p), nil
		}
		w.lines <- strings.TrimSuffix(line, "\n")
	}
}

func (w *lineWriter) next(t *testing.T) string {
	t.Helper()
	select {
	case l := <-w.lines:
		return l
	case <-time.After(20 * time.Second): // only keeps a broken follow from hanging the run
		t.Fatalf("follow printed nothing; so far %q", w.buf.String())
		return ""
	}
}

// TestTraceFollow runs `wicket trace follow` in-process: it prints the
// history since --since, then entries as a server appends them, and exits 0
// when interrupted.
func TestTraceFollow(t *testing.T) {
	for _, asJSON := range []bool{false, true} {
		t.Run(map[bool]string{false: "table", true: "json"}[asJSON], func(t *testing.T) {
			dir := t.TempDir()
			clock := time.Date(2026, 5, 14, 9, 0, 0, 0, time.UTC)
			w, err := trace.Open(dir, trace.Options{Now: func() time.Time { return clock }})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			w.Write(trace.Entry{Session: "s1", Seq: 1, Tool: "list_series", Profile: "full", Verdict: trace.OK, MS: 1})

			stdout := &lineWriter{lines: make(chan string, 100)}
			var stderr bytes.Buffer
			ctx, cancel := context.WithCancel(context.Background())
			args := []string{"wicket", "trace", "follow", "--dir", dir, "--poll", "1ms", "--since", "2026-05-01", "--verdict", "ok"}
			if asJSON {
				args = append(args, "--json")
			}
			code := make(chan int)
			go func() { code <- run(ctx, args, strings.NewReader(""), stdout, &stderr) }()

			var got []string
			want := 1
			if !asJSON {
				want++ // the header
			}
			for range want {
				got = append(got, stdout.next(t))
			}
			w.Write(trace.Entry{Session: "s1", Seq: 2, Tool: "flatten", Write: true, Profile: "full", Verdict: trace.Refused, Error: "no"})
			w.Write(trace.Entry{Session: "s1", Seq: 3, Tool: "node_snapshot", Profile: "full", Verdict: trace.OK, MS: 2})
			got = append(got, stdout.next(t))
			cancel()
			if c := <-code; c != 0 {
				t.Fatalf("exit %d, stderr %s", c, stderr.String())
			}
			if asJSON {
				if len(got) != 2 {
					t.Fatalf("got %q", got)
				}
				for i, l := range got {
					var e trace.Entry
					if err := json.Unmarshal([]byte(l), &e); err != nil || e.Seq != int64(2*i+1) {
						t.Errorf("line %q: seq %d, %v", l, e.Seq, err)
					}
				}
			} else {
				if !strings.HasPrefix(got[0], "TIME") || !strings.Contains(got[1], "list_series") || !strings.Contains(got[2], "node_snapshot") {
					t.Errorf("got %q", got)
				}
			}
			if !strings.Contains(stderr.String(), "following "+dir+" since 2026-05-01T00:00:00.000Z") {
				t.Errorf("stderr %q", stderr.String())
			}
		})
	}
}

// fakeAudit is a node's audit trail for the --node seam.
type fakeAudit struct {
	asked   [][]string
	records map[string]json.RawMessage
}

func (f *fakeAudit) Audit(_ context.Context, ids []string) (map[string]json.RawMessage, error) {
	f.asked = append(f.asked, ids)
	return f.records, nil
}

// TestTraceNodeSeam: when a node is plugged in, a confirmed token chain is
// joined with the node's audit record of its client order id; an
// unconfirmed chain asks nothing.
func TestTraceNodeSeam(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"2026-04.jsonl", "2026-05.jsonl"} {
		b, err := os.ReadFile(filepath.Join("../../testdata/trace/golden", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	w, err := trace.Open(dir, trace.Options{Now: func() time.Time { return time.Date(2026, 5, 2, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(trace.Entry{Session: "s9", Seq: 1, Tool: "cancel_order", Write: true, Verdict: trace.Preview, Token: "ffff0000-unconfirmed", ClientOrderID: "wk-x"})
	w.Close()

	node := &fakeAudit{records: map[string]json.RawMessage{
		"wk-0198f0a3-1111-7000-8000-000000000002": json.RawMessage(`[{"seq":7,"time":"2026-05-01T00:00:12.300Z","ticket":"tk-17","key_id":"control",` +
			`"command":{"verb":"submit_order","venue":"paper","symbol":"BTC-USD","side":"buy","type":"limit","quantity":"0.5","price":"41000.00",` +
			`"client_order_id":"wk-0198f0a3-1111-7000-8000-000000000002"},"reason":"breakout","outcome":{"ticket":"tk-17","status":"accepted","order_id":"o-1"}}]`),
	}}
	for _, asJSON := range []bool{false, true} {
		var out, errb bytes.Buffer
		o := &traceOptions{dir: dir, json: asJSON, stdout: &out, stderr: &errb, node: node}
		if err := traceShowToken(context.Background(), o, "5f0c2a8e"); err != nil {
			t.Fatal(err)
		}
		if asJSON {
			var v struct {
				State string          `json:"state"`
				Node  json.RawMessage `json:"node"`
			}
			if err := json.Unmarshal(out.Bytes(), &v); err != nil || v.State != "confirmed" || !strings.Contains(string(v.Node), `"order_id": "o-1"`) {
				t.Errorf("json %s: %+v %v", out.String(), v, err)
			}
		} else if !strings.Contains(out.String(), "node             1 audit entry for wk-0198f0a3-1111-7000-8000-000000000002 (below)") ||
			!regexp.MustCompile(`(?m)^7 +2026-05-01T00:00:12.300Z +control +tk-17 +submit_order buy 0.5 BTC-USD limit @ 41000 on paper +accepted: o-1 +breakout$`).MatchString(out.String()) {
			t.Errorf("table does not show the node's record:\n%s", out.String())
		}
	}
	if len(node.asked) != 2 || node.asked[0][0] != "wk-0198f0a3-1111-7000-8000-000000000002" {
		t.Errorf("node asked %v", node.asked)
	}

	var out bytes.Buffer
	o := &traceOptions{dir: dir, stdout: &out, stderr: &out, node: node}
	if err := traceShowToken(context.Background(), o, "ffff0000"); err != nil {
		t.Fatal(err)
	}
	if len(node.asked) != 2 || !strings.Contains(out.String(), "not asked: nothing was sent") {
		t.Errorf("unconfirmed chain: node asked %v, output:\n%s", node.asked, out.String())
	}
}
