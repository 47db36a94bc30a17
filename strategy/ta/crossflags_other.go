//go:build !amd64 || purego

package ta

// wideCross is false where there is no wide kernel.
var wideCross = false

// crossBothWide writes nothing where there is no wide kernel
// (crossflags_amd64.go): CrossFlagsBoth's scalar loop does every bar.
func crossBothWide(above, below []bool, a, b []float64) int { return 0 }

var wideCrossFound = false
