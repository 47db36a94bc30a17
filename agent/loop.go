package agent

// The write loop: what stands between a valid preview token and the node
// once the token is taken — the session's budgets (package agent/budget)
// and, with --approval elicit|operator, a person's explicit accept (package
// agent/approval). A toolbox owns one writeLoop, so every MCP session has
// its own budgets. The hooks into the write tools are three calls:
// loop.recorder and loop.quoted in preview, loop.gated around send.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/shopspring/decimal"

	"wicket/agent/approval"
	"wicket/agent/budget"
	"wicket/internal/project"
	"wicket/node"
	"wicket/node/guardrail"
)

// Loop configures the write loop (Options.Loop). The zero value is today's
// behaviour: no approval, no budget.
type Loop struct {
	Approval string        // project.ApprovalNone (""), ApprovalElicit or ApprovalOperator
	Timeout  time.Duration // how long a person has; capped at the preview's expiry (0: until it)
	Budget   budget.Limits
	// Queue is the process's operator queue; required for operator approval.
	Queue *approval.Queue
	// Project names the project in operator requests.
	Project string
}

// Validate checks the mode and the budgets.
func (l Loop) Validate() error {
	if l.Approval != "" {
		if err := project.ValidApproval(l.Approval); err != nil {
			return &UsageError{msg: "--approval: " + err.Error()}
		}
	}
	if l.Approval == project.ApprovalOperator && l.Queue == nil {
		return &UsageError{msg: "--approval operator needs a project (its settings/state holds the approval socket)"}
	}
	if l.Timeout < 0 {
		return &UsageError{msg: "--approval-timeout must not be negative"}
	}
	if err := l.Budget.Validate(); err != nil {
		return &UsageError{msg: err.Error()}
	}
	return nil
}

func (l Loop) mode() string {
	if l.Approval == "" {
		return project.ApprovalNone
	}
	return l.Approval
}

// instructions is the sentence the initialize instructions carry about
// approval and budgets (only when a write tool is served).
func (l Loop) instructions(writes bool) string {
	if !writes {
		return ""
	}
	var parts []string
	switch l.mode() {
	case project.ApprovalElicit:
		parts = append(parts, "A person approves every confirmed write: the confirm asks the user through your client (an elicitation request) "+
			"and only an explicit accept sends; a decline, cancel, timeout or a client without elicitation refuses it (REFUSED [approval]) and nothing is sent. "+
			"Do not retry a declined command unless the user asks.")
	case project.ApprovalOperator:
		parts = append(parts, "A person approves every confirmed write: the confirm waits, inside the preview window, for an operator at a terminal "+
			"running `wicket approve` (an operator command, not a tool); no decision in time refuses it (REFUSED [approval]) and nothing is sent.")
	}
	if !l.Budget.IsZero() {
		parts = append(parts, "This session has write budgets ("+l.Budget.String()+"); wicket://session shows what is left, "+
			"a spent budget refuses with REFUSED [budget], and only the operator can widen it.")
	}
	if len(parts) == 0 {
		return ""
	}
	return "\n" + strings.Join(parts, "\n")
}

// writeLoop is one session's loop state.
type writeLoop struct {
	cfg    Loop
	now    func() time.Time
	budget *budget.Session

	session  string                                                  // set once the server has its session id
	announce func(context.Context, mcp.LoggingLevel, string, string) // the server's notices (listen.go), set with session

	mu     sync.Mutex
	quotes map[string]quote // by preview token

	rounds *approvalRounds // approvals asked through multi round-trip requests (mrtr.go)
}

// quote is what a preview saw that the confirm needs: the order's value at
// the preview's mark and the venue's facts.
type quote struct {
	notional decimal.Decimal
	valued   bool
	venue    string
	expires  time.Time
}

func newWriteLoop(cfg Loop, now func() time.Time) *writeLoop {
	return &writeLoop{cfg: cfg, now: now, budget: budget.New(cfg.Budget, now), quotes: map[string]quote{}, rounds: newApprovalRounds()}
}

// snapRecorder is a Node that keeps the snapshot a preview reads, so the
// confirm values the order at exactly the preview's mark.
type snapRecorder struct {
	Node
	snap *node.Snapshot
}

func (r *snapRecorder) Snapshot(ctx context.Context, venue string, events int) (*node.Snapshot, error) {
	s, err := r.Node.Snapshot(ctx, venue, events)
	if err == nil {
		r.snap = s
	}
	return s, err
}

// recorder wraps n for one preview.
func (l *writeLoop) recorder(n Node) *snapRecorder { return &snapRecorder{Node: n} }

