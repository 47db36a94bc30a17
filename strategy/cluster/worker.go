package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"wicket/internal/project"
	"wicket/strategy/worker"
)

// DefaultAckWait is how long a chunk may go without a progress report
// before JetStream gives it to another worker. A working worker reports
// every third of it.
const DefaultAckWait = 30 * time.Second

// Runner runs a chunk: a worker.Pool. Do decodes the strategy worker's
// answer into resp; a cluster worker asks for a worker.SweepAnswer, the
// pool's binary form undecoded, and sends it on as it is: the sweep
// decodes it (Dispatcher.Sweep).
type Runner interface {
	Size() int
	Do(ctx context.Context, kind string, req, resp any) error
}

// WorkerOptions configure a Worker.
type WorkerOptions struct {
	Options
	// Pool runs the chunks, Pool.Size() at a time.
	Pool Runner
	// CacheDir holds the bars this machine has fetched, by digest.
	CacheDir string
	// AckWait is the consumer's ack wait; 0 means DefaultAckWait.
	AckWait time.Duration
	// Host names this machine in heartbeats.
	Host string
	// Log receives one line per event; nil discards.
	Log io.Writer
	// Now is the clock messages' expiry is read by; nil means time.Now.
	Now func() time.Time
}

// Worker pulls chunks from the cluster and runs them.
type Worker struct {
	o    WorkerOptions
	sig  *signer
	id   string
	nc   *nats.Conn
	cons jetstream.Consumer
	obj  jetstream.ObjectStore
	busy atomic.Int64  // chunks running
	held atomic.Int64  // chunks received, waiting for a slot
	seq  atomic.Uint64 // of heartbeats
	// credit bounds the chunks this worker holds from the queue (running
	// or waiting): holdPerSlot per slot. A send takes one, a receive gives
	// it back. Tail copies take none: one is taken only into a free slot
	// (onCopy), so at most one per slot waits.
	credit chan struct{}
	ready  chan *delivery // chunks held, for the slots to run: as many as the credit, and a copy per slot

	refusedNote sync.Once // the first message refused that is no chunk is logged

	mu        sync.Mutex
	running   map[string]context.CancelCauseFunc
	cancelled map[string]time.Time // chunks cancelled before they ran here, for a minute
	// ran holds the chunks this worker answered or saw cancelled, until
	// they expire: it runs a chunk id once (ranOnce).
	ran    map[string]time.Time
	barsMu sync.Mutex
	pushMu sync.Mutex
	pushes map[string]chan struct{} // bars being pushed to this worker, by digest (arriving)
}

