package agent

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"wicket/agent/approval"
	"wicket/agent/budget"
	"wicket/node"
	"wicket/trace"
)

// Approval in protocol 2026-07-28 (--approval elicit), where a server can
// no longer ask the client mid-call: a confirmed write answers an
// input_required result carrying the approval form and a requestState
// the server signs (HMAC-SHA256 with a key made when the server starts)
// over a nonce, the preview token, the digest of the call's arguments and
// the expiry. The client asks its person and retries the same call with
// the answer and that state; the retry is honoured once: the nonce names
// the parked write (its preview, taken from the gate, and its budget
// hold), which the retry removes. A forged or altered state, another
// token or other arguments, a second retry or one after the expiry
// sends nothing. A parked write nobody answers gives its budget back when
// it expires. It never accepts an answer it did not ask for, and never
// sends a command other than the one previewed.

const approvalInputID = "approval"

// approvalRounds are one server's parked writes awaiting a person's answer.
type approvalRounds struct {
	key []byte

	mu     sync.Mutex
	parked map[string]*parkedWrite // by nonce
}

type parkedWrite struct {
	tool, tok, digest string
	p                 node.Preview
	hold              *budget.Hold
	expires           time.Time
}

// requestState is what the signed state says.
type requestState struct {
	Nonce   string `json:"n"`
	Token   string `json:"t"`
	Digest  string `json:"d"`
	Expires int64  `json:"e"` // unix milliseconds
}

func newApprovalRounds() *approvalRounds {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	return &approvalRounds{key: key, parked: map[string]*parkedWrite{}}
}

type roundTripKey struct{}

type roundTrip struct {
	params mcp.MultiRoundTripParams
	digest string
}

// withRoundTrip carries a confirm's multi round-trip parameters and the
// digest of its arguments to the write loop.
func withRoundTrip(ctx context.Context, p mcp.MultiRoundTripParams, digest string) context.Context {
	return context.WithValue(ctx, roundTripKey{}, roundTrip{params: p, digest: digest})
}

func roundTripFrom(ctx context.Context) roundTrip {
	rt, _ := ctx.Value(roundTripKey{}).(roundTrip)
	return rt
}

// commandDigest binds a state to one tool and its exact arguments
// (decoded and re-encoded, so key order and spacing do not matter).
func commandDigest(tool string, raw json.RawMessage) string {
	var v any
	canon := []byte(raw)
	if json.Unmarshal(raw, &v) == nil {
		canon, _ = json.Marshal(v)
	}
	sum := sha256.Sum256(append([]byte(tool+"\x00"), canon...))
	return hex.EncodeToString(sum[:])
}