// quoted remembers what the preview behind tok saw, until it expires, and
// returns the notes the preview adds about approval and budgets.
func (l *writeLoop) quoted(tok string, expires time.Time, p node.Preview, rec *snapRecorder) []string {
	var view guardrail.View
	if rec.snap != nil {
		view = rec.snap
	}
	n, valued := budget.Notional(p.Command, view)
	l.keep(tok, quote{notional: n, valued: valued, venue: venueWords(p, rec.snap), expires: expires})
	return l.notes(n, valued)
}

// keep stores the quote of the preview behind tok, dropping expired ones.
func (l *writeLoop) keep(tok string, q quote) {
	l.mu.Lock()
	now := l.now()
	for k, old := range l.quotes {
		if now.After(old.expires) {
			delete(l.quotes, k)
		}
	}
	l.quotes[tok] = q
	l.mu.Unlock()
}

// notes are what a preview says about approval and the session's budgets
// for a write of notional n (valued: n is known).
func (l *writeLoop) notes(n decimal.Decimal, valued bool) []string {
	var notes []string
	switch l.cfg.mode() {
	case project.ApprovalElicit:
		notes = append(notes, "when you confirm, the user is asked through your client to approve this command, and only their explicit accept sends it")
	case project.ApprovalOperator:
		notes = append(notes, "when you confirm, the call waits for an operator to approve this command with `wicket approve`, and only their approval sends it")
	}
	if st := l.budget.Status(); len(st) > 0 {
		var parts []string
		for _, name := range []string{budget.NameWrites, budget.NameNotional, budget.NamePerMinute} {
			if b, ok := st[name]; ok {
				parts = append(parts, fmt.Sprintf("%s %s of %s left", name, b.Left, b.Limit))
			}
		}
		what := "it counts as one write"
		if l.cfg.Budget.MaxNotional.IsPositive() {
			if valued {
				what += " and " + n.String() + " of notional"
			} else {
				what += "; it cannot be valued (no mark), so the notional budget will refuse it"
			}
		}
		notes = append(notes, "session budget: "+strings.Join(parts, ", ")+"; if confirmed, "+what)
	}
	return notes
}

func (l *writeLoop) take(tok string, p node.Preview) quote {
	l.mu.Lock()
	q, ok := l.quotes[tok]
	delete(l.quotes, tok)
	l.mu.Unlock()
	if !ok { // not seen at preview time: value without a mark
		q.notional, q.valued = budget.Notional(p.Command, nil)
		q.venue = venueWords(p, nil)
		q.expires = l.now().Add(time.Minute)
	}
	return q
}

// venueWords is, in plain words, each venue the command touches as the
// preview's snapshot showed it — its kind, environment (paper, testnet or
// live: real money) and armed state, a live venue first — and the node's
// trading state.
func venueWords(p node.Preview, snap *node.Snapshot) string {
	name := p.Command.Venue
	if snap == nil {
		if name == "" {
			return "every venue (the node could not be read at preview time, so its environment and armed state are unknown)"
		}
		return name + " (the node could not be read at preview time, so its environment and armed state are unknown)"
	}
	currency := map[string]string{}
	for _, v := range snap.Venues {
		currency[v.Name] = v.Currency
	}
	var live, other []string
	for _, v := range p.Venues {
		w := oneVenueWords(v, currency[v.Name])
		if v.Environment == envLive {
			live = append(live, w)
		} else {
			other = append(other, w)
		}
	}
	all := append(live, other...)
	if len(all) == 0 {
		all = append(all, name+": not in the node's snapshot")
	}
	return strings.Join(all, "; ") + fmt.Sprintf("; node trading state %s", snap.TradingState)
}

// envLive is the environment of a real-money venue (node.Venue.Environment).
const envLive = "live"

// oneVenueWords is one venue's environment and armed state.
func oneVenueWords(v node.PreviewVenue, currency string) string {
	var env string
	switch {
	case v.Environment == envLive:
		env = "LIVE (real money)"
	case v.Kind == "paper":
		env = "paper (simulated by the node; nothing reaches an exchange)"
	case v.Environment == "paper":
		env = "paper (the broker's paper account; no real money)"
	case v.Environment == "testnet":
		env = "testnet (the exchange's test network; no real money)"
	case v.Environment == "":
		env = "not shown by the node"
	default:
		env = v.Environment
	}
	var armed string
	switch {
	case v.Kind == "paper":
		armed = "armed (a paper venue always is)"
	case v.Armed && !v.ArmedUntil.IsZero():
		armed = "armed by an operator until " + v.ArmedUntil.UTC().Format("2006-01-02 15:04:05 UTC")
	case v.Armed:
		armed = "armed by an operator"
	default:
		armed = "DISARMED: the node refuses its orders until an operator arms it at a terminal"
	}
	w := fmt.Sprintf("%s (%s venue): environment %s; %s", v.Name, v.Kind, env, armed)
	if v.Environment == envLive {
		w = "LIVE VENUE, REAL MONEY: " + w
	}
	if currency != "" {
		w += "; currency " + currency
	}
	return w
}

