package research

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestWideKernelsMatchScalar: where the AVX2 kernels run, columnScores
// writes the scalar loop's scores to the bit and picks the same row, and
// count counts the same, over random rows and awkward ones: equal rows
// (a tie goes to the first), undefined rows (no variance: -Inf), zeros,
// negative sums, huge and tiny magnitudes, row counts that are not a
// multiple of four, and floors above and below every score.
func TestWideKernelsMatchScalar(t *testing.T) {
	if !wideKernels {
		t.Skip("no wide kernels on this processor")
	}
	defer func(w bool) { wideKernels = w }(wideKernels)
	rng := rand.New(rand.NewPCG(9, 10))
	value := func() float64 {
		switch rng.IntN(10) {
		case 0:
			return 0
		case 1:
			return math.Copysign(0, -1)
		case 2:
			return rng.NormFloat64() * 1e150
		case 3:
			return rng.NormFloat64() * 1e-150
		}
		return rng.NormFloat64()
	}
	for trial := range 2000 {
		rows := 1 + rng.IntN(40)
		n := []int{0, 1, 2, 3, 8, 1096, 8772}[rng.IntN(7)]
		loS, hiS, loQ, hiQ := make([]float64, rows), make([]float64, rows), make([]float64, rows), make([]float64, rows)
		for i := range rows {
			switch {
			case i > 0 && rng.IntN(5) == 0: // a copy of an earlier row
				j := rng.IntN(i)
				loS[i], hiS[i], loQ[i], hiQ[i] = loS[j], hiS[j], loQ[j], hiQ[j]
			case rng.IntN(6) == 0: // no variance: every return the same
				x := value()
				loS[i], hiS[i] = x*float64(n)/2, x*float64(n)/2
				loQ[i], hiQ[i] = x*x*float64(n)/2, x*x*float64(n)/2
			default:
				loS[i], hiS[i] = value(), value()
				loQ[i], hiQ[i] = math.Abs(value()), math.Abs(value())
			}
		}
		floor := []float64{math.Inf(-1), 0, value(), math.Inf(1)}[rng.IntN(4)]
		wide, narrow := make([]float64, rows), make([]float64, rows)
		wideKernels = true
		iw, vw := columnScores(wide, loS, hiS, loQ, hiQ, n, floor)
		wideKernels = false
		in, vn := columnScores(narrow, loS, hiS, loQ, hiQ, n, floor)
		for i := range rows {
			if math.Float64bits(wide[i]) != math.Float64bits(narrow[i]) {
				t.Fatalf("trial %d, row %d of %d: wide %v, scalar %v", trial, i, rows, wide[i], narrow[i])
			}
		}
		if iw != in || math.Float64bits(vw) != math.Float64bits(vn) {
			t.Fatalf("trial %d: wide picks row %d (%v), scalar %d (%v)", trial, iw, vw, in, vn)
		}
		p := pairColumns{in: narrow, out: append([]float64(nil), narrow...)}
		rng.Shuffle(rows, func(i, j int) { p.out[i], p.out[j] = p.out[j], p.out[i] })
		for _, w := range [][2]float64{{narrow[rng.IntN(rows)], narrow[rng.IntN(rows)]}, {math.NaN(), math.Inf(-1)}, {value(), 0}} {
			wideKernels = true
			a1, b1, c1, d1 := p.count(w[0], w[1])
			wideKernels = false
			a2, b2, c2, d2 := p.count(w[0], w[1])
			if a1 != a2 || b1 != b2 || c1 != c2 || d1 != d2 {
				t.Fatalf("trial %d: wide counts %d %d %d %d, scalar %d %d %d %d", trial, a1, b1, c1, d1, a2, b2, c2, d2)
			}
		}
	}
}

// TestCSCVWideMatchesScalar: the PBO and its logits are the same with
// and without the wide kernels, for a sweep-sized set of combinations.
func TestCSCVWideMatchesScalar(t *testing.T) {
	if !wideKernels {
		t.Skip("no wide kernels on this processor")
	}
	defer func(w bool) { wideKernels = w }(wideKernels)
	rng := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{2, 17, 103} {
		blocks := make([][]blockStat, n)
		for i := range blocks {
			r := make([]float64, 16*50+3)
			for j := range r {
				r[j] = rng.NormFloat64()*0.01 + float64(i%5)*1e-4
			}
			blocks[i] = blockStats(r, PBOBlocks)
			if i%9 == 4 {
				blocks[i] = blocks[i-1] // equal rows
			}
		}
		wideKernels = true
		pw, lw := cscv(blocks, PBOBlocks)
		lw = append([]float64(nil), lw...)
		wideKernels = false
		pn, ln := cscv(blocks, PBOBlocks)
		if pw != pn || len(lw) != len(ln) {
			t.Fatalf("%d combinations: PBO %v over %d splits wide, %v over %d scalar", n, pw, len(lw), pn, len(ln))
		}
		for i := range lw {
			if lw[i] != ln[i] {
				t.Fatalf("%d combinations: logit %d is %v wide, %v scalar", n, i, lw[i], ln[i])
			}
		}
	}
}
