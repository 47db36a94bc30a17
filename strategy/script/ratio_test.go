package script

import (
	"fmt"
	"testing"
)

// reportRatio prints a `ratio NAME: Xx` line, which `make bench` collects.
// With b.Loop the benchmark body runs once per count, so this prints once.
func reportRatio(b *testing.B, name string, x float64) {
	b.Helper()
	b.ReportMetric(x, "ratio")
	fmt.Printf("ratio %s: %.2fx\n", name, x)
}
