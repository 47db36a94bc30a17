package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"wicket/node"
)

// An open `wicket approve` terminal is an operator's presence: while it
// runs it renews the node's dead man's switch ([risk] heartbeat, docs/node.md
// "Risk controls") with heartbeats signed by the operator key it already
// holds, as `wicket node heartbeat` does: one as it opens, then one every
// third of the node's heartbeat. It stops when the terminal closes, so a
// person who walks away leaves the switch to lapse. --http and --oauth do
// not beat: a link served away from the desk says nothing of a person at it.

// heartbeatClient is the node's heartbeat (*node.Client).
type heartbeatClient interface {
	Heartbeat(ctx context.Context, op ed25519.PrivateKey) (node.HeartbeatState, error)
}

// beatRetry is how long the terminal waits to try again after a heartbeat
// the node did not take (its clock).
const beatRetry = 30 * time.Second

// beater renews the heartbeat for one approve session.
type beater struct {
	node  heartbeatClient
	key   ed25519.PrivateKey // the operator's
	now   func() time.Time
	ticks <-chan time.Time // when to look at the clock again
	out   io.Writer

	next  time.Time       // when the next heartbeat is due (zero: now)
	noted map[string]bool // notes printed once
}

// run beats until ctx ends or the node says it has no dead man's switch.
func (b *beater) run(ctx context.Context) {
	for b.step(ctx) {
		select {
		case <-ctx.Done():
			return
		case <-b.ticks:
		}
	}
}

// step sends a heartbeat when one is due; it reports whether to go on.
func (b *beater) step(ctx context.Context) bool {
	now := b.now()
	if now.Before(b.next) {
		return true
	}
	rctx, cancel := context.WithTimeout(ctx, nodeCallTimeout)
	h, err := b.node.Heartbeat(rctx, b.key)
	cancel()
	var ne *node.Error
	switch {
	case errors.As(err, &ne) && ne.Code == "no_heartbeat":
		return false // the node keeps no dead man's switch: nothing to renew
	case err != nil:
		if ctx.Err() != nil {
			return false
		}
		b.note(fmt.Sprintf("note: this terminal could not renew the node's dead man's switch (it tries again): %v", err))
		b.next = now.Add(beatRetry)
		return true
	}
	every, perr := time.ParseDuration(h.Every)
	if perr != nil || every <= 0 {
		b.note(fmt.Sprintf("note: the node's heartbeat %q is not a duration; this terminal renews it every %s", h.Every, beatRetry))
		every = 3 * beatRetry
	}
	b.note(fmt.Sprintf("The node's dead man's switch (heartbeat %s) is renewed, signed with the operator key, while this terminal is open.", h.Every))
	b.next = now.Add(every / 3)
	return true
}

// note prints msg once per session.
func (b *beater) note(msg string) {
	if b.noted == nil {
		b.noted = map[string]bool{}
	}
	if !b.noted[msg] {
		b.noted[msg] = true
		fmt.Fprintln(b.out, msg)
	}
}

// start runs b beside the approver's session; the returned func stops it
// and waits for it.
func (b *beater) start(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

// lockedWriter serializes writes from the approver and its beater.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
