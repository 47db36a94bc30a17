package gate

import (
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
)

// PreviewWindow is how long a preview token stays valid after Issue: a token
// issued at t confirms until just before t+PreviewWindow and is expired from
// t+PreviewWindow on.
const PreviewWindow = 60 * time.Second

// RememberWindow is how long a spent or expired token is remembered, so that a
// late confirm is told "already used" or "expired" instead of "unknown". It
// counts from the moment the token was spent or expired.
const RememberWindow = 10 * time.Minute

// Default caps, used when Options leaves them zero.
const (
	DefaultMax           = 1024 // outstanding, unexpired previews
	DefaultMaxRemembered = 4096 // spent or expired tokens remembered
)

// Command is the constraint on what a token binds to. SameIntent reports nil
// when confirming asks for the same thing as the receiver — the previewed,
// resolved command — and otherwise an error naming each differing field with
// both values. It must ignore a client order id that confirming omits (the
// preview minted one), compare decimals by value, and be a pure comparison:
// Take calls it with the gate's lock held, so it must not call back into the
// PendingPreviews.
//
// The node's command type satisfies Command structurally.
type Command[C any] interface {
	SameIntent(confirming C) error
}

// Options configure a PendingPreviews. The zero value is ready for production.
type Options struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// NewID mints token ids; nil means a random (version 4) uuid. Every id
	// must be a canonical lowercase uuid (see ParseToken) and never repeat:
	// Issue panics on an id source that breaks either rule.
	NewID func() string
	// Max caps the unexpired previews outstanding at once; Issue refuses
	// beyond it. Zero or less means DefaultMax.
	Max int
	// MaxRemembered caps how many spent or expired tokens are remembered
	// (each for RememberWindow); the oldest are forgotten first. Zero or less
	// means DefaultMaxRemembered.
	MaxRemembered int
}

// PendingPreviews holds the preview tokens a server has issued and not yet
// seen confirmed. It is safe for concurrent use. Create it with New.
type PendingPreviews[C Command[C]] struct {
	now           func() time.Time
	newID         func() string
	max           int
	maxRemembered int

	mu      sync.Mutex
	pending map[Token]*pending[C]
	// order holds pending entries in issue order, which is expiry order on
	// a clock that does not go back. Entries already taken stay until they
	// reach the front or the slice is compacted.
	order []*pending[C]
	// spent remembers spent and expired tokens; spentOrder is the order
	// they were retired in, oldest first, for forgetting.
	spent      map[Token]*retired
	spentOrder []Token
}

type pending[C any] struct {
	tok     Token
	tool    string
	cmd     C
	expires time.Time
}

// retired is what the gate remembers of a token that can no longer confirm.
type retired struct {
	tool      string
	at        time.Time // when it expired or was spent
	expired   bool      // expired unconfirmed; otherwise spent by a Take
	confirmed bool      // spent by a Take that matched
}

// New returns an empty PendingPreviews.
func New[C Command[C]](opts Options) *PendingPreviews[C] {
	p := &PendingPreviews[C]{
		now:           opts.Now,
		newID:         opts.NewID,
		max:           opts.Max,
		maxRemembered: opts.MaxRemembered,
		pending:       make(map[Token]*pending[C]),
		spent:         make(map[Token]*retired),
	}
	if p.now == nil {
		p.now = time.Now
	}
	if p.newID == nil {
		p.newID = uuid.NewString
	}
	if p.max <= 0 {
		p.max = DefaultMax
	}
	if p.maxRemembered <= 0 {
		p.maxRemembered = DefaultMaxRemembered
	}
	return p
}

// Issue mints a token for a preview of cmd by tool and returns it with its
// expiry, PreviewWindow from now. cmd is stored as given and is what Take
// returns: pass a value the caller will not change afterwards.
//
// The only error is an [*Error] of kind [KindTooMany] (errors.Is
// [ErrTooManyPreviews]) when Max unexpired previews are already outstanding.
func (p *PendingPreviews[C]) Issue(tool string, cmd C) (Token, time.Time, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	p.sweep(now)
	if len(p.pending) >= p.max {
		p.sweepAll(now)
		if len(p.pending) >= p.max {
			return "", time.Time{}, &Error{Kind: KindTooMany, Tool: tool, Max: p.max}
		}
	}
	id := p.newID()
	if why := tokenSyntax(id); why != "" {
		panic(fmt.Sprintf("gate: Options.NewID returned %q, which is not a canonical lowercase uuid: %s", id, why))
	}
	tok := Token(id)
	if _, dup := p.pending[tok]; dup {
		panic(fmt.Sprintf("gate: Options.NewID returned %q twice", id))
	}
	if _, dup := p.spent[tok]; dup {
		panic(fmt.Sprintf("gate: Options.NewID returned %q twice", id))
	}
	e := &pending[C]{tok: tok, tool: tool, cmd: cmd, expires: now.Add(PreviewWindow)}
	p.pending[tok] = e
	p.order = append(p.order, e)
	return tok, e.expires, nil
}

