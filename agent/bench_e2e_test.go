package agent_test

import (
	"bufio"
	"fmt"
	"io"
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
