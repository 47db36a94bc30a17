package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"wicket/internal/project"
	"wicket/strategy/worker"
)

// DefaultWaitWorkers is how long a sweep waits for a worker to be in the
// cluster before it fails.
const DefaultWaitWorkers = 10 * time.Second

// maxShippedRanges bounds the ranges a Dispatcher remembers shipping.
const maxShippedRanges = 4096

// liveFor is how long a worker counts as present after its heartbeat.
const liveFor = 3 * heartbeatTick

// DispatcherOptions configure a Dispatcher.
type DispatcherOptions struct {
	Options
	// WaitWorkers bounds the wait for a worker: before a sweep starts, and
	// while chunks are waiting and no worker is present. 0 means 10s.
	WaitWorkers time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Log receives a line for each answer refused (forged or altered) and
	// for the first heartbeat refused; nil discards.
	Log io.Writer
}

// Dispatcher sends sweep chunks to the cluster's workers and collects
// their results. It is safe for concurrent use.
type Dispatcher struct {
	o     DispatcherOptions
	sig   *signer
	nc    *nats.Conn
	js    jetstream.JetStream
	st    jetstream.Stream
	obj   jetstream.ObjectStore
	id    string
	seq   atomic.Uint64
	subs  []*nats.Subscription
	where string

	closed  chan struct{} // closed by Close
	closing sync.Once

	// refused counts the answers whose signature did not verify;
	// refusedBeats the heartbeats.
	refused, refusedBeats atomic.Uint64

	mu      sync.Mutex
	pending map[string]*waiter // chunk id → who waits for its answer
	workers map[string]seen
	// beats is the last heartbeat sequence number seen of each worker,
	// kept after the worker is gone, so that its heartbeats published
	// again never bring it back (at most maxBeats workers remembered).
	beats       map[string]uint64
	bars        map[string]string      // history path, series, range → digest shipped
	held        map[string]time.Time   // digests of the bars in the store, put or found there, and when
	uploads     map[string]*upload     // digest → bars being put in the store (Warm)
	warmed      warmedStores           // the stores Warm read, kept open (warm.go)
	costs       trialCosts             // a combination's cost a bar, measured (TrialCost)
	shipped     atomic.Uint64          // bars put in the store; bars found there are not counted
	barsMu      sync.Mutex             // serialises shipping bars
	fundingMu   sync.Mutex             // serialises shipping funding
	fundingRead map[string]fundingSeen // history path, series, range, want → funding found and shipped
}

type seen struct {
	p  presence
	at time.Time
}

// waiter is a chunk waiting for its answer. Its fields but answer are
// under Dispatcher.mu.
type waiter struct {
	answer  chan *nats.Msg // the first genuine answer
	refused int            // answers refused for it
	msg     *nats.Msg      // the chunk as queued, for a tail copy
	heldAt  time.Time      // when a worker first said it holds the chunk; zero: still queued
	holders []string       // the workers that said they hold it, the chunk or a copy
	copied  bool           // a tail copy went to an idle worker
}

