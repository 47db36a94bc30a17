//go:build amd64 && !purego

package research

import (
	"math"

	"golang.org/x/sys/cpu"
)

// wideKernels says columnWide and countWide may run: the processor has
// AVX2 and the system saves its registers. A variable, so that a test can
// set the two paths side by side.
var wideKernels = cpu.X86.HasAVX2

// columnWide is columnScores' loop over len(dst) rows, a multiple of 4,
// four at a time (pbo_wide_amd64.s), with returns returns: it writes the
// scores and returns the first row of the highest score above -Inf, or
// -1 when there is none.
func columnWide(dst, loS, hiS, loQ, hiQ []float64, returns float64) (int, float64) {
	var best [4]float64 // each lane's highest score, rows i ≡ lane mod 4
	var at [4]int64     // and the first row that has it; -1 for none
	columnAVX2(&dst[0], &loS[0], &hiS[0], &loQ[0], &hiQ[0], len(dst), returns, srFloor, &best, &at)
	row, top := -1, math.Inf(-1)
	for l := range best {
		if at[l] >= 0 && (best[l] > top || best[l] == top && int(at[l]) < row) {
			row, top = int(at[l]), best[l]
		}
	}
	return row, top
}

// countWide is count's loop over len(in) rows, a multiple of 4, four at
// a time.
func countWide(in, out []float64, wj, wc float64) (ltj, eqj, ltc, eqc int) {
	var c [4][4]int64 // per lane: out below wj, level with it; in below wc, level with it
	countAVX2(&in[0], &out[0], len(in), wj, wc, &c)
	for l := range 4 {
		ltj += int(c[0][l])
		eqj += int(c[1][l])
		ltc += int(c[2][l])
		eqc += int(c[3][l])
	}
	return ltj, eqj, ltc, eqc
}

//go:noescape
func columnAVX2(dst, loS, hiS, loQ, hiQ *float64, n int, returns, floor float64, best *[4]float64, at *[4]int64)

//go:noescape
func countAVX2(in, out *float64, n int, wj, wc float64, c *[4][4]int64)
