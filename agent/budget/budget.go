// Package budget bounds what one agent session may send through the write
// tools: how many confirmed writes in all (MaxWrites), how much order
// notional in all (MaxNotional, decimal, valued at the preview's mark) and
// how many confirmed writes in any sliding minute (MaxPerMinute).
//
// A Session is owned by one MCP session (over HTTP each caller's session
// has its own). Previews cost nothing; a confirmed write reserves its share
// before it is sent (Reserve) and either keeps it once sent (Hold.Commit) or
// gives it back when nothing was sent (Hold.Release), so concurrent confirms
// can never overspend. A write that does not fit is refused whole — never
// resized — with a text saying what is left and that only the operator can
// widen the budget.
//
// budget never performs I/O, never reads a clock of its own (Now is
// injected) and never changes a command.
package budget

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"
)

// Window is the span MaxPerMinute counts over.
const Window = time.Minute

// WarnAt is the share of a budget whose crossing is warned about once.
var WarnAt = decimal.RequireFromString("0.8")

// Limits are one session's budgets. A zero value is no limit.
type Limits struct {
	MaxWrites    int             // confirmed writes in the session
	MaxNotional  decimal.Decimal // Σ confirmed order notional in the session
	MaxPerMinute int             // confirmed writes in any Window
}

// Names of the limits, as flags and wicket.toml spell them (the flag has
// a "--" and dashes, the toml key underscores).
const (
	NameWrites    = "max-writes"
	NameNotional  = "max-notional"
	NamePerMinute = "max-writes-per-minute"
)

// Validate refuses negative limits.
func (l Limits) Validate() error {
	switch {
	case l.MaxWrites < 0:
		return fmt.Errorf("%s %d must not be negative (0 means no limit)", NameWrites, l.MaxWrites)
	case l.MaxNotional.IsNegative():
		return fmt.Errorf("%s %s must not be negative (0 means no limit)", NameNotional, l.MaxNotional)
	case l.MaxPerMinute < 0:
		return fmt.Errorf("%s %d must not be negative (0 means no limit)", NamePerMinute, l.MaxPerMinute)
	}
	return nil
}

// IsZero reports whether no budget is set.
func (l Limits) IsZero() bool {
	return l.MaxWrites == 0 && l.MaxNotional.IsZero() && l.MaxPerMinute == 0
}