// Dial connects to the cluster. It fails, within the connect timeout,
// when the server cannot be reached or has no JetStream.
func Dial(ctx context.Context, o DispatcherOptions) (*Dispatcher, error) {
	if o.WaitWorkers <= 0 {
		o.WaitWorkers = DefaultWaitWorkers
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Name == "" {
		o.Name = "wicket research"
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	sig, err := newSigner(o.Key, o.Now)
	if err != nil {
		return nil, err
	}
	nc, js, st, obj, err := connect(ctx, o.Options)
	if err != nil {
		return nil, err
	}
	d := &Dispatcher{o: o, sig: sig, nc: nc, js: js, st: st, obj: obj, id: nuid.Next(), where: redacted(o.URL), closed: make(chan struct{}),
		pending: map[string]*waiter{}, workers: map[string]seen{}, beats: map[string]uint64{}, bars: map[string]string{}, held: map[string]time.Time{}, uploads: map[string]*upload{}, fundingRead: map[string]fundingSeen{}}
	sig.sweep = d.id // every message it sends is bound to it
	sub, err := nc.Subscribe(presenceSubj, d.onPresence)
	if err == nil {
		d.subs = append(d.subs, sub)
		sub, err = nc.Subscribe(resultPrefix+d.id, d.onReply)
		d.subs = append(d.subs, sub)
	}
	if err == nil {
		err = nc.Flush()
	}
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("research cluster at %s: subscribe: %w", d.where, err)
	}
	d.ping() // workers answer with a heartbeat at once
	return d, nil
}

// Close takes this dispatcher's chunks off the queue, tells the workers
// to stop the ones they run, and ends the connection; sweeps in flight
// fail.
func (d *Dispatcher) Close() error {
	d.closing.Do(func() {
		close(d.closed)
		d.mu.Lock()
		chunks := make([]string, 0, len(d.pending))
		for c := range d.pending {
			chunks = append(chunks, c)
		}
		d.mu.Unlock()
		if len(chunks) > 0 {
			d.stop(chunkPrefix+d.id+".>", chunks...)
		}
		d.nc.Close()
		d.barsMu.Lock()
		d.warmed.close()
		d.barsMu.Unlock()
	})
	return nil
}

// Refused is how many answers this dispatcher refused because their
// signature did not verify: forged, or altered on the way.
func (d *Dispatcher) Refused() uint64 { return d.refused.Load() }

func (d *Dispatcher) ping() { d.nc.PublishMsg(d.sig.signed(pingSubj, nil)) }

func (d *Dispatcher) onPresence(m *nats.Msg) {
	if !d.sig.verify(m.Subject, m.Header, m.Data) {
		if d.refusedBeats.Add(1) == 1 {
			fmt.Fprintf(d.o.Log, "wicket research: ignored a heartbeat on the research cluster at %s whose signature does not verify with this machine's cluster key (a worker with another %s or another wicket version, or a forgery); further ones are counted, not logged\n", d.where, project.KeyCluster)
		}
		return
	}
	var p presence
	if json.Unmarshal(m.Data, &p) != nil || p.ID == "" {
		return
	}
	d.mu.Lock()
	if last, ok := d.beats[p.ID]; ok && p.Seq <= last {
		d.mu.Unlock()
		return // a heartbeat sent again (replayed), or out of order
	}
	if len(d.beats) >= maxBeats {
		for id := range d.beats { // forget one that is not present
			if _, live := d.workers[id]; !live {
				delete(d.beats, id)
				break
			}
		}
	}
	d.beats[p.ID] = p.Seq
	d.workers[p.ID] = seen{p, d.o.Now()}
	copies := d.tail(p)
	d.mu.Unlock()
	for _, c := range copies {
		d.nc.PublishMsg(c)
	}
}

// maxBeats bounds the workers whose last heartbeat a dispatcher
// remembers.
const maxBeats = 65536

// maxHolders bounds the workers that run one chunk at once: the worker
// it was given to and one that runs a tail copy (or the one it was given
// to after the ack wait).
const maxHolders = 2

// tail hands the tail of a sweep to an idle worker. When a worker has a
// free slot and every chunk this dispatcher waits for is held by a
// worker (none is left on the queue for it to take), the chunks held
// longest that only one worker holds, not this one, are copied to it
// alone, one per free slot: the first answer wins (onReply), the other
// is stopped, and the sweep's chunks are counted once whichever it is. A
// worker that takes a copy says so as it does for a chunk (headerHeld);
// one that finds its slot taken meanwhile drops it, and the chunk may go
// to the next idle worker. It returns the copies to publish; d.mu is
// held.
func (d *Dispatcher) tail(p presence) []*nats.Msg {
	free := max(1, p.Slots) - p.Busy - p.Held
	if free <= 0 || len(d.pending) == 0 {
		return nil
	}
	var held []*waiter
	for _, w := range d.pending {
		if w.heldAt.IsZero() {
			return nil // the idle worker takes it from the queue
		}
		if w.msg != nil && len(w.holders) < maxHolders && !slices.Contains(w.holders, p.ID) {
			held = append(held, w)
		}
	}
	slices.SortFunc(held, func(a, b *waiter) int { return a.heldAt.Compare(b.heldAt) })
	var copies []*nats.Msg
	for _, w := range held[:min(free, len(held))] {
		w.copied = true
		c := nats.NewMsg(tailPrefix + p.ID)
		c.Data = w.msg.Data
		for _, k := range []string{headerChunk, headerReply, headerProtocol, headerSweep, headerExpires} {
			c.Header.Set(k, w.msg.Header.Get(k))
		}
		d.sig.sign(c)
		copies = append(copies, c)
	}
	return copies
}

func (d *Dispatcher) onReply(m *nats.Msg) {
	chunk := m.Header.Get(headerChunk)
	if !d.sig.verify(m.Subject, m.Header, m.Data) {
		d.refuse(m, chunk)
		return
	}
	if chunk == "" || m.Header.Get(headerSweep) != d.id {
		return // not an answer to a chunk of this dispatcher's
	}
	d.mu.Lock()
	if m.Header.Get(headerHeld) != "" {
		if w := d.pending[chunk]; w != nil {
			if w.heldAt.IsZero() {
				w.heldAt = d.o.Now()
			}
			if h := m.Header.Get(headerWorker); !slices.Contains(w.holders, h) && len(w.holders) < maxHolders {
				w.holders = append(w.holders, h)
			}
		}
		d.mu.Unlock()
		return
	}
	w, ok := d.pending[chunk]
	delete(d.pending, chunk) // the first result wins; a redelivered chunk's or a tail copy's second answer finds nothing
	d.mu.Unlock()
	if ok {
		w.answer <- m
	}
}

// maxRefusedLogged bounds the refused answers logged one by one; after
// it, one line in every thousand.
const maxRefusedLogged = 10

// refuse counts an answer whose signature does not verify, against the
// chunk it names when that chunk waits here; the chunk keeps waiting for
// its genuine answer.
func (d *Dispatcher) refuse(m *nats.Msg, chunk string) {
	n := d.refused.Add(1)
	d.mu.Lock()
	if w := d.pending[chunk]; w != nil {
		w.refused++
	}
	d.mu.Unlock()
	if n <= maxRefusedLogged || n%1000 == 0 {
		why := "forged, or altered on the way"
		if v := m.Header.Get(headerProtocol); v != protocol {
			why = fmt.Sprintf("it says wire version %q: a worker of another wicket version, or a forgery", v)
		}
		fmt.Fprintf(d.o.Log, "wicket research: refused an answer to chunk %q from the research cluster at %s: its signature does not verify with the cluster key (%s); %d refused so far\n",
			clip(chunk), d.where, why, n)
	}
}

// clip bounds a string a message of unknown origin gave, for a log.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// Size is the worker slots present in the cluster now (at least 1).
func (d *Dispatcher) Size() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	now := d.o.Now()
	for id, w := range d.workers {
		if now.Sub(w.at) > liveFor {
			delete(d.workers, id)
			continue
		}
		n += max(1, w.p.Slots)
	}
	return max(1, n)
}

