//go:build amd64 || arm64

package backtest

// prefetch asks the processor to bring the cache line holding *p closer
// and returns at once (PREFETCHT0, PRFM PLDL1KEEP): a hint that never
// faults and changes no result. run uses it for the bars its tight loops
// skip, whose lines the hardware does not fetch ahead by itself.
//
//go:noescape
func prefetch(p *float64)
