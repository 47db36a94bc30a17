package worker

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestWatchdogKillsOverLimit runs a process that turns RLIMIT_AS off (as
// macOS in effect does) and then grows its resident memory step by step:
// the watchdog alone stops it, with SIGKILL, once it is over the limit.
func TestWatchdogKillsOverLimit(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperMemoryHog$")
	cmd.Env = append(os.Environ(), "WICKET_TEST_MEMORY_HOG=1")
	var stdout strings.Builder
	cmd.Stdout = &stdout
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	const limit = 96 << 20
	got := make(chan uint64, 1)
	stop := WatchMemory(cmd.Process, limit, 10*time.Millisecond, func(rss uint64) { got <- rss })
	err := cmd.Wait()
	stop()
	var rss uint64
	select {
	case rss = <-got:
	default:
		t.Fatalf("the watchdog did not fire; the process ended with %v: %s", err, stdout.String())
	}
	if rss <= limit {
		t.Errorf("fired at %d bytes, under the limit %d", rss, limit)
	}
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("the process ended with %v, want SIGKILL", cmd.ProcessState)
	}
	if !strings.Contains(stdout.String(), "rlimit off") || strings.Contains(stdout.String(), "grew to the end") {
		t.Errorf("the hog's output %q: want it started without RLIMIT_AS and stopped before it finished", stdout.String())
	}
}

// TestWatchdogQuietUnderLimit: a process under its limit is left alone,
// and stop ends the watch.
func TestWatchdogQuietUnderLimit(t *testing.T) {
	cmd := exec.Command("sleep", "0.3")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	fired := false
	stop := WatchMemory(cmd.Process, 1<<40, 10*time.Millisecond, func(uint64) { fired = true })
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	stop()
	stop() // a second stop is harmless
	if fired {
		t.Error("the watchdog fired for a process under its limit")
	}
}

// TestResidentReadings: /proc and ps agree on this process to within a
// margin (they sample at different moments), so the fallback reads what
// the Linux path does.
func TestResidentReadings(t *testing.T) {
	proc, err := residentBytes(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("ps"); err != nil {
		t.Skip("no ps here")
	}
	ps, err := residentPS(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if proc == 0 || ps < proc/2 || ps > proc*2 {
		t.Errorf("resident: /proc says %d, ps says %d", proc, ps)
	}
	if _, err := residentBytes(1 << 30); err == nil {
		t.Error("a reading for a pid that does not exist")
	}
}

// TestHelperMemoryHog is the process of TestWatchdogKillsOverLimit.
func TestHelperMemoryHog(t *testing.T) {
	if os.Getenv("WICKET_TEST_MEMORY_HOG") == "" {
		t.Skip("helper process for TestWatchdogKillsOverLimit")
	}
	inf := &unix.Rlimit{Cur: unix.RLIM_INFINITY, Max: unix.RLIM_INFINITY}
	if err := unix.Setrlimit(unix.RLIMIT_AS, inf); err != nil {
		t.Fatal(err)
	}
	fmt.Println("rlimit off")
	var keep [][]byte
	for range 64 { // up to 1 GiB, 16 MiB at a time, every page touched
		b := make([]byte, 16<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		keep = append(keep, b)
		time.Sleep(20 * time.Millisecond)
	}
	fmt.Println("grew to the end", len(keep))
}
