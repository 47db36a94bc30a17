package agent_test

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkHTTP2026 measures protocol 2026-07-28 over HTTP through the
// real binary: tools/call p50/p99 (compare BenchmarkHTTP's legacy-session
// figures and stdio), and server/discover followed by one call, per second
// (a stateless client's whole exchange).
func BenchmarkHTTP2026(b *testing.B) {
	proj := benchProject(b)
	h := startHTTP(b, nil, proj, "--no-auth", "--trace-dir", filepath.Join(b.TempDir(), "trace"))
	c := &http.Client{}
	call := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"list_templates","arguments":{},%s}}`, id, modernMeta)
	}
	discover := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"server/discover","params":{%s}}`, id, modernMeta)
	}
	b.Run("list_templates/http-2026", func(b *testing.B) {
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			start := time.Now()
			h.postModern(b, c, call(i+1))
			lat = append(lat, time.Since(start))
		}
		b.StopTimer()
		reportPercentiles(b, lat)
	})
	b.Run("discover+call/http-2026", func(b *testing.B) {
		b.ResetTimer()
		start := time.Now()
		for i := 0; i < b.N; i++ {
			h.postModern(b, c, discover(2*i+1))
			h.postModern(b, c, call(2*i+2))
		}
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "exchanges/s")
	})
}

// postModern sends one 2026-07-28 request with its headers; a response
// without a result, or with a session id, fails.
func (h *httpServer) postModern(b *testing.B, c *http.Client, msg string) {
	req, _ := http.NewRequest(http.MethodPost, h.url, strings.NewReader(msg))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	modernHeaders(req.Header, msg)
	res, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), `"result"`) || strings.Contains(string(body), `"isError":true`) || res.Header.Get("Mcp-Session-Id") != "" {
		b.Fatalf("POST %.100s: %d %.300s", msg, res.StatusCode, body)
	}
}
