package ta

import (
	"math"
	"testing"
)

// TestExpOverflowLikeC: exp, cosh and sinh are finite (and equal to the C
// library's within 1e-15 relative) up to where the C library's are, and
// infinite where it is. The values are glibc 2.36's exp, cosh and sinh
// (the libm TA-Lib C's EXP, COSH and SINH call), printed with %.17g.
func TestExpOverflowLikeC(t *testing.T) {
	inf := math.Inf(1)
	cases := []struct{ x, exp, cosh, sinh float64 }{
		{-745.1, 4.9406564584124654e-324, inf, -inf},
		{-740, 4.1995579896505956e-322, inf, -inf},
		{-709.5, 7.380148314012582e-309, 6.7749315965731642e+307, -6.7749315965731642e+307},
		{-20.5, 1.2501528663867426e-09, 399951088.73775268, -399951088.73775268},
		{0.5, 1.6487212707001282, 1.1276259652063807, 0.52109530549374738},
		{21.5, 2174359553.5764885, 1087179776.7882442, 1087179776.7882442},
		{709.43, 1.2633808701860083e+308, 6.3169043509300415e+307, 6.3169043509300415e+307},
		{709.44, 1.2760780590224528e+308, 6.380390295112264e+307, 6.380390295112264e+307},
		{709.6, 1.4974914744969295e+308, 7.4874573724846473e+307, 7.4874573724846473e+307},
		{709.78, 1.7928227943945155e+308, 8.9641139719725777e+307, 8.9641139719725777e+307},
		{709.79, inf, 9.0542048151523451e+307, 9.0542048151523451e+307},
		{710.2, inf, 1.3643036845527107e+308, 1.3643036845527107e+308},
		{710.47, inf, 1.787189326768405e+308, 1.787189326768405e+308},
		{710.48, inf, inf, inf},
	}
	for _, c := range cases {
		for _, f := range []struct {
			name string
			want float64
		}{{"exp", c.exp}, {"cosh", c.cosh}, {"sinh", c.sinh}} {
			e, _ := Builtin().Lookup(f.name)
			res, err := Compute(e, [][]float64{{c.x}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := res.Outputs[0][0]
			ok := got == f.want
			if !math.IsInf(f.want, 0) && f.want != 0 {
				ok = math.Abs(got-f.want) <= 1e-15*math.Abs(f.want)
			}
			if !ok {
				t.Errorf("%s(%v) = %v, the C library's %v", f.name, c.x, got, f.want)
			}
		}
	}
}