func dryRunWords(p node.Preview) string {
	v := p.DryRun
	if v == nil {
		return "none was asked (the node could not be reached at preview time)"
	}
	if v.WouldAccept {
		return fmt.Sprintf("the node would accept it (trading state %s)", v.TradingState)
	}
	return fmt.Sprintf("the node would REJECT it: %s (trading state %s)", v.Reason, v.TradingState)
}

// gated runs a confirmed write whose token was taken: the budget first,
// then the person (if the mode asks for one), then send. Anything that
// refuses sends nothing and gives the budget back.
func (l *writeLoop) gated(ctx context.Context, tool string, p node.Preview, tok string, send func() *result) *result {
	q := l.take(tok, p)
	req := approval.Request{
		ID: tok, Session: l.session, Tool: tool, Command: approval.Words(p.Command), Reason: p.Reason,
		Guardrail: p.Guardrail.Summary(), DryRun: dryRunWords(p), Venue: q.venue, Attention: p.Attention(), Project: l.cfg.Project,
	}
	return l.approveAndSend(ctx, tool, p, tok, q, req, send)
}

// approveAndSend reserves q's budget, asks the person req describes (if
// the mode asks for one) and sends; anything that refuses sends nothing
// and gives the budget back. p is what a parked approval keeps
// (deployments park a zero Preview: their retry carries the same call).
func (l *writeLoop) approveAndSend(ctx context.Context, tool string, p node.Preview, tok string, q quote, req approval.Request,
	send func() *result) *result {
	refused := func(text, outcome, by string) *result {
		r := refuse(text)
		r.token, r.clientOrderID, r.approval, r.approvedBy = tok, p.Command.ClientOrderID, outcome, by
		return r
	}
	hold, err := l.budget.Reserve(q.notional, q.valued)
	if err != nil {
		return refused(err.Error(), "", "")
	}
	outcome, by := "", ""
	if mode := l.cfg.mode(); mode != project.ApprovalNone {
		deadline := q.expires
		if l.cfg.Timeout > 0 && l.now().Add(l.cfg.Timeout).Before(deadline) {
			deadline = l.now().Add(l.cfg.Timeout)
		}
		req.Expires = deadline
		if mode == project.ApprovalElicit && server.IsModernRequest(ctx) {
			return l.askModern(ctx, tool, p, tok, hold, req) // mrtr.go: the person answers in the client's retry
		}
		var text string
		if mode == project.ApprovalElicit {
			outcome, text = l.elicit(ctx, req)
		} else {
			outcome, by, text = l.operator(ctx, req)
		}
		if outcome != approval.Accepted {
			hold.Release()
			return refused(text, outcome, by)
		}
	}
	return l.sendHeld(ctx, hold, outcome, by, send)
}

// sendHeld sends a command whose budget is held and whose approval (if
// any) is given.
func (l *writeLoop) sendHeld(ctx context.Context, hold *budget.Hold, outcome, by string, send func() *result) *result {
	// From here the command is sent (or maybe sent), so it counts. The
	// warnings go out before the send: a notification emitted during the
	// node's round trip reaches an HTTP client on the call's stream, while
	// one emitted just before the handler returns can be lost there (mcp-go
	// v1.2.1's POST forwarder drops a notification it has taken off the
	// session's channel once the response path has closed the stream).
	warnings := hold.Commit()
	for _, w := range warnings {
		l.notify(ctx, mcp.LoggingLevelWarning, "budget", w)
	}
	res := send()
	res.approval, res.approvedBy = outcome, by
	if m, ok := res.structured.(map[string]any); ok {
		if outcome != "" {
			m["approval"] = map[string]any{"mode": l.cfg.mode(), "outcome": outcome, "by": by}
		}
		if st := l.budget.Status(); len(st) > 0 {
			m["budget"] = st
		}
		if len(warnings) > 0 {
			m["warnings"] = warnings
		}
	}
	return res
}

