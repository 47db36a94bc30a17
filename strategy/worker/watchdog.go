package worker

import (
	"os"
	"sync"
	"time"
)

// DefaultWatchEvery is how often WatchMemory reads a worker's resident
// memory when no interval is given.
const DefaultWatchEvery = 100 * time.Millisecond

// WatchMemory is the memory limit's second line of defence, for where
// RLIMIT_AS does not hold (macOS accepts it and ignores it): every interval
// (DefaultWatchEvery when 0) it reads p's resident memory and, once that is
// above limit bytes, kills p and calls over once with the reading. stop
// ends the watch; call it when p has exited (it waits for the watcher, so
// over is never called after stop returns).
//
// On Linux the reading is /proc/PID/statm (one small file read); elsewhere
// on Unix `ps -o rss=` (a process start per reading). Where neither exists
// (Windows) the watch ends at the first failed reading and reports nothing:
// docs/security.md says what holds on which platform.
func WatchMemory(p *os.Process, limit uint64, every time.Duration, over func(rss uint64)) (stop func()) {
	if every <= 0 {
		every = DefaultWatchEvery
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			rss, err := residentBytes(p.Pid)
			if err != nil {
				return // exited, or no way to read it here
			}
			if rss > limit {
				p.Kill() //nolint:errcheck // it may have exited meanwhile
				over(rss)
				return
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		wg.Wait()
	}
}
