//go:build amd64 && !purego

package ta

import "golang.org/x/sys/cpu"

// wideCross says crossBothAVX2 may run: the processor has AVX2 and the
// system saves its registers. A variable, so that a test can run the
// wide and the scalar path side by side.
var wideCross = cpu.X86.HasAVX2

// crossBothWide writes above[i] and below[i] for the bars i = 1 .. m
// (m a multiple of 4, m < len(a)) four at a time with AVX2
// (crossflags_amd64.s): the flags CrossFlagsBoth's loop sets there, each
// byte written whether or not it is a cross, and returns m. It returns 0,
// having written nothing, where AVX2 is not there or there are fewer than
// 4 bars after the first.
func crossBothWide(above, below []bool, a, b []float64) (m int) {
	m = (len(a) - 1) &^ 3
	if !wideCross || m <= 0 {
		return 0
	}
	_, _, _ = above[m], below[m], b[m] // the kernel reads and writes bars 0 .. m
	crossBothAVX2(&above[1], &below[1], &a[1], &b[1], m)
	return m
}

// crossBothAVX2 is crossBothWide's loop over bars 1 .. m, with above, below,
// a and b pointing at bar 1 (it reads a and b at bar 0 too).
//
//go:noescape
func crossBothAVX2(above, below *bool, a, b *float64, m int)

// wideCrossFound is what the processor offers, whatever a test set
// wideCross to.
var wideCrossFound = wideCross
