package agent_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"wicket/node/nodetest"
)

// BenchmarkToolsCallLatency measures tools/call round trips over stdio
// through the real binary, for list_templates and node_snapshot, with
// tracing on and off, reporting p50 and p99 in microseconds. "wire" writes
// JSON-RPC lines and reads the response line (the server's own latency);
// "mcp-go" goes through mcp-go's client, which adds its own decoding and
// goroutine hand-offs.
func BenchmarkToolsCallLatency(b *testing.B) {
	n := nodetest.NewServer(b)
	for _, tool := range []string{"list_templates", "node_snapshot"} {
		for _, traced := range []bool{false, true} {
			args := func(b *testing.B) []string {
				if traced {
					return []string{"--node", n.Addr, "--trace-dir", filepath.Join(b.TempDir(), "trace")}
				}
				return []string{"--node", n.Addr}
			}
			name := fmt.Sprintf("%s/trace=%v", tool, traced)
			b.Run(name+"/wire", func(b *testing.B) {
				w := startWire(b, nodeEnv(n), args(b)...)
				lat := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					start := time.Now()
					w.roundTrip(b, i+1, tool)
					lat = append(lat, time.Since(start))
				}
				b.StopTimer()
				p50 := reportPercentiles(b, lat)
				if tool == "list_templates" && traced {
					wireP50ListTemplates = p50
				}
			})
			b.Run(name+"/mcp-go", func(b *testing.B) {
				s := startMCP(b, nodeEnv(n), "", args(b)...)
				lat := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					start := time.Now()
					res := s.call(b, tool, `{}`)
					lat = append(lat, time.Since(start))
					if res.IsError {
						b.Fatalf("%s: %s", tool, text(res))
					}
				}
				b.StopTimer()
				reportPercentiles(b, lat)
			})
		}
	}
}

// wireP50ListTemplates is the last measured p50 of list_templates with
// tracing on, printed as a ratio line after the benchmarks (make bench).
var wireP50ListTemplates time.Duration

func reportPercentiles(b *testing.B, lat []time.Duration) time.Duration {
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	p50 := lat[len(lat)/2]
	b.ReportMetric(float64(p50.Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	return p50
}

// wire is `wicket mcp` driven with raw JSON-RPC lines.
type wire struct {
	in  io.WriteCloser
	out *bufio.Reader
}

func startWire(b *testing.B, env []string, args ...string) *wire {
	b.Helper()
	cmd := exec.Command(wicketBin, append([]string{"mcp"}, args...)...)
	cmd.Env = append(append(os.Environ(), cleanEnv...), env...)
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { in.Close(); _ = cmd.Wait() })
	w := &wire{in: in, out: bufio.NewReaderSize(out, 1<<20)}
	if _, err := io.WriteString(in, initLine); err != nil {
		b.Fatal(err)
	}
	if _, err := w.out.ReadString('\n'); err != nil {
		b.Fatal(err)
	}
	return w
}

func (w *wire) roundTrip(b *testing.B, id int, tool string) {
	if _, err := io.WriteString(w.in, toolsCall(id, tool)); err != nil {
		b.Fatal(err)
	}
	line, err := w.out.ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	if !strings.Contains(line, `"result"`) || strings.Contains(line, `"isError":true`) {
		b.Fatalf("%s failed: %.300s", tool, line)
	}
}

// BenchmarkHTTP measures the Streamable HTTP server beside stdio, both
// traced: tools/call p50/p99 for a small tool (list_indicators without
// arguments) and list_templates, as raw JSON-RPC over one keep-alive
// connection and over one stdio pipe; and sessions/s for initialize (and
// DELETE) over HTTP.
func BenchmarkHTTP(b *testing.B) {
	proj := ""
	for _, tool := range []string{"list_indicators", "list_templates"} {
		b.Run(tool+"/stdio", func(b *testing.B) {
			w := startWire(b, nil, "--trace-dir", filepath.Join(b.TempDir(), "trace"))
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				w.roundTrip(b, i+1, tool)
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			p50 := reportPercentiles(b, lat)
			if tool == "list_templates" {
				stdioP50ListTemplates = p50
			}
		})
		b.Run(tool+"/http", func(b *testing.B) {
			if proj == "" {
				proj = benchProject(b)
			}
			h := startHTTP(b, nil, proj, "--no-auth", "--trace-dir", filepath.Join(b.TempDir(), "trace"))
			c := &http.Client{}
			sid := h.post(b, c, "", initLine)
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				h.post(b, c, sid, toolsCall(i+1, tool))
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			p50 := reportPercentiles(b, lat)
			if tool == "list_templates" {
				httpP50ListTemplates = p50
			}
		})
	}
	b.Run("initialize/http", func(b *testing.B) {
		if proj == "" {
			proj = benchProject(b)
		}
		h := startHTTP(b, nil, proj, "--no-auth")
		c := &http.Client{}
		b.ResetTimer()
		start := time.Now()
		for i := 0; i < b.N; i++ {
			sid := h.post(b, c, "", initLine)
			req, _ := http.NewRequest(http.MethodDelete, h.url, nil)
			req.Header.Set("Mcp-Session-Id", sid)
			res, err := c.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "sessions/s")
	})
}

var stdioP50ListTemplates, httpP50ListTemplates time.Duration

// benchProject is a project for the HTTP benchmarks (the server runs in one).
func benchProject(b *testing.B) string {
	dir := filepath.Join(b.TempDir(), "proj")
	cmd := exec.Command(wicketBin, "init", dir)
	cmd.Env = append(os.Environ(), cleanEnv...)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("init: %v\n%s", err, out)
	}
	return dir
}

// post sends one JSON-RPC message and returns the session id the server
// answered with (or sid); a response without a result fails.
func (h *httpServer) post(b *testing.B, c *http.Client, sid, msg string) string {
	req, _ := http.NewRequest(http.MethodPost, h.url, strings.NewReader(msg))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	res, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), `"result"`) || strings.Contains(string(body), `"isError":true`) {
		b.Fatalf("POST %.100s: %d %.300s", msg, res.StatusCode, body)
	}
	if id := res.Header.Get("Mcp-Session-Id"); id != "" {
		return id
	}
	return sid
}