// String is the limits in flag form ("none" when unlimited).
func (l Limits) String() string {
	var parts []string
	if l.MaxWrites > 0 {
		parts = append(parts, fmt.Sprintf("--%s %d", NameWrites, l.MaxWrites))
	}
	if l.MaxNotional.IsPositive() {
		parts = append(parts, fmt.Sprintf("--%s %s", NameNotional, l.MaxNotional))
	}
	if l.MaxPerMinute > 0 {
		parts = append(parts, fmt.Sprintf("--%s %d", NamePerMinute, l.MaxPerMinute))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

// Refusal is a write the budget does not admit. Its Error text starts
// "REFUSED [budget] ".
type Refusal struct {
	Limit string // NameWrites, NameNotional or NamePerMinute
	Text  string
}

func (r *Refusal) Error() string { return r.Text }

// Session is one session's budgets and what it has spent.
type Session struct {
	limits Limits
	now    func() time.Time

	mu       sync.Mutex
	writes   int
	notional decimal.Decimal
	recent   []time.Time // reservations and sends inside the window
	warned   map[string]bool
	perMin   bool // the per-minute warning is armed (re-armed below WarnAt)
}

// New starts a session with limits (which must have passed Validate) and
// the clock now.
func New(l Limits, now func() time.Time) *Session {
	if now == nil {
		panic("budget.New: now is required")
	}
	return &Session{limits: l, now: now, warned: map[string]bool{}, perMin: true}
}

// Limits are the session's budgets.
func (s *Session) Limits() Limits { return s.limits }

// Hold is a reserved write: Commit keeps it (the command was sent), Release
// gives it back (nothing was sent). Either may be called once; later calls
// do nothing.
type Hold struct {
	s        *Session
	notional decimal.Decimal
	at       time.Time
	done     bool
}

// Reserve admits one confirmed write of the given notional (zero for a
// command that places no order) or refuses it with a *Refusal. valued is
// false when the order's notional is unknown: a notional budget then
// refuses it.
func (s *Session) Reserve(notional decimal.Decimal, valued bool) (*Hold, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.prune(now)
	l := s.limits
	if l.MaxWrites > 0 && s.writes >= l.MaxWrites {
		return nil, s.refuse(NameWrites, fmt.Sprintf("%d of %d confirmed writes used in this session, 0 left", s.writes, l.MaxWrites))
	}
	if l.MaxPerMinute > 0 && len(s.recent) >= l.MaxPerMinute {
		wait := s.recent[0].Add(Window).Sub(now).Round(time.Second)
		if wait < time.Second {
			wait = time.Second
		}
		return nil, s.refuse(NamePerMinute, fmt.Sprintf("%d of %d confirmed writes used in the last minute, 0 left; the next one fits in %s",
			len(s.recent), l.MaxPerMinute, wait))
	}
	if l.MaxNotional.IsPositive() {
		left := l.MaxNotional.Sub(s.notional)
		if !left.IsPositive() {
			left = decimal.Zero
		}
		switch {
		case !valued:
			return nil, s.refuse(NameNotional, fmt.Sprintf("this order cannot be valued (no mark for a market order), so it cannot be counted against the notional budget; %s of %s left",
				left, l.MaxNotional))
		case notional.GreaterThan(left):
			return nil, s.refuse(NameNotional, fmt.Sprintf("this order's notional %s exceeds what is left: %s of %s used in this session, %s left",
				notional, s.notional, l.MaxNotional, left))
		}
	}
	s.writes++
	s.notional = s.notional.Add(notional)
	s.recent = append(s.recent, now)
	return &Hold{s: s, notional: notional, at: now}, nil
}

func (s *Session) refuse(limit, detail string) *Refusal {
	return &Refusal{Limit: limit, Text: fmt.Sprintf("REFUSED [budget] %s: %s. Nothing was sent. Only the operator can widen a session budget "+
		"(by restarting wicket mcp with a larger --%s, or [agent] %s in wicket.toml); previews stay free.",
		limit, detail, limit, strings.ReplaceAll(limit, "-", "_"))}
}

// prune drops window entries older than Window; s.mu is held.
func (s *Session) prune(now time.Time) {
	cut := 0
	for cut < len(s.recent) && !s.recent[cut].Add(Window).After(now) {
		cut++
	}
	s.recent = s.recent[cut:]
}

// Commit keeps the write (it was sent) and returns the warnings it
// triggers: one per budget the first time its use reaches WarnAt (80 %), and
// for the per-minute budget each time the window climbs back to it.
func (h *Hold) Commit() []string {
	if h == nil || h.done {
		return nil
	}
	h.done = true
	s := h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prune(s.now())
	var out []string
	l := s.limits
	if l.MaxWrites > 0 && !s.warned[NameWrites] && reached(decimal.NewFromInt(int64(s.writes)), decimal.NewFromInt(int64(l.MaxWrites))) {
		s.warned[NameWrites] = true
		out = append(out, fmt.Sprintf("session budget %s is %d%% used: %d of %d confirmed writes, %d left; only the operator can widen it",
			NameWrites, pct(decimal.NewFromInt(int64(s.writes)), decimal.NewFromInt(int64(l.MaxWrites))), s.writes, l.MaxWrites, l.MaxWrites-s.writes))
	}
	if l.MaxNotional.IsPositive() && !s.warned[NameNotional] && reached(s.notional, l.MaxNotional) {
		s.warned[NameNotional] = true
		out = append(out, fmt.Sprintf("session budget %s is %d%% used: %s of %s, %s left; only the operator can widen it",
			NameNotional, pct(s.notional, l.MaxNotional), s.notional, l.MaxNotional, clampZero(l.MaxNotional.Sub(s.notional))))
	}
	if l.MaxPerMinute > 0 {
		n := decimal.NewFromInt(int64(len(s.recent)))
		if reached(n, decimal.NewFromInt(int64(l.MaxPerMinute))) {
			if s.perMin {
				s.perMin = false
				out = append(out, fmt.Sprintf("session budget %s is %d%% used: %d of %d confirmed writes in the last minute, %d left",
					NamePerMinute, pct(n, decimal.NewFromInt(int64(l.MaxPerMinute))), len(s.recent), l.MaxPerMinute, l.MaxPerMinute-len(s.recent)))
			}
		} else {
			s.perMin = true
		}
	}
	return out
}

// Release gives the reservation back: nothing was sent.
func (h *Hold) Release() {
	if h == nil || h.done {
		return
	}
	h.done = true
	s := h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes--
	s.notional = s.notional.Sub(h.notional)
	for i := len(s.recent) - 1; i >= 0; i-- {
		if s.recent[i].Equal(h.at) {
			s.recent = append(s.recent[:i], s.recent[i+1:]...)
			break
		}
	}
}

func reached(used, limit decimal.Decimal) bool {
	return used.GreaterThanOrEqual(limit.Mul(WarnAt))
}

func pct(used, limit decimal.Decimal) int64 {
	return used.Mul(decimal.NewFromInt(100)).Div(limit).IntPart()
}

func clampZero(d decimal.Decimal) decimal.Decimal {
	if d.IsNegative() {
		return decimal.Zero
	}
	return d
}

// Left is one budget's state, as wicket://session shows it. Used and Left
// are strings (decimal for notional); Left never goes below zero.
type Left struct {
	Limit string `json:"limit"`
	Used  string `json:"used"`
	Left  string `json:"left"`
}

// Status lists every budget that is set, with what is used and left.
func (s *Session) Status() map[string]Left {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prune(s.now())
	out := map[string]Left{}
	l := s.limits
	if l.MaxWrites > 0 {
		out[NameWrites] = Left{Limit: fmt.Sprint(l.MaxWrites), Used: fmt.Sprint(s.writes), Left: fmt.Sprint(max(0, l.MaxWrites-s.writes))}
	}
	if l.MaxNotional.IsPositive() {
		out[NameNotional] = Left{Limit: l.MaxNotional.String(), Used: s.notional.String(), Left: clampZero(l.MaxNotional.Sub(s.notional)).String()}
	}
	if l.MaxPerMinute > 0 {
		out[NamePerMinute] = Left{Limit: fmt.Sprint(l.MaxPerMinute), Used: fmt.Sprint(len(s.recent)), Left: fmt.Sprint(max(0, l.MaxPerMinute-len(s.recent)))}
	}
	return out
}