// Serve connects and runs chunks until ctx ends. It returns an error when
// the server cannot be reached at start.
func Serve(ctx context.Context, o WorkerOptions) error {
	if o.AckWait <= 0 {
		o.AckWait = DefaultAckWait
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.CacheDir == "" {
		return errors.New("a cluster worker needs a cache directory for bars")
	}
	if err := os.MkdirAll(o.CacheDir, 0o700); err != nil {
		return fmt.Errorf("create the bars cache: %w", err)
	}
	if o.Name == "" {
		o.Name = "wicket worker " + o.Host
	}
	sig, err := newSigner(o.Key, o.Now)
	if err != nil {
		return err
	}
	nc, js, _, obj, err := connect(ctx, o.Options)
	if err != nil {
		return err
	}
	defer nc.Close()
	cctx, cancel := context.WithTimeout(ctx, DefaultConnectTimeout)
	cons, err := js.CreateOrUpdateConsumer(cctx, StreamName, jetstream.ConsumerConfig{
		Durable: ConsumerName, AckPolicy: jetstream.AckExplicitPolicy, AckWait: o.AckWait,
		MaxDeliver: -1, FilterSubject: chunkSubjects, MaxAckPending: -1,
		Description: "wicket research workers",
	})
	cancel()
	if err != nil {
		return fmt.Errorf("research cluster at %s: create the workers' consumer: %w", redacted(o.URL), err)
	}
	slots := o.Pool.Size()
	w := &Worker{o: o, sig: sig, id: nuid.Next(), nc: nc, cons: cons, obj: obj, running: map[string]context.CancelCauseFunc{}, cancelled: map[string]time.Time{}, ran: map[string]time.Time{},
		credit: make(chan struct{}, holdPerSlot*slots), ready: make(chan *delivery, (holdPerSlot+1)*slots)}
	if _, err := nc.Subscribe(cancelPrefix+">", w.onCancel); err != nil {
		return err
	}
	if _, err := nc.Subscribe(tailPrefix+w.id, w.onCopy); err != nil {
		return err
	}
	if _, err := nc.Subscribe(pingSubj, func(m *nats.Msg) {
		if w.genuine(m) {
			w.heartbeat()
		}
	}); err != nil {
		return err
	}
	// Bars announced ahead of a sweep are fetched one at a time, at most
	// a few waiting; the rest are fetched by the chunks that need them.
	fetch := make(chan barsNote, 4)
	if _, err := nc.Subscribe(barsSubj, func(m *nats.Msg) {
		var note barsNote
		if !w.genuine(m) || json.Unmarshal(m.Data, &note) != nil {
			return
		}
		select {
		case fetch <- note:
		default:
		}
	}); err != nil {
		return err
	}
	// Pushed bars are hashed and written on the push's own goroutine.
	if _, err := nc.Subscribe(barsPushSubj, w.onPush); err != nil {
		return err
	}
	w.heartbeat()
	fmt.Fprintf(o.Log, "wicket worker: joined the research cluster at %s with %d workers\n", redacted(o.URL), o.Pool.Size())
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(heartbeatTick)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				w.heartbeat()
			}
		}
	})
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case note := <-fetch:
				// Bars held already (pushed, then announced once in the
				// store) are found in the cache.
				if _, err := w.barsFile(ctx, note.Digest, false); err != nil && ctx.Err() == nil && !note.Unsure {
					fmt.Fprintf(o.Log, "wicket worker: fetch announced bars: %v\n", err)
				}
			}
		}
	})
	wg.Go(func() { w.fetch(ctx) })
	for range slots {
		wg.Go(func() { w.loop(ctx) })
	}
	wg.Wait()
	// The chunks still held go back to the queue for another worker now,
	// not after the ack wait.
	for {
		select {
		case d := <-w.ready:
			d.release(func(m jetstream.Msg) { m.Nak() })
		default:
			return nil
		}
	}
}

func (w *Worker) heartbeat() {
	b, _ := json.Marshal(presence{ID: w.id, Host: w.o.Host, Slots: w.o.Pool.Size(), Busy: int(w.busy.Load()), Held: int(w.held.Load()), Seq: w.seq.Add(1)})
	w.nc.PublishMsg(w.sig.signed(presenceSubj, b))
}

// genuine reports whether a ping, cancel or announcement is signed with
// the cluster key; the first one that is not is logged, since it is also
// what a sweep that holds another key sends.
func (w *Worker) genuine(m *nats.Msg) bool {
	return w.genuineFrame(m.Subject, m.Header, m.Data)
}

// genuineFrame is genuine for a message's subject, headers and the part
// of its body the signature covers.
func (w *Worker) genuineFrame(subject string, h nats.Header, body []byte) bool {
	if w.sig.verify(subject, h, body) {
		return true
	}
	w.refusedNote.Do(func() {
		fmt.Fprintf(w.o.Log, "wicket worker: ignored a message on %s whose signature does not verify with this machine's cluster key: if a sweep sent it, its %s (or its wicket version) differs from this machine's; further ones are not logged\n", subject, project.KeyCluster)
	})
	return false
}

func (w *Worker) onCancel(m *nats.Msg) {
	if !w.genuine(m) {
		return // a forged cancel would have the chunk's answer never sent
	}
	chunk := m.Subject[len(cancelPrefix):]
	w.mu.Lock()
	stop := w.running[chunk]
	now := time.Now()
	for id, at := range w.cancelled {
		if now.Sub(at) > time.Minute {
			delete(w.cancelled, id)
		}
	}
	if stop == nil && len(w.cancelled) < 100_000 {
		w.cancelled[chunk] = now
	}
	w.mu.Unlock()
	if stop != nil {
		stop(errors.New("the sweep was cancelled"))
	}
}