// InFlight is how many chunks a sweep keeps under way: two per worker
// slot, so that a worker that answers one finds the next on the queue.
func (d *Dispatcher) InFlight() int { return 2 * d.Size() }

func (d *Dispatcher) present() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.o.Now()
	for _, w := range d.workers {
		if now.Sub(w.at) <= liveFor {
			return true
		}
	}
	return false
}

// Ready waits, at most WaitWorkers, for a worker to be present.
func (d *Dispatcher) Ready(ctx context.Context) error {
	if d.nc.IsClosed() {
		return fmt.Errorf("the connection to the research cluster at %s is closed", d.where)
	}
	if d.present() {
		return nil
	}
	deadline := d.o.Now().Add(d.o.WaitWorkers)
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for !d.present() {
		if d.o.Now().After(deadline) {
			return d.noWorkers()
		}
		d.ping()
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-t.C:
		}
	}
	// One more heartbeat round so every worker that answered the ping counts.
	select {
	case <-ctx.Done():
	case <-time.After(100 * time.Millisecond):
	}
	return nil
}

func (d *Dispatcher) noWorkers() error {
	status := "connected"
	if !d.nc.IsConnected() {
		status = "not connected (" + d.nc.Status().String() + ")"
	}
	return d.noWorkersWith(status)
}

