//go:build !race

package ta

// raceEnabled: the tests run under the race detector.
const raceEnabled = false