// elicit asks the person through the client.
func (l *writeLoop) elicit(ctx context.Context, req approval.Request) (outcome, text string) {
	srv := server.ServerFromContext(ctx)
	sess := server.ClientSessionFromContext(ctx)
	ci, ok := sess.(server.SessionWithClientInfo)
	if srv == nil || !ok || ci.GetClientCapabilities().Elicitation == nil {
		return approval.Unsupported, "REFUSED [approval] this server asks a person to approve every confirmed write (--approval elicit), " +
			"and your client did not declare the elicitation capability, so nobody can be asked. Nothing was sent. " +
			"Use a client that supports MCP elicitation, or ask the operator (only the operator can change the approval mode)."
	}
	ectx, cancel := context.WithDeadline(ctx, req.Expires)
	defer cancel()
	res, err := srv.RequestElicitation(ectx, mcp.ElicitationRequest{Params: mcp.ElicitationParams{
		Message:         req.Elicitation(l.now()),
		RequestedSchema: elicitSchema,
	}})
	switch {
	case err != nil && errors.Is(ectx.Err(), context.DeadlineExceeded):
		return approval.Timeout, "REFUSED [approval] nobody answered the approval request before " + req.Expires.UTC().Format(time.RFC3339) +
			". Nothing was sent; preview again if the command is still wanted."
	case err != nil && ctx.Err() != nil:
		return approval.Timeout, "REFUSED [approval] the call ended before the person answered. Nothing was sent."
	case err != nil:
		return approval.Unsupported, "REFUSED [approval] the client could not ask the person (" + err.Error() + "). Nothing was sent."
	case res.Action == mcp.ElicitationResponseActionAccept && approved(res.Content):
		return approval.Accepted, ""
	case res.Action == mcp.ElicitationResponseActionCancel:
		return approval.Declined, "REFUSED [approval] the person cancelled the approval request. Nothing was sent; do not retry unless they ask."
	default:
		return approval.Declined, "REFUSED [approval] the person declined this command. Nothing was sent; do not retry unless they ask."
	}
}

// elicitSchema asks for one explicit yes.
var elicitSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"approve": map[string]any{"type": "boolean", "title": "Send this command",
			"description": "true sends the command exactly as shown; anything else sends nothing"},
	},
	"required": []string{"approve"},
}

// approved reads {"approve": true} from an accepted elicitation's content.
func approved(content any) bool {
	m, ok := content.(map[string]any)
	if !ok {
		return false
	}
	v, ok := m["approve"].(bool)
	return ok && v
}

// operator waits on the operator queue.
func (l *writeLoop) operator(ctx context.Context, req approval.Request) (outcome, by, text string) {
	l.notify(ctx, mcp.LoggingLevelNotice, "approval", fmt.Sprintf("waiting until %s for the operator to approve %s: they run `wicket approve` in the project",
		req.Expires.UTC().Format(time.RFC3339), req.Command))
	d, err := l.cfg.Queue.Wait(ctx, req, req.Expires)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return approval.Timeout, "", "REFUSED [approval] no operator approved this command before " + req.Expires.UTC().Format(time.RFC3339) +
			" (they approve with `wicket approve`). Nothing was sent; preview again if it is still wanted."
	case err != nil:
		return approval.Timeout, "", "REFUSED [approval] the call ended before the operator decided. Nothing was sent."
	case d.Approved:
		return approval.Accepted, d.By, ""
	default:
		return approval.Declined, d.By, "REFUSED [approval] the operator declined this command. Nothing was sent; do not retry unless asked."
	}
}

// status is the wicket://session entry.
func (l *writeLoop) status() (map[string]any, map[string]budget.Left) {
	if l == nil { // a server built without New (tests over a bare registry)
		return map[string]any{"mode": project.ApprovalNone}, map[string]budget.Left{}
	}
	a := map[string]any{"mode": l.cfg.mode()}
	if l.cfg.mode() != project.ApprovalNone && l.cfg.Timeout > 0 {
		a["timeout"] = l.cfg.Timeout.String()
	}
	if l.cfg.Queue != nil {
		a["approve_with"] = "wicket approve (an operator command at a terminal)"
	}
	return a, l.budget.Status()
}

// notify hands a notice of the call ctx to the server (listen.go): a
// legacy client hears it as notifications/message on the call's own
// stream, a modern one on its subscriptions/listen streams.
func (l *writeLoop) notify(ctx context.Context, level mcp.LoggingLevel, logger, text string) {
	if l.announce != nil {
		l.announce(ctx, level, logger, text)
	}
}
