package front

import (
	"encoding/json"
	"fmt"
	"strings"

	"wicket/agent/wire"
)

// A session of the 2025 protocol era outlives its access token: after a
// step-up (the client met 403 insufficient_scope, got a token of a wider
// scope for the same subject, and retries with the session's id) the
// session keeps its id and serves what the new token grants from that
// request on. Answering 404 instead would end it: the official Go SDK
// treats 404 as a terminal session loss and does not reopen one.
//
// What keeps this safe: only the same OAuth subject under the one issuer
// moves a session (never a bearer caller, never another subject); every
// request's own token is checked against the tool it calls before the
// session is looked up (stepUp, and batchScope inside a batch), so a
// request holding a narrower token never reaches a tool of a wider one,
// whatever scope the session last moved to.

// rescope moves sess, owned by owner, to caller when caller is the same
// OAuth subject under another grant; false (and nothing changed) when
// the session is another caller's. The move is the session's own trace
// entry (agent's Server.Rescope: who, the old profile and the new, the
// grant's scope; never the token), made once however many requests with
// the new token arrive together.
func (h *HTTPServer) rescope(sess *httpSession, owner string, caller Caller) bool {
	if caller.grant == "" || sess.caller != caller.Name || !strings.HasPrefix(owner, oauthOwnerPrefix) {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if sess.owner == caller.owner() {
		return true // moved by a request that arrived together
	}
	if err := sess.srv.Rescope(caller.Profile, caller.Deny, caller.grant); err != nil {
		h.log.Error("a session's scope did not move", "session", sess.srv.Session(), "err", err)
		return false
	}
	sess.owner = caller.owner()
	h.log.Info("session moved to the token's scope", "session", sess.srv.Session(), "caller", caller.Name, "scope", caller.grant)
	return true
}

// batchScope is stepUp's refusal text for a tools/call inside a batch,
// where no status can be answered for one element; "" when the caller's
// token serves the call.
func (h *HTTPServer) batchScope(caller Caller, m *wire.Message) string {
	if h.h.OAuth == nil {
		return ""
	}
	scope := h.h.OAuth.needsScope(caller, m)
	if scope == "" {
		return ""
	}
	return fmt.Sprintf("this call needs scope %s (the token grants %s): ask the authorization server for a token with %s", scope, caller.grant, scope)
}

// idOrNull is a message's id, or null for a notification.
func idOrNull(id json.RawMessage) json.RawMessage {
	if len(id) == 0 {
		return json.RawMessage("null")
	}
	return id
}
