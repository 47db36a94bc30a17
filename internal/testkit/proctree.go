package testkit

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Descendants are the processes under pid (its children, theirs...),
// from Linux's /proc; none elsewhere.
func Descendants(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	children := map[int][]int{}
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		s := string(data)
		i := strings.LastIndexByte(s, ')') // the command may hold spaces and parentheses
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		child, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
		children[ppid] = append(children[ppid], child)
	}
	var out []int
	for queue := []int{pid}; len(queue) > 0; queue = queue[1:] {
		for _, c := range children[queue[0]] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// ThreadsCPU is the CPU time the threads of pids have run, from each
// thread's schedstat (Linux; 0 elsewhere): unlike getrusage, it counts
// processes still running.
func ThreadsCPU(pids ...int) time.Duration {
	var t time.Duration
	for _, p := range pids {
		paths, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", p))
		for _, path := range paths {
			data, err := os.ReadFile(path)
			if err != nil {
				continue
			}
			if f := strings.Fields(string(data)); len(f) > 0 {
				ns, _ := strconv.ParseInt(f[0], 10, 64)
				t += time.Duration(ns)
			}
		}
	}
	return t
}

// MachineBusy is the CPU time every core of the machine has spent busy
// since boot (/proc/stat; 0 elsewhere): less a benchmark's own CPU over
// the same span, what other work took from it meanwhile.
func MachineBusy() time.Duration {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	if len(f) < 2 {
		return 0
	}
	var busy int64
	for i, v := range f[1:] {
		n, _ := strconv.ParseInt(v, 10, 64)
		if i != 3 && i != 4 && i < 8 { // not idle or iowait; guest time is in user
			busy += n
		}
	}
	return time.Duration(busy) * time.Second / 100 // USER_HZ
}

// PeakRSS is the peak resident memory (VmHWM) of process pid ("self" for
// this one) in bytes; 0 without Linux's /proc.
func PeakRSS(pid string) uint64 { return procKB("/proc/"+pid+"/status", "VmHWM:") }

// PSS is the proportional set size of process pid now, in bytes: its
// resident memory with each page shared between processes (a binary's
// text, a shared file) split among them, which RSS counts in full in
// each (Linux's smaps_rollup; 0 without it).
func PSS(pid string) uint64 { return procKB("/proc/"+pid+"/smaps_rollup", "Pss:") }

// procKB reads the "kB" figure of the line starting with field in the
// proc file at path, in bytes (0 when it is not there).
func procKB(path, field string) uint64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