// noWorkersWith is the error for no workers, the server's status given.
func (d *Dispatcher) noWorkersWith(status string) error {
	refused := ""
	if n := d.refusedBeats.Load(); n > 0 {
		refused = fmt.Sprintf("; %d heartbeats were ignored because their signature does not verify: every machine of the cluster needs the same %s and the same wicket version", n, project.KeyCluster)
	}
	return fmt.Errorf("no wicket workers in the research cluster at %s for %s (the server is %s%s); start some with `wicket worker --cluster %s` on the machines that should run the sweep, or remove [research] cluster to run here",
		d.where, d.o.WaitWorkers, status, refused, d.where)
}

// Sweep runs one chunk on a cluster worker. The bars of the chunk's
// range are shipped first unless the cluster already holds them; while
// Warm's upload of them is under way, the chunk is queued meanwhile (a
// worker the bars were not pushed to waits for them in the store), and
// fails if the upload does.
func (d *Dispatcher) Sweep(ctx context.Context, req worker.SweepChunk) (worker.SweepChunkResult, error) {
	digest, up, err := d.shipBars(ctx, req)
	if err != nil {
		return worker.SweepChunkResult{}, err
	}
	inds, err := readIndicators(req.IndicatorsDir)
	if err != nil {
		return worker.SweepChunkResult{}, err
	}
	funding, err := d.shipFunding(ctx, req)
	if err != nil {
		return worker.SweepChunkResult{}, err
	}
	req.Digest, req.FundingDigest, req.FundingFile = digest, funding, ""
	req.HistoryPath = ""   // the worker reads the shipped bars and funding
	req.IndicatorsDir = "" // and the shipped indicators
	body, err := json.Marshal(chunkMsg{Chunk: req, Indicators: inds})
	if err != nil {
		return worker.SweepChunkResult{}, &worker.Error{Kind: worker.KindRequest, Msg: "encode the chunk: " + err.Error()}
	}
	seq := strconv.FormatUint(d.seq.Add(1), 10)
	chunk := d.id + "." + seq
	subject := chunkPrefix + chunk
	msg := nats.NewMsg(subject)
	msg.Data = body
	msg.Header.Set(headerChunk, chunk)
	msg.Header.Set(headerReply, resultPrefix+d.id)
	msg.Header.Set(headerProtocol, protocol)
	d.sig.sign(msg)
	w := &waiter{answer: make(chan *nats.Msg, 1), msg: msg}
	d.mu.Lock()
	d.pending[chunk] = w
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		delete(d.pending, chunk)
		d.mu.Unlock()
	}()
	// The publish waits for its ack even when the sweep is cancelled
	// meanwhile: a publish abandoned half way may still be stored after
	// the purge that follows, and stay on the queue. Once acked, the
	// cancellation below purges it for certain.
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.o.connectTimeout())
	_, err = d.js.PublishMsg(pctx, msg, jetstream.WithMsgID(chunk))
	cancel()
	if err != nil {
		// The server may have stored it all the same.
		d.stop(subject, chunk)
		if ctx.Err() != nil {
			return worker.SweepChunkResult{}, canceled(ctx)
		}
		return worker.SweepChunkResult{}, &worker.Error{Kind: worker.KindStart, Msg: fmt.Sprintf("queue a chunk on the research cluster at %s: %v", d.where, err)}
	}
	tick := time.NewTicker(heartbeatTick)
	defer tick.Stop()
	var absentSince time.Time
	var uploaded <-chan struct{} // nil: no upload to wait for
	if up != nil {
		uploaded = up.done
	}
	for {
		select {
		case <-uploaded:
			uploaded = nil
			if up.err != nil {
				d.stop(subject, chunk)
				return worker.SweepChunkResult{}, up.err
			}
		case m := <-w.answer:
			res, err := decodeAnswer(m)
			if err != nil {
				// The sweep fails: its chunk leaves the queue now, not when a
				// worker that answered and did not ack it (it died) gives it
				// to another, nor a day later.
				d.stop(subject, chunk)
				return res, err
			}
			d.costs.note(req.Source, res)
			d.mu.Lock()
			res.Refused = w.refused
			copied := w.copied
			d.mu.Unlock()
			if copied {
				// The other of the chunk and its copy stops, or leaves the
				// queue, now; nobody waits for its answer.
				go d.stop(subject, chunk)
			}
			return res, nil
		case <-d.closed:
			return worker.SweepChunkResult{}, &worker.Error{Kind: worker.KindCanceled, Msg: fmt.Sprintf("the connection to the research cluster at %s was closed", d.where)}
		case <-ctx.Done():
			d.stop(subject, chunk)
			return worker.SweepChunkResult{}, canceled(ctx)
		case <-tick.C:
			if d.present() {
				absentSince = time.Time{}
				continue
			}
			if absentSince.IsZero() {
				absentSince = d.o.Now()
			}
			if d.o.Now().Sub(absentSince) >= d.o.WaitWorkers {
				d.stop(subject, chunk)
				return worker.SweepChunkResult{}, &worker.Error{Kind: worker.KindCrashed, Msg: d.noWorkers().Error()}
			}
		}
	}
}

