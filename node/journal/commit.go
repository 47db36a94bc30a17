package journal

import (
	"context"
	"crypto/ed25519"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"wicket/node"
)

// Group commit. Every write of the journal is a batch appended to one
// queue; one goroutine, the committer, takes whatever is waiting when it is
// free and writes it as one transaction: one set of SQLite's fsyncs and one
// anchor write for the whole group, however many batches it holds. A batch
// appended while a commit is in flight goes into the next one. Each batch's
// done is called only once the transaction holding it is durable in the
// database file (and the anchor records it), so a caller told "done" has
// its rows on disk, and a caller whose group failed is told the error and
// has nothing of it there.
//
// Rows are written in the order the batches were appended (the node's
// fold appends them in the order it applied them), each batch whole. A
// failed group fails every batch queued behind it too, and the journal
// refuses appends until Recover: the batches after a lost one were made
// from state the journal no longer has, so the caller rebuilds first.

// maxGroup bounds the batches one transaction holds, so one commit's work
// (and the wait of the first batch in it) stays bounded under a burst.
const maxGroup = 512

// errClosed is what an append to a closed journal gets.
var errClosed = errors.New("journal: closed")

// queued is one appended batch.
type queued struct {
	b    *Batch
	no   uint64 // its number in append order, from 1
	done func(error)
}

// committer is the journal's queue of batches and the state its waiters read.
type committer struct {
	mu        sync.Mutex
	work      *sync.Cond // the committer waits here for batches
	settled   *sync.Cond // Wait waits here for a group to end
	queue     []queued
	next      uint64 // the number of the last batch appended
	recovered uint64 // next when Recover was last called
	durable   uint64 // every batch up to this number is durable or lost
	lost      []lost // failed batch ranges (rare), for Wait
	failed    error  // a group failed and Recover was not called since
	closing   bool   // Close was called: append nothing more, drain the queue
	stopped   chan struct{}

	// hook, when set (tests: BeforeWrite), is called by the committer with
	// each group before it is written; its error fails the group.
	hook func(n int) error

	stats Stats
}

// lost is a range of batch numbers a failed group lost, with its error.
type lost struct {
	from, to uint64
	err      error
}

// Stats counts the committer's work since Open.
type Stats struct {
	Batches      int64 // batches written
	Transactions int64 // transactions (groups) that wrote them: one set of fsyncs each
}

func (j *Journal) startCommitter() {
	c := &committer{stopped: make(chan struct{})}
	c.work = sync.NewCond(&c.mu)
	c.settled = sync.NewCond(&c.mu)
	j.c = c
	go j.commitLoop()
}

// stopCommitter writes what is queued and stops the committer.
func (j *Journal) stopCommitter() {
	c := j.c
	c.mu.Lock()
	if !c.closing {
		c.closing = true
		c.work.Signal()
	}
	c.mu.Unlock()
	<-c.stopped
}

// Append queues b to be written after every batch appended before it and
// returns at once; done is called, on the committer's goroutine, with nil
// once b is durable or with the error that lost it. Append returns an
// error without queueing b (and done is not called) when the journal is
// closed or a failed commit has not been recovered from (Recover). The
// caller must not change b until done is called; done must not call back
// into the journal's writes.
func (j *Journal) Append(b *Batch, done func(error)) error {
	c := j.c
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closing:
		return errClosed
	case c.failed != nil:
		return fmt.Errorf("journal: an earlier commit failed and the state built on it was not rebuilt: %w", c.failed)
	}
	c.next++
	c.queue = append(c.queue, queued{b: b, no: c.next, done: done})
	c.work.Signal()
	return nil
}

// Commit writes b and returns once it is durable in the database file and
// its anchor records it: Append, then wait. Batches appended before it are
// written before it, often in the same transaction.
func (j *Journal) Commit(b *Batch) error {
	ch := make(chan error, 1)
	if err := j.Append(b, func(err error) { ch <- err }); err != nil {
		return err
	}
	return <-ch
}

// Point is how far the journal's appends had come at one moment: the
// batches appended since the last Recover (or Open) up to then, which a
// state built by the appender at that moment rests on.
type Point struct{ from, to uint64 }