// fetch keeps the worker's credit in use: it pulls as many chunks as the
// worker may hold more of, hands each to the slots, and tells each
// chunk's sweep that this worker holds it (see onHeld), until ctx ends.
func (w *Worker) fetch(ctx context.Context) {
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
			return
		case w.credit <- struct{}{}:
		}
		n := 1
	more:
		for n < cap(w.credit) {
			select {
			case w.credit <- struct{}{}:
				n++
			default:
				break more
			}
		}
		batch, err := w.cons.Fetch(n, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			for range n {
				<-w.credit
			}
			if ctx.Err() == nil {
				fmt.Fprintf(w.o.Log, "wicket worker: fetch: %v\n", err)
				sleep(ctx, time.Second)
			}
			continue
		}
		got := 0
		for m := range batch.Messages() {
			got++
			// Counted held before its sweep hears so (hold), so that no
			// heartbeat in between shows this worker idle.
			w.held.Add(1)
			if d := w.hold(m); d != nil {
				w.ready <- d // never blocks: see ready
			} else {
				w.held.Add(-1)
				<-w.credit
			}
		}
		for range n - got {
			<-w.credit
		}
	}
}

// loop runs the chunks held, one at a time, until ctx ends.
func (w *Worker) loop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case d := <-w.ready:
			w.held.Add(-1)
			w.run(ctx, d)
			if !d.copy {
				<-w.credit
			}
			if len(w.ready) == 0 {
				// A slot is free and nothing waits for it: a sweep whose
				// other chunks all sit on busy workers may send one of them
				// here (its tail, see Dispatcher.onPresence).
				w.heartbeat()
			}
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// run runs one chunk and answers it, then acks it: a crash before the
// ack means redelivery, and the dispatcher keeps the first answer.
func (w *Worker) run(ctx context.Context, d *delivery) {
	chunk, replyTo := d.chunk, d.replyTo
	w.busy.Add(1)
	defer w.busy.Add(-1)
	cctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	w.mu.Lock()
	_, gone := w.cancelled[chunk]
	_, twice := w.running[chunk]
	if !twice {
		w.running[chunk] = stop
	}
	w.mu.Unlock()
	switch {
	case twice:
		// This worker runs a copy of it already, whose answer will do: the
		// original goes back to the queue a while, and leaves it when that
		// answer reaches the sweep.
		d.release(func(m jetstream.Msg) { m.NakWithDelay(time.Second) })
		return
	case gone:
		// Its sweep was cancelled, or has its answer, while it waited.
		w.markRan(d)
		d.release(func(m jetstream.Msg) { m.Ack() })
		w.mu.Lock()
		delete(w.running, chunk)
		w.mu.Unlock()
		return
	}
	defer func() {
		w.mu.Lock()
		delete(w.running, chunk)
		w.mu.Unlock()
	}()
	defer d.release(nil) // settled below; this only ends the progress reports on a path that returns early

	delivery := "copy"
	if d.js != nil {
		n := uint64(1)
		if md, err := d.js.Metadata(); err == nil {
			n = md.NumDelivered
		}
		delivery = fmt.Sprintf("delivery %d", n)
	}
	fmt.Fprintf(w.o.Log, "wicket worker: chunk %s: running (%s)\n", chunk, delivery)
	began := time.Now()
	res, err := w.sweep(cctx, d.data)
	if cctx.Err() != nil {
		if ctx.Err() != nil {
			d.release(func(m jetstream.Msg) { m.Nak() }) // this worker is stopping: another takes the chunk now
			return
		}
		w.markRan(d)
		d.release(func(m jetstream.Msg) { m.Ack() }) // cancelled by the sweep: nobody waits for it
		fmt.Fprintf(w.o.Log, "wicket worker: chunk %s: cancelled\n", chunk)
		return
	}
	answer := w.answer(replyTo, chunk, d.sweep)
	answer.Data = res
	if err != nil {
		answer.Header.Set(headerError, "1")
		answer.Data, _ = json.Marshal(worker.ToWire(err))
	}
	w.sig.sign(answer)
	err = w.nc.PublishMsg(answer)
	if errors.Is(err, nats.ErrMaxPayload) {
		// Sending it again would fail again: the sweep gets an error instead.
		answer.Header.Set(headerError, "1")
		answer.Data, _ = json.Marshal(worker.ToWire(&worker.Error{Kind: worker.KindHandler, Msg: fmt.Sprintf(
			"a chunk's answer (%d bytes) is larger than the NATS server's max_payload (%d bytes); raise max_payload on the server", len(res), w.nc.MaxPayload())}))
		w.sig.sign(answer)
		err = w.nc.PublishMsg(answer)
	}
	if err != nil {
		fmt.Fprintf(w.o.Log, "wicket worker: answer chunk %s: %v\n", chunk, err)
		d.release(func(m jetstream.Msg) { m.Nak() })
		return
	}
	w.markRan(d)
	// The ack follows the answer on the same connection, so the server
	// sees it only after the answer left; it is not waited for: should it
	// be lost, the chunk is run again and the dispatcher, which keeps the
	// first answer, drops the second.
	d.release(func(m jetstream.Msg) { m.Ack() })
	fmt.Fprintf(w.o.Log, "wicket worker: chunk %s: answered in %s\n", chunk, time.Since(began).Round(time.Millisecond))
}

