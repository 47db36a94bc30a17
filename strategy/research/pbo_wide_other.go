//go:build !amd64 || purego

package research

// wideKernels is false where there is no AVX2 kernel: columnScores and
// count run their scalar loops.
var wideKernels = false

func columnWide(dst, loS, hiS, loQ, hiQ []float64, returns float64) (int, float64) {
	panic("research: no wide PBO kernel on this architecture")
}

func countWide(in, out []float64, wj, wc float64) (ltj, eqj, ltc, eqc int) {
	panic("research: no wide PBO kernel on this architecture")
}