func (a *approvalRounds) sign(st requestState) string {
	payload, _ := json.Marshal(st)
	mac := hmac.New(sha256.New, a.key)
	mac.Write(payload)
	return base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func (a *approvalRounds) verify(state string) (requestState, bool) {
	var st requestState
	p64, m64, ok := strings.Cut(state, ".")
	if !ok {
		return st, false
	}
	payload, err1 := base64.RawURLEncoding.DecodeString(p64)
	got, err2 := base64.RawURLEncoding.DecodeString(m64)
	if err1 != nil || err2 != nil {
		return st, false
	}
	mac := hmac.New(sha256.New, a.key)
	mac.Write(payload)
	if !hmac.Equal(got, mac.Sum(nil)) || json.Unmarshal(payload, &st) != nil {
		return st, false
	}
	return st, true
}

// sweep gives back the budget of parked writes past their expiry.
func (a *approvalRounds) sweep(now time.Time) {
	a.mu.Lock()
	var gone []*parkedWrite
	for n, w := range a.parked {
		if now.After(w.expires) {
			gone = append(gone, w)
			delete(a.parked, n)
		}
	}
	a.mu.Unlock()
	for _, w := range gone {
		w.hold.Release()
	}
}

// askModern parks a confirmed write and answers the approval form as an
// input_required result; a client without elicitation is refused.
func (l *writeLoop) askModern(ctx context.Context, tool string, p node.Preview, tok string, hold *budget.Hold, req approval.Request) *result {
	refused := func(text, outcome string) *result {
		hold.Release()
		r := refuse(text)
		r.token, r.clientOrderID, r.approval = tok, p.Command.ClientOrderID, outcome
		return r
	}
	info := server.RequestProtocolInfoFromContext(ctx)
	if info == nil || info.ClientCapabilities == nil || info.ClientCapabilities.Elicitation == nil {
		return refused("REFUSED [approval] this server asks a person to approve every confirmed write (--approval elicit), "+
			"and your client did not declare the elicitation capability, so nobody can be asked. Nothing was sent. "+
			"Use a client that supports MCP elicitation, or ask the operator (only the operator can change the approval mode).", approval.Unsupported)
	}
	rt := roundTripFrom(ctx)
	if rt.params.RequestState != "" {
		return refused("REFUSED [approval] this retry's requestState does not belong to this command. Nothing was sent; preview again.", approval.Declined)
	}
	now := l.now()
	l.rounds.sweep(now)
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	st := requestState{Nonce: hex.EncodeToString(nonce), Token: tok, Digest: rt.digest, Expires: req.Expires.UnixMilli()}
	l.rounds.mu.Lock()
	l.rounds.parked[st.Nonce] = &parkedWrite{tool: tool, tok: tok, digest: rt.digest, p: p, hold: hold, expires: req.Expires}
	l.rounds.mu.Unlock()
	in := server.NewInputRequestBuilder(l.rounds.sign(st)).Elicit(approvalInputID, mcp.ElicitationParams{
		Message:         req.Elicitation(now),
		RequestedSchema: elicitSchema,
	}).ToolResult()
	return &result{input: in, verdict: trace.Preview, token: tok, clientOrderID: p.Command.ClientOrderID, outcome: "input_required"}
}

// resume honours the retry that carries the person's answer: ok is false
// when the call carries no requestState (an ordinary confirm).
func (l *writeLoop) resume(ctx context.Context, tool, tok string, send func(node.Preview) *result) (*result, bool) {
	rt := roundTripFrom(ctx)
	if rt.params.RequestState == "" || !server.IsModernRequest(ctx) {
		return nil, false
	}
	refused := func(text, outcome string) (*result, bool) {
		r := refuse(text)
		r.token, r.approval = tok, outcome
		return r, true
	}
	st, valid := l.rounds.verify(rt.params.RequestState)
	if !valid {
		return refused("REFUSED [approval] the requestState was not issued by this server or was altered. Nothing was sent; preview again.", approval.Declined)
	}
	if st.Token != tok || st.Digest != rt.digest {
		return refused("REFUSED [approval] this requestState was issued for another command. Nothing was sent; retry with the same arguments, or preview again.", approval.Declined)
	}
	now := l.now()
	l.rounds.sweep(now)
	l.rounds.mu.Lock()
	w := l.rounds.parked[st.Nonce]
	delete(l.rounds.parked, st.Nonce)
	l.rounds.mu.Unlock()
	if w == nil || w.tool != tool {
		return refused("REFUSED [approval] this approval was already answered, or it expired at "+time.UnixMilli(st.Expires).UTC().Format(time.RFC3339)+
			". Nothing was sent; preview again if the command is still wanted.", approval.Timeout)
	}
	answer := server.ElicitationResponse(rt.params.InputResponses, approvalInputID)
	var outcome, text string
	switch {
	case answer == nil:
		outcome, text = approval.Declined, "REFUSED [approval] the retry carried no answer to the approval request. Nothing was sent; preview again."
	case answer.Action == mcp.ElicitationResponseActionAccept && approved(answer.Content):
		outcome = approval.Accepted
	case answer.Action == mcp.ElicitationResponseActionCancel:
		outcome, text = approval.Declined, "REFUSED [approval] the person cancelled the approval request. Nothing was sent; do not retry unless they ask."
	default:
		outcome, text = approval.Declined, "REFUSED [approval] the person declined this command. Nothing was sent; do not retry unless they ask."
	}
	if outcome != approval.Accepted {
		w.hold.Release()
		r, _ := refused(text, outcome)
		r.clientOrderID = w.p.Command.ClientOrderID
		return r, true
	}
	return l.sendHeld(ctx, w.hold, outcome, "", func() *result { return send(w.p) }), true
}
