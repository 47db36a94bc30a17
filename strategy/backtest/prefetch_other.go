//go:build !amd64 && !arm64

package backtest

// prefetch is a hint this architecture's build does not give.
func prefetch(p *float64) {}
