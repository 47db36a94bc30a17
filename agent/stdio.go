package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"wicket/agent/wire"
)

// defaultMaxMessage bounds one JSON-RPC message (a stdio line, an HTTP
// body) unless Options.MaxMessage says otherwise.
const defaultMaxMessage = 4 << 20

// frontDesk sits between the real stdin/stdout and mcp-go's stdio loop.
//
// mcp-go v1.2.1 cancels in-flight calls and drops queued ones when stdin
// reaches EOF, and drops an unterminated last line. The front desk passes
// lines through a pipe and, at EOF, holds the pipe open until every request
// it passed has been answered on stdout (bounded by drain), so a client that
// writes a batch and closes stdin still gets every response. It also
// terminates a last unterminated line, skips blank lines, bounds a line
// (a longer one is skipped without being buffered and answered -32600,
// with its id when the line shows one),
// runs every message through the session's wire layer (exact ids, no
// response to a cancelled request, batches per version), and lets the
// server answer some requests itself (intercept) — unknown tools get the
// protocol's -32602 with suggestions there.
type frontDesk struct {
	in      io.Reader
	out     io.Writer
	drain   time.Duration
	maxLine int
	ids     *wire.IDs
	version func() string // the negotiated protocol version, "" before initialize
	// intercept may answer a request itself: it returns the response line
	// (without newline) and true, and the line is not passed on.
	intercept func(line []byte, id json.RawMessage, method string) ([]byte, bool)
	// prepare may rewrite a message before it is passed on.
	prepare func(body []byte, m *wire.Message) []byte

	outMu sync.Mutex
}

func newFrontDesk(in io.Reader, out io.Writer, drain time.Duration, maxLine int, ids *wire.IDs) *frontDesk {
	if maxLine <= 0 {
		maxLine = defaultMaxMessage
	}
	return &frontDesk{in: in, out: out, drain: drain, maxLine: maxLine, ids: ids, version: func() string { return "" },
		prepare: func(b []byte, _ *wire.Message) []byte { return b }}
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
	var line []byte
	skipping := false
	var scan wire.IDScan // an oversized line's id, read as it streams past
	for {
		chunk, err := br.ReadSlice('\n')
		if !skipping && len(line)+len(chunk) > d.maxLine+1 { // +1: the newline
			skipping, scan = true, wire.IDScan{}
			scan.Feed(line)
			line = line[:0]
		}
		if skipping {
			scan.Feed(chunk)
		} else {
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if skipping {
			if werr := d.writeLine(wire.TooLongFor(d.maxLine, scan.ID())); werr != nil {
				return werr
			}
		} else if len(line) > 0 {
			if werr := d.pass(pw, line); werr != nil {
				return werr
			}
		}
		line, skipping = line[:0], false
		if err != nil {
			if errors.Is(err, io.EOF) {
				d.waitIdle()
				return io.EOF
			}
			return err
		}
	}
}

// pass forwards one line, tracking its id, unless it is blank, a batch or
// intercepted.
func (d *frontDesk) pass(pw io.Writer, line []byte) error {
	body := bytes.TrimSpace(line)
	if len(body) == 0 {
		return nil
	}
	if body[0] == '[' {
		return d.passBatch(pw, body)
	}
	if resp, bad := wire.ShapeRefusal(body); bad {
		return d.writeLine(resp)
	}
	var m wire.Message
	if body[0] != '{' || json.Unmarshal(body, &m) != nil {
		return d.forward(pw, body) // mcp-go answers what is not a message
	}
	if resp, handled := d.admit(body, &m); handled {
		return d.writeLine(resp)
	}
	out, _ := d.ids.Inbound(d.prepare(body, &m), &m, nil)
	return d.forward(pw, out)
}

// admit lets intercept answer a request itself.
func (d *frontDesk) admit(body []byte, m *wire.Message) ([]byte, bool) {
	if d.intercept == nil || !m.IsRequest() {
		return nil, false
	}
	return d.intercept(body, m.ID, m.Method)
}

func (d *frontDesk) forward(pw io.Writer, body []byte) error {
	_, err := pw.Write(append(body, '\n'))
	return err
}

// passBatch answers a JSON array per the negotiated version: refused, or
// passed element by element with the replies gathered into one array.
func (d *frontDesk) passBatch(pw io.Writer, body []byte) error {
	var elems []json.RawMessage
	if json.Unmarshal(body, &elems) != nil {
		return d.forward(pw, body) // not JSON: mcp-go's parse error
	}
	if v := d.version(); !wire.BatchesAllowed(v) {
		return d.writeLine(wire.BatchRefusal(v))
	}
	if len(elems) == 0 {
		return d.writeLine(wire.Error(json.RawMessage("null"), mcp.INVALID_REQUEST, "empty batch: a batch holds at least one message"))
	}
	b := &wire.Batch{}
	msgs := make([]*wire.Message, len(elems))
	for i, e := range elems {
		var m wire.Message
		if t := bytes.TrimSpace(e); len(t) == 0 || t[0] != '{' || json.Unmarshal(t, &m) != nil || m.Method == "" {
			b.Reply(wire.Error(json.RawMessage("null"), mcp.INVALID_REQUEST, "invalid request in batch: each element must be a JSON-RPC request or notification object"))
			continue
		}
		if resp, bad := wire.ShapeRefusal(e); bad {
			b.Reply(resp)
			continue
		}
		msgs[i] = &m
		if m.IsRequest() {
			b.Expect()
		}
	}
	if b.Waiting() == 0 {
		for i, m := range msgs {
			if m != nil {
				if err := d.forward(pw, bytes.TrimSpace(elems[i])); err != nil {
					return err
				}
			}
		}
		if out := b.Encode(); out != nil {
			return d.writeLine(out)
		}
		return nil
	}
	for i, m := range msgs {
		if m == nil {
			continue
		}
		e := bytes.TrimSpace(elems[i])
		if resp, handled := d.admit(e, m); handled {
			if b.Add(resp) {
				return d.writeLine(b.Encode())
			}
			continue
		}
		out, _ := d.ids.Inbound(d.prepare(e, m), m, b)
		if err := d.forward(pw, out); err != nil {
			return err
		}
	}
	return nil
}

// waitIdle blocks until every passed request is answered, or drain passes.
func (d *frontDesk) waitIdle() {
	select {
	case <-d.ids.Idle():
	case <-time.After(d.drain):
	}
}

// writer returns the stream mcp-go writes to: it restores ids, drops what
// must not be sent and completes batches.
func (d *frontDesk) writer() io.Writer { return deskWriter{d} }

type deskWriter struct{ d *frontDesk }

// Write receives exactly one JSON-RPC message per call from mcp-go.
func (w deskWriter) Write(p []byte) (int, error) {
	out, drop, done := w.d.ids.Outbound(w.d.ids.RestoreSubscriptionID(p))
	if done != nil {
		if b := done.Encode(); b != nil {
			if err := w.d.writeLine(b); err != nil {
				return 0, err
			}
		}
	}
	if drop {
		return len(p), nil
	}
	w.d.outMu.Lock()
	defer w.d.outMu.Unlock()
	if _, err := w.d.out.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// writeLine writes a response the desk produced itself.
func (d *frontDesk) writeLine(b []byte) error {
	d.outMu.Lock()
	defer d.outMu.Unlock()
	_, err := d.out.Write(append(b, '\n'))
	return err
}
