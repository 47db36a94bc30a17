package alert

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"wicket/node"
)

// Sink is somewhere alerts go that can fail and be retried (a webhook).
type Sink interface {
	Name() string
	// Deliver sends a once. A *Permanent error is not retried.
	Deliver(ctx context.Context, a Alert) error
}

// Permanent is a delivery error a retry cannot mend (the receiver refused
// the request itself).
type Permanent struct{ Err error }

func (p *Permanent) Error() string { return p.Err.Error() }
func (p *Permanent) Unwrap() error { return p.Err }

// Options configure a Dispatcher. Zero values take the defaults.
type Options struct {
	Sinks []Sink
	Log   *slog.Logger // the node log: every alert is written there
	// Attempts bounds the deliveries of one alert to one sink (default 4);
	// Backoff is the first wait between them, doubling (default 250ms).
	Attempts int
	Backoff  time.Duration
	// AttemptTimeout bounds one delivery (default 2s).
	AttemptTimeout time.Duration
	After          func(time.Duration) <-chan time.Time // default time.After; tests inject
	Queue          int                                  // alerts waiting per sink (default 256)
	Keep           int                                  // recent alerts kept for the listen streams (default 50)
}

// Dispatcher delivers alerts: to the log and the recent list at once, to
// each sink from its own goroutine, so a slow webhook delays only itself.
type Dispatcher struct {
	o      Options
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	queues []chan Alert

	mu     sync.Mutex
	seen   map[string]bool
	order  []string // seen ids, oldest first, bounded by maxSeen
	recent []Alert
	seq    int64
}

// maxSeen bounds the ids remembered against duplicates.
const maxSeen = 4096

// NewDispatcher starts a dispatcher; Close stops it.
func NewDispatcher(o Options) *Dispatcher {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Attempts <= 0 {
		o.Attempts = 4
	}
	if o.Backoff <= 0 {
		o.Backoff = 250 * time.Millisecond
	}
	if o.AttemptTimeout <= 0 {
		o.AttemptTimeout = 2 * time.Second
	}
	if o.After == nil {
		o.After = time.After
	}
	if o.Queue <= 0 {
		o.Queue = 256
	}
	if o.Keep <= 0 {
		o.Keep = 50
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &Dispatcher{o: o, ctx: ctx, cancel: cancel, seen: map[string]bool{}}
	for _, s := range o.Sinks {
		q := make(chan Alert, o.Queue)
		d.queues = append(d.queues, q)
		d.wg.Add(1)
		go d.run(s, q)
	}
	return d
}

// Close stops delivering; alerts still queued are dropped.
func (d *Dispatcher) Close() {
	if d == nil {
		return
	}
	d.cancel()
	d.wg.Wait()
}

// Audit raises the alert of each entry the table names; the others are
// ignored. The node calls it with every audit entry it commits.
func (d *Dispatcher) Audit(entries ...node.AuditEntry) {
	if d == nil {
		return
	}
	for _, e := range entries {
		if a, ok := FromAudit(e); ok {
			d.Raise(a)
		}
	}
}

// Raise delivers a once: it reports false for an id already raised. It
// never blocks: a sink whose queue is full loses the alert, and the log
// says so.
func (d *Dispatcher) Raise(a Alert) bool {
	if d == nil {
		return false
	}
	d.mu.Lock()
	if d.seen[a.ID] {
		d.mu.Unlock()
		return false
	}
	d.seen[a.ID] = true
	d.order = append(d.order, a.ID)
	if len(d.order) > maxSeen {
		delete(d.seen, d.order[0])
		d.order = d.order[1:]
	}
	d.seq++
	d.recent = append(d.recent, a)
	if len(d.recent) > d.o.Keep {
		d.recent = d.recent[len(d.recent)-d.o.Keep:]
	}
	d.mu.Unlock()
	level := slog.LevelWarn
	if a.Severity == string(Notice) {
		level = slog.LevelInfo
	} else if a.Severity == string(Critical) {
		level = slog.LevelError
	}
	d.o.Log.Log(context.Background(), level, "alert: "+a.Title, "id", a.ID, "kind", string(a.Kind), "venue", a.Venue, "text", a.Text)
	for i, q := range d.queues {
		select {
		case q <- a:
		default:
			d.o.Log.Error("alert not delivered: the sink's queue is full", "sink", d.o.Sinks[i].Name(), "id", a.ID)
		}
	}
	return true
}

// Recent is the alerts raised since (not counting) the after'th, oldest
// first, and the count raised so far: a reader passes the count back to
// read only what is new. Only the last Keep are held.
func (d *Dispatcher) Recent(after int64) ([]Alert, int64) {
	if d == nil {
		return nil, 0
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	held := int64(len(d.recent))
	first := d.seq - held // the count raised before recent[0]
	from := max(after-first, 0)
	if from > held {
		from = held
	}
	return append([]Alert(nil), d.recent[from:]...), d.seq
}

func (d *Dispatcher) run(s Sink, q <-chan Alert) {
	defer d.wg.Done()
	for {
		select {
		case <-d.ctx.Done():
			return
		case a := <-q:
			d.deliver(s, a)
		}
	}
}

// deliver makes at most Attempts deliveries of a to s, waiting Backoff,
// doubling, between them; a permanent refusal ends them.
func (d *Dispatcher) deliver(s Sink, a Alert) {
	wait := d.o.Backoff
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(d.ctx, d.o.AttemptTimeout)
		err := s.Deliver(ctx, a)
		cancel()
		if err == nil {
			return
		}
		_, permanent := err.(*Permanent)
		if permanent || attempt >= d.o.Attempts || d.ctx.Err() != nil {
			d.o.Log.Error("alert not delivered", "sink", s.Name(), "id", a.ID, "attempts", attempt, "err", err)
			return
		}
		d.o.Log.Warn("alert delivery failed; retrying", "sink", s.Name(), "id", a.ID, "attempt", attempt, "err", err)
		select {
		case <-d.o.After(wait):
		case <-d.ctx.Done():
			return
		}
		wait *= 2
	}
}