// A chunk whose signature does not verify is refused: never run, never
// answered (its reply subject is as unknown as the rest of it). It goes
// back to the queue a while, so that a worker of the cluster holding
// the key takes it should this machine hold another (that worker's
// heartbeats are ignored by the sweep, which says so), and leaves the
// queue after maxRefusals deliveries.
const (
	maxRefusals  = 10
	refusedDelay = 2 * time.Second
)

func (w *Worker) refuseChunk(m jetstream.Msg, chunk string) {
	delivery := uint64(1)
	if md, err := m.Metadata(); err == nil {
		delivery = md.NumDelivered
	}
	if delivery >= maxRefusals {
		m.Term()
		fmt.Fprintf(w.o.Log, "wicket worker: chunk %q: refused %d times, taken off the queue\n", clip(chunk), delivery)
		return
	}
	m.NakWithDelay(refusedDelay)
	if delivery == 1 {
		fmt.Fprintf(w.o.Log, "wicket worker: chunk %q: refused, not run: its signature does not verify with this machine's cluster key (forged or altered, or this machine's %s differs from the sweep's)\n", clip(chunk), project.KeyCluster)
	}
}

// answer is an answer to chunk of sweep on replyTo, with its headers.
func (w *Worker) answer(replyTo, chunk, sweep string) *nats.Msg {
	m := nats.NewMsg(replyTo)
	m.Header.Set(headerChunk, chunk)
	m.Header.Set(headerSweep, sweep)
	m.Header.Set(headerWorker, w.id)
	m.Header.Set(headerProtocol, protocol)
	return m
}

// sweep runs a chunk and returns the strategy worker's answer as it
// gave it: a worker.SweepChunkResult in the pool's binary form
// (worker.SweepAnswer), which the sweep decodes.
func (w *Worker) sweep(ctx context.Context, data []byte) ([]byte, error) {
	var msg chunkMsg
	if err := json.Unmarshal(data, &msg); err != nil {
		return nil, &worker.Error{Kind: worker.KindRequest, Msg: "malformed chunk: " + err.Error()}
	}
	req := msg.Chunk
	path, err := w.barsFile(ctx, req.Digest, true)
	if err != nil {
		return nil, err
	}
	inds, err := w.indicatorsDir(msg.Indicators)
	if err != nil {
		return nil, err
	}
	req.BarsFile, req.HistoryPath, req.IndicatorsDir, req.FundingFile = path, "", inds, ""
	if req.FundingDigest != "" {
		if req.FundingFile, err = w.fundingFile(ctx, req.FundingDigest); err != nil {
			return nil, err
		}
	}
	var answer worker.SweepAnswer
	if err := w.o.Pool.Do(ctx, worker.KindSweep, req, &answer); err != nil {
		return nil, err
	}
	return answer, nil
}
