package front

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// reserve adds sess under id when there is room for one more session of
// its caller: at the caller's share or at the cap it evicts an idle
// session (the caller's own at its share), under the lock each time, so
// initializes arriving together each find their room or a true refusal.
// "" means sess was added; else why not.
func (h *HTTPServer) reserve(id string, sess *httpSession) string {
	mine := func(s *httpSession) bool { return s.owner == sess.owner }
	share := h.share()
	// Each round either finds room, refuses, or evicts one session (which
	// a concurrent initialize may take): bounded by the cap.
	for range h.h.MaxSessions + 1 {
		h.mu.Lock()
		atShare, atCap := h.countLocked(mine) >= share, len(h.sessions) >= h.h.MaxSessions
		if !atShare && !atCap {
			h.sessions[id] = sess
			h.mu.Unlock()
			return ""
		}
		h.mu.Unlock()
		switch {
		case atShare && !h.evictIdlest(mine):
			return fmt.Sprintf("caller %q holds %d sessions, its share of this server's %d, all in use in the last minute; end one with DELETE, or retry later",
				sess.caller, share, h.h.MaxSessions)
		case !atShare && !h.evictIdlest(func(*httpSession) bool { return true }):
			return fmt.Sprintf("too many sessions (%d), all in use in the last minute; end one with DELETE, or retry later", h.h.MaxSessions)
		}
	}
	return fmt.Sprintf("too many sessions (%d): other sessions are opening at the same time; retry", h.h.MaxSessions)
}

// sweep drops sessions idle for longer than IdleTTL (never one serving a
// request).
func (h *HTTPServer) sweep() {
	cut := h.opts.Now().Add(-h.h.IdleTTL)
	var idle []string
	h.mu.Lock()
	for id, s := range h.sessions {
		if u, ok := s.idleSince(); ok && u.Before(cut) {
			idle = append(idle, id)
		}
	}
	h.mu.Unlock()
	for _, id := range idle {
		h.drop(id)
	}
}

// share is how many sessions one caller may hold: the cap split evenly
// among the configured callers (at least one each), so a caller that opens
// session after session cannot lock the others out; without callers
// (--no-auth) the one local operator has the whole cap.
func (h *HTTPServer) share() int {
	n := 0
	if h.h.Callers != nil {
		n = h.h.Callers.Len()
	}
	if h.h.OAuth != nil {
		n++ // each OAuth subject (and grant) has one caller's share
	}
	if n <= 1 && h.h.OAuth == nil {
		return h.h.MaxSessions
	}
	return max(1, h.h.MaxSessions/max(n, 2))
}

// count is how many live sessions match.
func (h *HTTPServer) count(match func(*httpSession) bool) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.countLocked(match)
}

func (h *HTTPServer) countLocked(match func(*httpSession) bool) int {
	n := 0
	for _, s := range h.sessions {
		if match(s) {
			n++
		}
	}
	return n
}

// evictIdlest drops the least recently used of the sessions among
// matches when it has been idle for at least a minute (a client that went
// away without DELETE), to make room for a new one. A session serving a
// request (a long call, an open GET stream) is in use, however long ago it
// began.
func (h *HTTPServer) evictIdlest(among func(*httpSession) bool) bool {
	var id string
	var oldest time.Time
	h.mu.Lock()
	for sid, s := range h.sessions {
		if !among(s) {
			continue
		}
		u, ok := s.idleSince()
		if ok && (id == "" || u.Before(oldest)) {
			id, oldest = sid, u
		}
	}
	h.mu.Unlock()
	if id == "" || h.opts.Now().Sub(oldest) < time.Minute {
		return false
	}
	h.drop(id)
	return true
}

// oneSession is the session-id manager of one session's transport: it
// knows exactly one id.
type oneSession struct {
	id         string
	mu         sync.Mutex
	terminated bool
}

func (o *oneSession) Generate() string { return o.id }

func (o *oneSession) Validate(id string) (bool, error) {
	if id != o.id {
		return false, errors.New("unknown session id")
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.terminated, nil
}

func (o *oneSession) Terminate(id string) (bool, error) {
	if id != o.id {
		return false, errors.New("unknown session id")
	}
	o.mu.Lock()
	o.terminated = true
	o.mu.Unlock()
	return false, nil
}