// decodeAnswer reads a worker's answer (see headerError): the strategy
// worker's, in the pool's binary form, decoded here only, where it is
// used, and only once its signature verified (onReply).
func decodeAnswer(m *nats.Msg) (worker.SweepChunkResult, error) {
	if v := m.Header.Get(headerProtocol); v != protocol {
		return worker.SweepChunkResult{}, protocolError("a cluster worker ("+m.Header.Get(headerWorker)+") answered", v)
	}
	if m.Header.Get(headerError) != "" {
		var we worker.WireError
		if err := json.Unmarshal(m.Data, &we); err != nil {
			return worker.SweepChunkResult{}, &worker.Error{Kind: worker.KindHandler, Msg: "decode a cluster worker's error: " + err.Error()}
		}
		return worker.SweepChunkResult{}, we.Err()
	}
	res, err := worker.DecodeSweepAnswer(m.Data)
	if err != nil {
		return worker.SweepChunkResult{}, &worker.Error{Kind: worker.KindHandler, Msg: "decode a cluster worker's result: " + err.Error()}
	}
	return res, nil
}

// stop takes the chunks on subject (a wildcard may name several) off the
// queue and tells the workers running chunks to stop them.
func (d *Dispatcher) stop(subject string, chunks ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), d.o.connectTimeout())
	defer cancel()
	if err := d.st.Purge(ctx, jetstream.WithPurgeSubject(subject)); err != nil && !d.nc.IsClosed() {
		fmt.Fprintf(d.o.Log, "wicket research: take chunks off the queue of the research cluster at %s: %v (a worker may still run them; JetStream drops them after %s)\n", d.where, err, chunksMaxAge)
	}
	for _, c := range chunks {
		d.nc.PublishMsg(d.sig.signed(cancelPrefix+c, nil))
	}
	d.nc.FlushTimeout(d.o.connectTimeout())
}

func (o DispatcherOptions) connectTimeout() time.Duration {
	if o.ConnectTimeout > 0 {
		return o.ConnectTimeout
	}
	return DefaultConnectTimeout
}

func canceled(ctx context.Context) error {
	return &worker.Error{Kind: worker.KindCanceled, Msg: "cancelled: " + context.Cause(ctx).Error()}
}
