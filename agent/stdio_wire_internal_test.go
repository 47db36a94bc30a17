package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// FuzzFrontDesk feeds arbitrary input to the stdio server: it must return,
// and every line it writes must be one JSON-RPC message (or a batch).
func FuzzFrontDesk(f *testing.F) {
	for _, s := range []string{
		"{not json\n",
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}` + "\n" + `[{"jsonrpc":"2.0","id":2,"method":"ping"},3]` + "\n",
		`[]` + "\n" + `{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_templats"}}` + "\n",
		`{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"list_templates","arguments":{}}}` + "\n" +
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c"}}` + "\n",
		"\n\n   \r\n" + strings.Repeat("x", 300) + "\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		s := newTestServer(t, ProfileFull, nil, nil)
		s.opts.MaxMessage = 256
		s.opts.Drain = 2 * time.Second
		var out bytes.Buffer
		done := make(chan error, 1)
		go func() { done <- s.Serve(context.Background(), bytes.NewReader(in), &out) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Serve: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("Serve did not return")
		}
		sc := bufio.NewScanner(&out)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			if !json.Valid(sc.Bytes()) {
				t.Fatalf("stdout line is not JSON: %q", sc.Text())
			}
		}
	})
}

// endless is a reader of n 'a' bytes, then tail: a huge line nobody holds.
type endless struct {
	n    int
	tail *strings.Reader
}

func (e *endless) Read(p []byte) (int, error) {
	if e.n == 0 {
		return e.tail.Read(p)
	}
	k := min(len(p), e.n)
	for i := range k {
		p[i] = 'a'
	}
	e.n -= k
	return k, nil
}

// TestLineTooLong (#19.5): a 100 MiB line is answered -32600 naming the
// limit, skipped without being buffered, and the next line is served.
func TestLineTooLong(t *testing.T) {
	s := newTestServer(t, ProfileFull, nil, nil)
	s.opts.MaxMessage = 1 << 20
	in := &endless{n: 100 << 20, tail: strings.NewReader("\n" + `{"jsonrpc":"2.0","id":5,"method":"ping"}` + "\n")}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var out bytes.Buffer
	if err := s.Serve(context.Background(), io.MultiReader(in), &out); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"code":-32600`) || !strings.Contains(lines[0], "1 MiB") || !strings.Contains(lines[1], `"id":5`) {
		t.Fatalf("output:\n%s", out.String())
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
		t.Errorf("reading a 100 MiB line allocated %d MiB; it must be skipped, not buffered", grew>>20)
	}
}

// TestWireShapeRefused: valid JSON that is not a JSON-RPC message (a bare
// value, an id that is an object, an array or a boolean) is -32600 with id
// null, never -32700 (which is for text that is not JSON), and never
// served with its odd id echoed. Over HTTP: agent/front's
// TestHTTPShapeRefused.
func TestWireShapeRefused(t *testing.T) {
	bad := []string{`42`, `"ping"`, `true`,
		`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`,
		`{"jsonrpc":"2.0","id":[1],"method":"ping"}`,
		`{"jsonrpc":"2.0","id":true,"method":"ping"}`}
	check := func(t *testing.T, in, got string) {
		t.Helper()
		var resp struct {
			ID    json.RawMessage `json:"id"`
			Error *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(got), &resp); err != nil || resp.Error == nil ||
			resp.Error.Code != mcp.INVALID_REQUEST || string(resp.ID) != "null" {
			t.Errorf("%s answered %s; want -32600 with id null", in, got)
		}
	}
	t.Run("stdio", func(t *testing.T) {
		s := newTestServer(t, ProfileFull, nil, nil)
		var out bytes.Buffer
		if err := s.Serve(context.Background(), strings.NewReader(strings.Join(bad, "\n")+"\n"), &out); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != len(bad) {
			t.Fatalf("%d answers for %d messages:\n%s", len(lines), len(bad), out.String())
		}
		for i, l := range lines {
			check(t, bad[i], l)
		}
	})
}

// TestLineTooLongKeepsID (issue 31, item 12): an oversized stdio line whose
// id can be read is refused with that id, exactly as sent, wherever it sits
// in the line (the line streams past, unbuffered); an id nested in params
// is not the message's, and a line without a readable id still gets null.
func TestLineTooLongKeepsID(t *testing.T) {
	pad := strings.Repeat("x", 4096)
	for _, tc := range []struct{ line, id string }{
		{`{"jsonrpc":"2.0","id":12345678901234567890,"method":"tools/call","params":{"name":"list_templates","arguments":{"pad":"` + pad + `"}}}`, `12345678901234567890`},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"id":7,"arguments":{"pad":"` + pad + `","q":"\"id\":8,"}},"id":"a\"b"}`, `"a\"b"`},
		{`{"jsonrpc":"2.0","method":"ping","params":{"pad":"` + pad + `"}}`, `null`},
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"ping","params":{"pad":"` + pad + `"}}`, `null`},
		{`["` + pad + `"]`, `null`},
	} {
		s := newTestServer(t, ProfileFull, nil, nil)
		s.opts.MaxMessage = 1024
		msgs := serveLines(t, s, tc.line+"\n"+`{"jsonrpc":"2.0","id":5,"method":"ping"}`+"\n")
		if len(msgs) != 2 {
			t.Fatalf("%.60s…: %d responses, want 2", tc.line, len(msgs))
		}
		id, _ := json.Marshal(msgs[0]["id"])
		var want any
		_ = json.Unmarshal([]byte(tc.id), &want)
		wantJSON, _ := json.Marshal(want)
		if string(id) != string(wantJSON) || msgs[0]["error"].(map[string]any)["code"] != float64(-32600) {
			t.Errorf("%.60s…: refused with id %s (%v), want %s", tc.line, id, msgs[0]["error"], tc.id)
		}
	}
	// The id scan's exact bytes and HTTP's 413: wire's TestIDScanLargeID
	// and TestLineTooLongHead.
}
