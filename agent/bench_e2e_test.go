package agent_test

import (
	"fmt"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"wicket/node/nodetest"
)

// BenchmarkToolsCallLatency measures tools/call round trips over stdio
// through the real binary, reporting p50 and p99 in microseconds, for
// list_templates and node_snapshot, with tracing on and off.
func BenchmarkToolsCallLatency(b *testing.B) {
	n := nodetest.NewServer(b)
	for _, tool := range []string{"list_templates", "node_snapshot"} {
		for _, traced := range []bool{false, true} {
			name := fmt.Sprintf("%s/trace=%v", tool, traced)
			b.Run(name, func(b *testing.B) {
				args := []string{"--node", n.Addr}
				if traced {
					args = append(args, "--trace-dir", filepath.Join(b.TempDir(), "trace"))
				}
				s := startMCP(b, nodeEnv(n), "", args...)
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
				sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			})
		}
	}
}
