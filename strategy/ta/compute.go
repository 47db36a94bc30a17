package ta

import (
	"fmt"
	"math"
)

// Result is the output of one computation: one column per Entry.Outputs,
// each as long as the inputs, NaN where there is no value. Start is the
// first position at which the outputs have values (the inputs' first
// common valid position plus the function's lookback); it equals the input
// length when there are none.
type Result struct {
	Outputs [][]float64
	Start   int
}

// Compute runs e over inputs (one column per e.Inputs, all the same
// length) with parameters p (one value per e.Params). Leading NaNs of the
// inputs are stripped before the function runs and the outputs re-aligned,
// so chained indicators start where their inputs do. Inputs too short for
// the function give all-NaN outputs, never a panic.
func Compute(e *Entry, inputs [][]float64, p []float64) (res Result, err error) {
	if len(inputs) != len(e.Inputs) {
		return Result{}, &Error{Func: e.Name, Msg: fmt.Sprintf("takes %d input series, got %d", len(e.Inputs), len(inputs))}
	}
	if err := e.CheckParams(p); err != nil {
		return Result{}, err
	}
	n := 0
	if len(inputs) > 0 {
		n = len(inputs[0])
	}
	for i, in := range inputs {
		if len(in) != n {
			return Result{}, &Error{Func: e.Name, Msg: fmt.Sprintf("input %s has %d values, %s has %d; inputs must come from the same bars", e.Inputs[i], len(in), e.Inputs[0], n)}
		}
	}
	defer func() {
		if r := recover(); r != nil {
			res, err = Result{}, &Error{Func: e.Name, Msg: fmt.Sprintf("cannot be computed on this input (%v)", r)}
		}
	}()
	if e.raw {
		outs := e.compute(inputs, p)
		return Result{Outputs: outs, Start: firstValid(outs, n)}, nil
	}
	w := commonStart(inputs)
	lb := e.lookback(p)
	outs := make([][]float64, len(e.Outputs))
	if n-w <= lb {
		for j := range outs {
			outs[j] = nanSlice(n)
		}
		return Result{Outputs: outs, Start: n}, nil
	}
	stripped, off := inputs, w
	if e.aligned {
		off = 0 // computed on the whole inputs; the warm-up is marked below
	}
	if off > 0 {
		stripped = make([][]float64, len(inputs))
		for i, in := range inputs {
			stripped[i] = in[w:]
		}
	}
	got := e.compute(stripped, p)
	if len(got) != len(outs) {
		return Result{}, &Error{Func: e.Name, Msg: fmt.Sprintf("internal error: %d outputs, want %d", len(got), len(outs))}
	}
	start := w + lb
	for j, col := range got {
		if len(col) != n-off {
			return Result{}, &Error{Func: e.Name, Msg: fmt.Sprintf("internal error: output has %d values, want %d", len(col), n-off)}
		}
		var out []float64
		if off == 0 {
			// col is this call's own output, aligned with the bars: mark the
			// warm-up missing in place instead of copying a million values.
			out = col
			for i := 0; i < start; i++ {
				out[i] = math.NaN()
			}
		} else {
			out = make([]float64, n)
			for i := 0; i < start; i++ {
				out[i] = math.NaN()
			}
			copy(out[start:], col[lb:])
		}
		if e.index[j] && off > 0 {
			for i := start; i < n; i++ {
				out[i] += float64(w)
			}
		}
		outs[j] = out
	}
	return Result{Outputs: outs, Start: start}, nil
}

// commonStart is the first position at which every input has a value.
func commonStart(inputs [][]float64) int {
	w := 0
	for _, in := range inputs {
		i := 0
		for i < len(in) && math.IsNaN(in[i]) {
			i++
		}
		if i > w {
			w = i
		}
	}
	return w
}

func firstValid(outs [][]float64, n int) int {
	start := n
	for _, col := range outs {
		for i, v := range col {
			if !math.IsNaN(v) {
				if i < start {
					start = i
				}
				break
			}
		}
	}
	return start
}

func nanSlice(n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = math.NaN()
	}
	return s
}
