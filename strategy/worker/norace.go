//go:build !race

package worker

const raceFactor = 1
