package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"
)

// frontDesk sits between the real stdin/stdout and mcp-go's stdio loop.
//
// mcp-go v1.2.1 cancels in-flight calls and drops queued ones when stdin
// reaches EOF, and drops an unterminated last line. The front desk passes
// lines through a pipe and, at EOF, holds the pipe open until every request
// it passed has been answered on stdout (bounded by drain), so a client that
// writes a batch and closes stdin still gets every response. It also
// terminates a last unterminated line, skips blank lines, and lets the
// server answer some requests itself (intercept) — unknown tools get the
// protocol's -32602 with suggestions there.
type frontDesk struct {
	in    io.Reader
	out   io.Writer
	drain time.Duration
	// intercept may answer a request itself: it returns the response line
	// (without newline) and true, and the line is not passed on.
	intercept func(line []byte, id json.RawMessage, method string) ([]byte, bool)

	outMu   sync.Mutex
	mu      sync.Mutex
	pending map[string]int // outstanding request ids, counted
}

func newFrontDesk(in io.Reader, out io.Writer, drain time.Duration) *frontDesk {
	return &frontDesk{in: in, out: out, drain: drain, pending: map[string]int{}}
}

// idKey normalises a JSON-RPC id the way the server will echo it (numbers
// pass through float64, so both sides go through the same decoding).
func idKey(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 {
		return "", false
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil || v == nil {
		return "", false
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// envelope is the part of a JSON-RPC message the desk reads.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// reader returns the stream mcp-go reads. It runs the copying goroutine.
func (d *frontDesk) reader() io.Reader {
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(d.copyLines(pw))
	}()
	return pr
}

func (d *frontDesk) copyLines(pw *io.PipeWriter) error {
	br := bufio.NewReaderSize(d.in, 64*1024)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if werr := d.pass(pw, line); werr != nil {
				return werr
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				d.waitIdle()
				return io.EOF
			}
			return err
		}
	}
}

// pass forwards one line, tracking its id, unless it is blank or
// intercepted.
func (d *frontDesk) pass(pw io.Writer, line []byte) error {
	body := bytes.TrimSpace(line)
	if len(body) == 0 {
		return nil
	}
	var env envelope
	if body[0] == '{' && json.Unmarshal(body, &env) == nil && env.Method != "" {
		if key, ok := idKey(env.ID); ok {
			if d.intercept != nil {
				if resp, handled := d.intercept(body, env.ID, env.Method); handled {
					return d.writeLine(resp)
				}
			}
			d.mu.Lock()
			d.pending[key]++
			d.mu.Unlock()
		}
	}
	_, err := pw.Write(append(body, '\n'))
	return err
}

// waitIdle blocks until every passed request is answered, or drain passes.
func (d *frontDesk) waitIdle() {
	deadline := time.Now().Add(d.drain)
	for time.Now().Before(deadline) {
		d.mu.Lock()
		n := len(d.pending)
		d.mu.Unlock()
		if n == 0 {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// writer returns the stream mcp-go writes to: it marks answered ids.
func (d *frontDesk) writer() io.Writer { return deskWriter{d} }

type deskWriter struct{ d *frontDesk }

// Write receives exactly one JSON-RPC message per call from mcp-go.
func (w deskWriter) Write(p []byte) (int, error) {
	if key, ok := responseID(p); ok {
		defer w.d.answered(key)
	}
	w.d.outMu.Lock()
	defer w.d.outMu.Unlock()
	return w.d.out.Write(p)
}

func (d *frontDesk) answered(key string) {
	d.mu.Lock()
	if d.pending[key]--; d.pending[key] <= 0 {
		delete(d.pending, key)
	}
	d.mu.Unlock()
}

// writeLine writes a response the desk produced itself.
func (d *frontDesk) writeLine(b []byte) error {
	d.outMu.Lock()
	defer d.outMu.Unlock()
	_, err := d.out.Write(append(b, '\n'))
	return err
}

// responseID returns the id key of a JSON-RPC response (a message with an
// id and a result or error, and no method). It reads only as far as it
// must: mcp-go writes "jsonrpc", "id" and then "result" or "error", so a
// large result is not parsed; any other layout falls back to a full decode.
func responseID(p []byte) (string, bool) {
	if key, ok, sure := responseIDFast(p); sure {
		return key, ok
	}
	dec := json.NewDecoder(bytes.NewReader(p))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", false
	}
	var id json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		switch tok {
		case "jsonrpc":
			var v string
			if dec.Decode(&v) != nil {
				return "", false
			}
			continue
		case "id":
			if dec.Decode(&id) != nil {
				return "", false
			}
			continue
		case "result", "error":
			if id == nil {
				break // unusual order: decode it all
			}
			return idKey(id)
		case "method":
			return "", false
		}
		break
	}
	var env envelope
	if json.Unmarshal(bytes.TrimSpace(p), &env) != nil || env.Method != "" || (env.Result == nil && env.Error == nil) {
		return "", false
	}
	return idKey(env.ID)
}

// responseIDFast reads the layout mcp-go writes,
// {"jsonrpc":"2.0","id":ID,"result"|"error":..., without a parser; sure is
// false when p has another layout.
func responseIDFast(p []byte) (key string, ok, sure bool) {
	const prefix = `{"jsonrpc":"2.0","id":`
	if !bytes.HasPrefix(p, []byte(prefix)) {
		return "", false, false
	}
	rest := p[len(prefix):]
	end := 0
	if len(rest) > 0 && rest[0] == '"' {
		end = 1
		for end < len(rest) && rest[end] != '"' {
			if rest[end] == '\\' {
				return "", false, false // escapes: let the parser handle them
			}
			end++
		}
		end++
	} else {
		for end < len(rest) && (rest[end] == '-' || rest[end] == '.' || rest[end] == '+' || rest[end] == 'e' || rest[end] == 'E' || rest[end] >= '0' && rest[end] <= '9') {
			end++
		}
	}
	if end == 0 || end > len(rest) {
		return "", false, false
	}
	after := rest[end:]
	if !bytes.HasPrefix(after, []byte(`,"result":`)) && !bytes.HasPrefix(after, []byte(`,"error":`)) {
		return "", false, false
	}
	key, ok = idKey(rest[:end])
	return key, ok, true
}
