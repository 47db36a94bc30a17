//go:build !unix

package worker

import (
	"errors"
	"os"
)

func protectStdout() (*os.File, error) { return os.Stdout, nil }

func applyLimits(Limits) (Hello, error) {
	return Hello{}, errors.New("strategy workers need a Unix system to limit their memory (RLIMIT_AS)")
}

func cpuSeconds() float64 { return 0 }

func exitedOnCPU(*os.ProcessState) bool { return false }