// Appended is the point the appends have come to (the batches appended
// since the last Recover): Wait on it to know that everything appended
// until now is durable.
func (j *Journal) Appended() Point {
	c := j.c
	c.mu.Lock()
	defer c.mu.Unlock()
	return Point{from: c.recovered, to: c.next}
}

// Wait returns once every batch up to p is durable, or the error of a
// failed commit that lost one of them, or ctx's error. Batches lost before
// the Recover preceding p do not count: the state p was taken of no
// longer rests on them.
func (j *Journal) Wait(ctx context.Context, p Point) error {
	c := j.c
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() {
			c.mu.Lock()
			c.settled.Broadcast()
			c.mu.Unlock()
		})
		defer stop()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		for _, l := range c.lost {
			if l.to > p.from && l.from <= p.to {
				return l.err
			}
		}
		if c.durable >= p.to {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		c.settled.Wait()
	}
}

// Err is the error of a failed commit the journal has not been recovered
// from (nil when it takes appends).
func (j *Journal) Err() error {
	c := j.c
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failed
}

// Recover lets the journal take appends again after a failed commit. The
// caller has dropped whatever it built on the lost batches (the node
// rebuilds its state from the journal). Nothing is queued then: the
// failure lost the queue.
func (j *Journal) Recover() {
	c := j.c
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failed = nil
	c.recovered = c.next
}

// BeforeWrite sets f (nil: none), which the committer calls with each
// group's size before writing it; an error f returns fails the group as a
// failed write would, and nothing of it is written. It is for tests that
// hold a commit in flight to see what the journal's callers do meanwhile,
// or inject a failed one; the node never sets it.
func (j *Journal) BeforeWrite(f func(n int) error) {
	c := j.c
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hook = f
}

