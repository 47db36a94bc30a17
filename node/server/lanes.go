package server

import (
	"fmt"
	"sync"
)

// Each real venue has a lane: one goroutine that makes that venue's calls,
// one job at a time, in the order they were queued. A command to the venue,
// its reconciliations, its polls of working orders, its account reads
// after a fill and its stream's reports all go through its lane, so they
// stay in order with each other (the polls of marks and account, which
// change no order, run beside it: pollLoop). The fold never waits for a
// venue, so a slow venue holds up its own lane and nothing else.
//
// A lane job reads and changes the engine only in hops to the fold
// (onFold), and calls the venue between hops. Each hop commits the events
// it emits before it returns: the fold's other jobs run between hops.
//
// A lane never refuses a command silently: past MaxVenueQueue commands it
// says the venue is busy; and when the node stops, the commands not yet
// begun are dropped with their tickets told why (nothing was sent).

// MaxVenueQueue bounds the commands queued for one real venue, the one
// in flight included; past it a command is refused venue_busy, unsent.
// market_exit is never refused for it.
const MaxVenueQueue = 64

// maxVenueReports bounds the stream reports waiting in one lane; past it
// a report is dropped and the venue reconciled instead.
const maxVenueReports = 4096

// laneJob is one unit of a lane's work.
type laneJob struct {
	// key names a background job (a poll, a reconciliation): one of a key
	// waits at a time, and a second is not queued. "" for stream reports.
	key     string
	command bool
	run     func()
	drop    func() // a command's, run when the node stops before it begins
}

// lane is one real venue's queue of calls.
type lane struct {
	name string

	mu       sync.Mutex
	jobs     []laneJob
	commands int             // commands queued or running
	reports  int             // stream reports queued
	waiting  map[string]bool // background keys queued
	stopping bool
	wake     chan struct{} // a job was queued, or the lane stops
}

func newLane(name string) *lane {
	return &lane{name: name, waiting: map[string]bool{}, wake: make(chan struct{}, 1)}
}

// busyReason is the one wording of a venue_busy refusal.
func busyReason(name string) string {
	return fmt.Sprintf("venue %s is busy: %d commands are already waiting for its answers, so nothing was sent; retry once some are answered (their tickets tell)", name, MaxVenueQueue)
}

// command queues a command's job, or says why it cannot ("busy",
// "stopping"). exempt skips the depth bound (market_exit). queued, when
// set, is told how many commands are ahead of the job before the job can
// begin.
func (l *lane) command(run, drop func(), exempt bool, queued func(ahead int)) (why string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.stopping:
		return "stopping"
	case !exempt && l.commands >= MaxVenueQueue:
		return "busy"
	}
	if queued != nil {
		queued(l.commands)
	}
	l.commands++
	l.jobs = append(l.jobs, laneJob{command: true, run: run, drop: drop})
	l.signal()
	return ""
}

// background queues a background job unless one of its key already
// waits; a stream report (key "") is refused past maxVenueReports. It
// reports whether the job is queued or already waiting.
func (l *lane) background(key string, run func()) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.stopping:
		return false
	case key != "" && l.waiting[key]:
		return true
	case key == "" && l.reports >= maxVenueReports:
		return false
	}
	if key == "" {
		l.reports++
	} else {
		l.waiting[key] = true
	}
	l.jobs = append(l.jobs, laneJob{key: key, run: run})
	l.signal()
	return true
}

func (l *lane) signal() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// next waits for the next job; false once the lane stops and is empty.
func (l *lane) next() (laneJob, bool) {
	for {
		l.mu.Lock()
		if len(l.jobs) > 0 {
			j := l.jobs[0]
			l.jobs[0] = laneJob{}
			l.jobs = l.jobs[1:]
			switch {
			case j.command:
			case j.key == "":
				l.reports--
			default:
				delete(l.waiting, j.key)
			}
			l.mu.Unlock()
			return j, true
		}
		if l.stopping {
			l.mu.Unlock()
			return laneJob{}, false
		}
		l.mu.Unlock()
		<-l.wake
	}
}

// finished counts a command done.
func (l *lane) finished(j laneJob) {
	if !j.command {
		return
	}
	l.mu.Lock()
	l.commands--
	l.mu.Unlock()
}

// stop refuses new jobs, drops the queued ones (a command's drop tells its
// ticket) and lets the running one finish; the lane's goroutine then ends.
func (l *lane) stop() {
	l.mu.Lock()
	jobs := l.jobs
	l.jobs, l.stopping = nil, true
	l.commands, l.reports, l.waiting = l.commands-countCommands(jobs), 0, map[string]bool{}
	l.signal()
	l.mu.Unlock()
	for _, j := range jobs {
		if j.drop != nil {
			j.drop()
		}
	}
}

func countCommands(jobs []laneJob) int {
	n := 0
	for _, j := range jobs {
		if j.command {
			n++
		}
	}
	return n
}

// runLane is a lane's goroutine.
func (s *Server) runLane(l *lane) {
	defer s.lanesDone.Done()
	for {
		j, ok := l.next()
		if !ok {
			return
		}
		j.run()
		l.finished(j)
	}
}

// startLanes starts one lane per real venue.
func (s *Server) startLanes() {
	s.lanes = map[string]*lane{}
	for _, vc := range s.cfg.Project.Venues {
		if vc.Real() {
			l := newLane(vc.Name)
			s.lanes[vc.Name] = l
			s.lanesDone.Add(1)
			go s.runLane(l)
		}
	}
}

// background queues a background job on the named venue's lane.
func (s *Server) background(name, key string, run func()) bool {
	if l := s.lanes[name]; l != nil {
		return l.background(key, run)
	}
	return false
}

// onFold runs f on the fold and waits for it: a lane's hop. Unlike
// enqueue it is never refused while the node stops (the fold runs until
// the lanes are done); it reports false only once the fold has ended.
func (s *Server) onFold(f func()) bool {
	finished := make(chan struct{})
	select {
	case s.queue <- func() { f(); close(finished) }:
	case <-s.done:
		return false
	}
	select {
	case <-finished:
		return true
	case <-s.done:
		select {
		case <-finished:
			return true
		default:
			return false
		}
	}
}
