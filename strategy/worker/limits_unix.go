//go:build unix

package worker

import (
	"bufio"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// exitCPU is the exit code of a worker that reached its CPU-time limit.
const exitCPU = 3

// protectStdout duplicates fd 1 for the protocol and points fd 1 at
// stderr, so a stray write to os.Stdout can never corrupt a frame.
func protectStdout() (*os.File, error) {
	fd, err := unix.Dup(1)
	if err != nil {
		return nil, fmt.Errorf("dup stdout: %w", err)
	}
	unix.CloseOnExec(fd)
	if err := unix.Dup2(2, 1); err != nil {
		return nil, fmt.Errorf("redirect stdout: %w", err)
	}
	return os.NewFile(uintptr(fd), "protocol"), nil
}

// applyLimits sets RLIMIT_AS to the address space in use now (the Go
// runtime's own reservations, about 1.3 GB on linux/amd64, more under the
// race detector) plus the strategy's allowance (times raceFactor) plus
// room for the stacks of the threads the runtime starts later, so the
// limit means memory the strategy may use; and it sets RLIMIT_CPU to the
// lifetime CPU budget, with SIGXCPU at the soft limit turned into a clean
// exit.
func applyLimits(l Limits) (Hello, error) {
	base, err := addressSpace()
	if err != nil {
		return Hello{}, err
	}
	as := base + uint64(l.MemoryMiB)<<20*raceFactor + threadRoom()
	if err := unix.Setrlimit(unix.RLIMIT_AS, &unix.Rlimit{Cur: as, Max: as}); err != nil {
		return Hello{}, fmt.Errorf("set RLIMIT_AS: %w", err)
	}
	cpu := uint64(l.CPUSeconds)
	if err := unix.Setrlimit(unix.RLIMIT_CPU, &unix.Rlimit{Cur: cpu, Max: cpu + 5}); err != nil {
		return Hello{}, fmt.Errorf("set RLIMIT_CPU: %w", err)
	}
	xcpu := make(chan os.Signal, 1)
	signal.Notify(xcpu, syscall.SIGXCPU)
	go func() {
		<-xcpu
		fmt.Fprintf(os.Stderr, "wicket worker: cpu time limit of %d s reached\n", l.CPUSeconds)
		os.Exit(exitCPU)
	}()
	return Hello{PID: os.Getpid(), MemoryBytes: as, CPUSeconds: cpu}, nil
}

// threadRoom is the address space later threads' stacks take: where the
// C library starts the runtime's threads (a binary with cgo, as the test
// binaries and a default build are), each reserves a stack of the
// RLIMIT_STACK size, 8 MiB by default, which a machine under load (more
// threads waiting in system calls) multiplies. It is address space, not
// memory: resident memory stays bounded by the pool's watchdog.
func threadRoom() uint64 {
	const threads = 16
	stack := uint64(8 << 20)
	var r unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_STACK, &r); err == nil && r.Cur != unix.RLIM_INFINITY && r.Cur > 0 && r.Cur < 64<<20 {
		stack = r.Cur
	}
	return threads * stack
}

// addressSpace is this process's current virtual memory size.
func addressSpace() (uint64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		// No procfs: fall back to the limit as given, on top of nothing.
		return 0, nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmSize:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("read VmSize: %w", err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("read VmSize: not found in /proc/self/status")
}

// cpuSeconds is this process's CPU time so far.
func cpuSeconds() float64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// exitedOnCPU reports whether a worker's exit status says it hit the CPU
// limit: our clean exit at the soft limit, or SIGXCPU.
func exitedOnCPU(ps *os.ProcessState) bool {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok {
		return false
	}
	return ws.Exited() && ws.ExitStatus() == exitCPU || ws.Signaled() && ws.Signal() == syscall.SIGXCPU
}