// Take spends tok for a confirming call of tool whose resolved command is
// confirming, and returns the stored command — the one the preview showed —
// for the caller to run. The token is removed before Take returns, so of any
// number of concurrent Takes of one token exactly one can succeed.
//
// Every Take spends the token, also when it fails: a token presented for
// another tool, or with a command that is not the same intent, is burned and
// the agent must preview again. The error is an [*Error] whose kind is
// [KindUnknown], [KindExpired], [KindUsed] or [KindMismatch]; on error the
// command returned is the zero value and nothing must be sent.
func (p *PendingPreviews[C]) Take(tool string, tok Token, confirming C) (C, error) {
	var zero C
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	p.sweep(now)

	e, ok := p.pending[tok]
	if !ok {
		r, ok := p.spent[tok]
		if !ok || !now.Before(r.at.Add(RememberWindow)) {
			return zero, &Error{Kind: KindUnknown, Tool: tool, Token: tok}
		}
		if r.expired {
			return zero, &Error{Kind: KindExpired, Tool: tool, Token: tok, IssuedFor: r.tool, At: r.at}
		}
		return zero, &Error{Kind: KindUsed, Tool: tool, Token: tok, IssuedFor: r.tool, At: r.at, Confirmed: r.confirmed}
	}

	// From here on the token is spent, whatever the outcome.
	delete(p.pending, tok)
	if !now.Before(e.expires) {
		p.retire(tok, &retired{tool: e.tool, at: e.expires, expired: true})
		if !now.Before(e.expires.Add(RememberWindow)) {
			return zero, &Error{Kind: KindUnknown, Tool: tool, Token: tok}
		}
		return zero, &Error{Kind: KindExpired, Tool: tool, Token: tok, IssuedFor: e.tool, At: e.expires}
	}
	r := &retired{tool: e.tool, at: now}
	p.retire(tok, r)
	if tool != e.tool {
		return zero, &Error{Kind: KindMismatch, Tool: tool, Token: tok, IssuedFor: e.tool}
	}
	if err := e.cmd.SameIntent(confirming); err != nil {
		return zero, &Error{Kind: KindMismatch, Tool: tool, Token: tok, IssuedFor: e.tool, Err: err}
	}
	r.confirmed = true
	return e.cmd, nil
}

// sweep retires expired tokens from the front of the issue order and drops
// entries already taken, then forgets what is past remembering. It is
// amortised O(1) per call. The caller holds p.mu.
func (p *PendingPreviews[C]) sweep(now time.Time) {
	n := 0
	for _, e := range p.order {
		if p.pending[e.tok] == e {
			if now.Before(e.expires) {
				break
			}
			delete(p.pending, e.tok)
			p.retire(e.tok, &retired{tool: e.tool, at: e.expires, expired: true})
		}
		n++
	}
	clear(p.order[:n]) // let the collector have the commands
	p.order = p.order[n:]
	// Taken entries behind a live one stay in order; compact when they
	// outnumber the live ones, so order never grows past about twice the
	// outstanding count.
	if len(p.order) > 2*len(p.pending)+32 {
		p.compact()
	}
	p.forget(now)
}

// sweepAll retires every expired token, wherever it sits in the order (a
// clock that went back can leave one behind a live entry). The caller holds
// p.mu.
func (p *PendingPreviews[C]) sweepAll(now time.Time) {
	for tok, e := range p.pending {
		if !now.Before(e.expires) {
			delete(p.pending, tok)
			p.retire(tok, &retired{tool: e.tool, at: e.expires, expired: true})
		}
	}
	p.compact()
	p.forget(now)
}

// compact drops taken entries from p.order. The caller holds p.mu.
func (p *PendingPreviews[C]) compact() {
	live := make([]*pending[C], 0, len(p.pending))
	for _, e := range p.order {
		if p.pending[e.tok] == e {
			live = append(live, e)
		}
	}
	p.order = live
}

// retire remembers tok as spent or expired, forgetting the oldest memory when
// the count cap is reached. The caller holds p.mu.
func (p *PendingPreviews[C]) retire(tok Token, r *retired) {
	p.spent[tok] = r
	p.spentOrder = append(p.spentOrder, tok)
	for len(p.spentOrder) > p.maxRemembered {
		delete(p.spent, p.spentOrder[0])
		p.spentOrder[0] = ""
		p.spentOrder = p.spentOrder[1:]
	}
}

// forget drops remembered tokens whose RememberWindow has passed, from the
// oldest on. Retirement order is close to time order; an entry kept a little
// long behind a younger one is still refused as unknown by Take, which checks
// the age itself. The caller holds p.mu.
func (p *PendingPreviews[C]) forget(now time.Time) {
	n := 0
	for _, tok := range p.spentOrder {
		if r, ok := p.spent[tok]; ok && now.Before(r.at.Add(RememberWindow)) {
			break
		}
		delete(p.spent, tok)
		n++
	}
	clear(p.spentOrder[:n])
	p.spentOrder = p.spentOrder[n:]
}