// Stats returns the committer's counts so far.
func (j *Journal) Stats() Stats {
	c := j.c
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// Commands is the highest command number the journal has committed.
func (j *Journal) Commands() int64 {
	c := j.c
	c.mu.Lock()
	defer c.mu.Unlock()
	return j.at.commands
}

// commitLoop is the committer: it writes each waiting group in one
// transaction and tells its batches.
func (j *Journal) commitLoop() {
	c := j.c
	defer close(c.stopped)
	for {
		c.mu.Lock()
		for len(c.queue) == 0 && !c.closing {
			c.work.Wait()
		}
		if len(c.queue) == 0 {
			c.mu.Unlock()
			return
		}
		n := min(len(c.queue), maxGroup)
		group := make([]queued, n)
		copy(group, c.queue)
		c.queue = append(c.queue[:0], c.queue[n:]...)
		at, hook := j.at, c.hook
		c.mu.Unlock()

		var err error
		if hook != nil {
			err = hook(len(group))
		}
		if err == nil {
			at, err = j.write(group, at)
		}

		c.mu.Lock()
		var behind []queued
		if err != nil {
			behind, c.queue = c.queue, nil
			last := group[len(group)-1].no
			if len(behind) > 0 {
				last = behind[len(behind)-1].no
			}
			c.lost = append(c.lost, lost{from: group[0].no, to: last, err: err})
			c.failed = err
			c.durable = last
		} else {
			j.at = at
			c.durable = group[len(group)-1].no
			c.stats.Batches += int64(len(group))
			c.stats.Transactions++
		}
		c.settled.Broadcast()
		c.mu.Unlock()

		for _, q := range group {
			if q.done != nil {
				q.done(err)
			}
		}
		for _, q := range behind {
			if q.done != nil {
				q.done(fmt.Errorf("journal: not written: a commit before it failed: %w", err))
			}
		}
	}
}

// write writes group in one transaction, from level at, and returns once
// it is durable and the anchor records it; it returns the new level.
func (j *Journal) write(group []queued, at level) (level, error) {
	tx, err := j.w.BeginTx(context.Background(), nil)
	if err != nil {
		return at, fmt.Errorf("journal: begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	seqs := make([]int64, len(group))
	for i, q := range group {
		if seqs[i], err = writeBatch(tx, q.b, &at); err != nil {
			return at, err
		}
	}
	if err := tx.Commit(); err != nil {
		return at, fmt.Errorf("journal: commit: %w", err)
	}
	if j.anchor != nil {
		j.anchor.advance(at)
	}
	for i, q := range group {
		if q.b.Entry != nil {
			q.b.Entry.Seq = seqs[i]
		}
	}
	return at, nil
}

// writeBatch writes b in tx, raising at to what it adds, and returns its
// command's number (0 without one).
func writeBatch(tx *sql.Tx, b *Batch, at *level) (int64, error) {
	var cmdSeq sql.NullInt64
	if e := b.Entry; e != nil {
		cmd, err := json.Marshal(e.Command)
		if err != nil {
			return 0, fmt.Errorf("journal: encode command: %w", err)
		}
		out, err := json.Marshal(e.Outcome)
		if err != nil {
			return 0, fmt.Errorf("journal: encode outcome: %w", err)
		}
		res, err := tx.Exec(`INSERT INTO commands(ticket, time, key_id, verb, command, reason, client_order_id, status, outcome)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			e.Ticket, formatTime(e.Time), e.KeyID, string(e.Command.Verb), cmd, e.Reason, e.ClientOrderID, string(e.Outcome.Status), out)
		if err != nil {
			return 0, fmt.Errorf("journal: record command: %w", err)
		}
		if cmdSeq.Int64, err = res.LastInsertId(); err != nil {
			return 0, fmt.Errorf("journal: record command: %w", err)
		}
		cmdSeq.Valid = true
		at.commands = cmdSeq.Int64
	}
	if b.pin != nil {
		if _, err := tx.Exec(`INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`,
			operatorKeyMeta, hex.EncodeToString(b.pin)); err != nil {
			return 0, fmt.Errorf("journal: pin the operator key: %w", err)
		}
	}
	for _, e := range b.Audit {
		seq, err := insertArming(tx, e)
		if err != nil {
			return 0, err
		}
		at.commands = max(at.commands, seq)
	}
	for _, ev := range b.Events {
		data, err := json.Marshal(ev)
		if err != nil {
			return 0, fmt.Errorf("journal: encode event: %w", err)
		}
		if _, err := tx.Exec(`INSERT INTO events(seq, command_seq, time, kind, data) VALUES (?, ?, ?, ?, ?)`,
			ev.Seq, cmdSeq, formatTime(ev.Time), string(ev.Kind), data); err != nil {
			return 0, fmt.Errorf("journal: record event %d: %w", ev.Seq, err)
		}
		at.events = max(at.events, ev.Seq)
	}
	for _, m := range b.Marks {
		if _, err := tx.Exec(`INSERT INTO marks(venue, symbol, price) VALUES (?, ?, ?)
			ON CONFLICT(venue, symbol) DO UPDATE SET price = excluded.price`, m.Venue, m.Symbol, m.Price.String()); err != nil {
			return 0, fmt.Errorf("journal: store mark: %w", err)
		}
	}
	for _, o := range b.Settle {
		out, err := json.Marshal(o)
		if err != nil {
			return 0, fmt.Errorf("journal: encode outcome: %w", err)
		}
		if _, err := tx.Exec(`INSERT INTO settlements(ticket, time, outcome) VALUES (?, ?, ?)`, o.Ticket, formatTime(o.Time), out); err != nil {
			return 0, fmt.Errorf("journal: settle ticket %s: %w", o.Ticket, err)
		}
	}
	if b.Tick > 0 {
		if _, err := tx.Exec(`UPDATE meta SET value = ? WHERE key = 'tick'`, strconv.FormatInt(b.Tick, 10)); err != nil {
			return 0, fmt.Errorf("journal: store tick: %w", err)
		}
	}
	return cmdSeq.Int64, nil
}

// pinBatch is the batch PinOperatorKey commits: the pin and, when e is not
// nil, its audit entry.
func pinBatch(pub ed25519.PublicKey, e *node.AuditEntry) *Batch {
	b := &Batch{pin: pub}
	if e != nil {
		b.Audit = []node.AuditEntry{*e}
	}
	return b
}
