package cluster

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
	"wicket/strategy/worker"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// holdPerSlot is how many chunks a worker holds per slot: the one it
// runs and the next, fetched while the first runs, so that a slot never
// waits on a round trip to the server between two chunks.
const holdPerSlot = 2

// delivery is a chunk this worker holds: from the queue (js), or a tail
// copy a sweep sent this worker alone (js nil: nothing to acknowledge,
// since the queue still holds the original).
type delivery struct {
	js      jetstream.Msg
	subject string
	header  nats.Header
	data    []byte
	chunk   string
	sweep   string // the dispatcher that sent it (headerSweep)
	replyTo string
	copy    bool
	stop    chan struct{} // ends the progress reports
	once    sync.Once
}

// release stops the delivery's progress reports and, for one from the
// queue, settles it with settle (ack, nak); a tail copy has nothing to
// settle.
func (d *delivery) release(settle func(jetstream.Msg)) {
	d.once.Do(func() {
		close(d.stop)
		if d.js != nil && settle != nil {
			settle(d.js)
		}
	})
}

// hold takes a chunk from the queue: it keeps the chunk this worker's
// (progress reports) and tells its sweep that this worker holds it. A
// chunk that is not to be run here is settled and hold returns nil.
func (w *Worker) hold(m jetstream.Msg) *delivery {
	chunk := m.Headers().Get(headerChunk)
	replyTo := m.Headers().Get(headerReply)
	if chunk == "" || replyTo == "" {
		m.Term() // not ours
		return nil
	}
	sweep := m.Headers().Get(headerSweep)
	genuine := w.sig.verify(m.Subject(), m.Headers(), m.Data())
	if v := m.Headers().Get(headerProtocol); v != protocol {
		// Its dispatcher runs another version: it hears why, and the chunk
		// is not handed to worker after worker. The answer is signed only
		// if the chunk was: a sweep of this version refuses an unsigned
		// one, so a forged chunk naming a genuine sweep's chunk cannot have
		// this worker fail that sweep.
		fmt.Fprintf(w.o.Log, "wicket worker: chunk %q: refused, wire version %q\n", clip(chunk), v)
		answer := w.answer(replyTo, chunk, sweep)
		answer.Header.Set(headerError, "1")
		answer.Data, _ = json.Marshal(worker.ToWire(protocolError("the sweep sent a chunk", v)))
		if genuine {
			w.sig.sign(answer)
		}
		w.nc.PublishMsg(answer)
		m.Ack()
		return nil
	}
	if !genuine && w.sig.expired(m.Headers()) && w.sig.signedFrame(m.Subject(), m.Headers(), m.Data()) {
		m.Term()
		fmt.Fprintf(w.o.Log, "wicket worker: chunk %q: expired, not run (a chunk published again after its time, or a clock far off this machine's)\n", clip(chunk))
		return nil
	}
	if !genuine {
		w.refuseChunk(m, chunk)
		return nil
	}
	if sweep == "" || !strings.HasPrefix(chunk, sweep+".") || m.Subject() != chunkPrefix+chunk {
		m.Term()
		fmt.Fprintf(w.o.Log, "wicket worker: chunk %q: refused, not run: it is not bound to its sweep\n", clip(chunk))
		return nil
	}
	if w.ranBefore(chunk) {
		m.Ack()
		fmt.Fprintf(w.o.Log, "wicket worker: chunk %s: run here already, not run again (a copy published again)\n", clip(chunk))
		return nil
	}
	d := &delivery{js: m, subject: m.Subject(), header: m.Headers(), data: m.Data(), chunk: chunk, sweep: sweep, replyTo: replyTo, stop: make(chan struct{})}
	// Progress keeps the chunk ours while it waits and while it runs.
	go func() {
		t := time.NewTicker(max(w.o.AckWait/3, 10*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-d.stop:
				return
			case <-t.C:
				m.InProgress()
			}
		}
	}()
	w.sayHeld(d)
	return d
}

// onCopy takes a tail copy of a chunk another worker holds, which a
// sweep sent this worker because it had a free slot. It runs when a slot
// is still free and this worker does not hold the chunk itself; else it
// is dropped: the original is still on its way.
func (w *Worker) onCopy(m *nats.Msg) {
	chunk, replyTo := m.Header.Get(headerChunk), m.Header.Get(headerReply)
	if chunk == "" || replyTo == "" || m.Header.Get(headerProtocol) != protocol || !w.genuine(m) {
		return
	}
	sweep := m.Header.Get(headerSweep)
	if sweep == "" || !strings.HasPrefix(chunk, sweep+".") || w.ranBefore(chunk) {
		return
	}
	w.mu.Lock()
	_, mine := w.running[chunk]
	w.mu.Unlock()
	if mine || w.busy.Load()+w.held.Load() >= int64(w.o.Pool.Size()) {
		return
	}
	w.held.Add(1)
	d := &delivery{subject: m.Subject, header: m.Header, data: m.Data, chunk: chunk, sweep: sweep, replyTo: replyTo, copy: true, stop: make(chan struct{})}
	w.ready <- d
	w.sayHeld(d)
}

// sayHeld tells a chunk's sweep that this worker holds it.
func (w *Worker) sayHeld(d *delivery) {
	held := w.answer(d.replyTo, d.chunk, d.sweep)
	held.Header.Set(headerHeld, "1")
	w.sig.sign(held)
	w.nc.PublishMsg(held)
}
