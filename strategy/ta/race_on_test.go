//go:build race

package ta

// raceEnabled: the tests run under the race detector, which slows the
// arithmetic of a million-bar run some tenfold and checks nothing in it
// (Compute shares no memory between calls).
const raceEnabled = true
