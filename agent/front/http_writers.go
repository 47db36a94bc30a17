package front

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"time"
	"wicket/agent/wire"

	"github.com/mark3labs/mcp-go/mcp"
)

// idWriter restores the original request id in the response mcp-go
// writes (one Write per JSON body or SSE event), and drops the response of
// a cancelled request.
type idWriter struct {
	http.ResponseWriter
	ids *wire.IDs
	sur string
}

// WriteHeader turns the 200 of a plain JSON response to a request the
// client has cancelled into an SSE stream that ends without an event: the
// request gets no response (as MCP says), and the POST of a request still
// ends as Streamable HTTP allows one to (a stream or a JSON body; 202 is
// only for a POST of notifications and responses).
func (w *idWriter) WriteHeader(code int) {
	if w.sur != "" && code == http.StatusOK && strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") && w.ids.IsCancelled(w.sur) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Del("Content-Length")
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *idWriter) Write(p []byte) (int, error) {
	if w.sur == "" {
		return w.ResponseWriter.Write(p)
	}
	out, drop, _ := w.ids.Outbound(w.ids.RestoreSubscriptionID(p))
	if drop {
		return len(p), nil
	}
	if _, err := w.ResponseWriter.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w *idWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *idWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// bodyRecorder captures one batch element's response.
type bodyRecorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *bodyRecorder) Header() http.Header { return r.header }

func (r *bodyRecorder) WriteHeader(code int) { r.status = code }

func (r *bodyRecorder) Write(p []byte) (int, error) { return r.body.Write(p) }

func (r *bodyRecorder) Flush() {}

// responses are the JSON-RPC responses in the recorded body (JSON, or the
// data of SSE events; notifications are left out).
func (r *bodyRecorder) responses() [][]byte {
	body := bytes.TrimSpace(r.body.Bytes())
	if len(body) == 0 {
		return nil
	}
	var msgs [][]byte
	if strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		for sc.Scan() {
			if data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: ")); ok {
				msgs = append(msgs, append([]byte(nil), data...))
			}
		}
	} else {
		msgs = [][]byte{body}
	}
	var out [][]byte
	for _, m := range msgs {
		var env struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(m, &env) == nil && env.Method == "" && len(env.ID) > 0 {
			out = append(out, m)
		}
	}
	return out
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// httpError answers a transport-level refusal as a JSON-RPC error body.
func httpError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, wire.Error(json.RawMessage("null"), mcp.INVALID_REQUEST, msg))
}

// closeAfter ends the connection after this response: a refused request's
// body is never read. net/http would otherwise read what is left of it
// (however slowly it comes) before sending the response and again when the
// request ends; the expired read deadline makes those reads fail at once.
func closeAfter(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
}
