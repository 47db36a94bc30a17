package front

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"wicket/agent"
	"wicket/agent/wire"
)

// Protocol 2026-07-28 over Streamable HTTP: the stateless era. A modern
// request names its version in params._meta and in the
// Mcp-Protocol-Version header, carries no Mcp-Session-Id, and is served
// beside the legacy sessions on the same endpoint. What a legacy session
// holds (pending previews, budgets, approval, the trace session id) lives
// with the caller in this era: every modern request of one caller (a
// bearer caller, an OAuth subject under one grant, or the one local
// operator under --no-auth) is served by that caller's own Server, so a
// preview token issued to one caller never confirms for another. mcp-go's
// own modern path does the rest (server/discover, _meta, resultType,
// ttlMs/cacheScope, the Mcp-Method/Mcp-Name checks).
//
// Logging is served to legacy sessions only (agent's modernDiscover).
//
// The front desk adds three rules here, each with a test: a modern GET or
// DELETE is 405 (there is no session to stream or end), a modern batch is
// refused (the revision has none), and the callers' states are bounded
// (MaxSessions, idle ones dropped after IdleTTL, the idlest evicted at
// the cap).

// modernVersion is the 2026-07-28-or-later version a request names in its
// Mcp-Protocol-Version header or its params._meta, or "" for a legacy
// request. Either source is enough: mcp-go refuses a request whose two
// disagree (-32001, header mismatch), so a modern request never reaches a
// legacy session.
func modernVersion(header http.Header, body []byte) string {
	if v := header.Get(mcp.HeaderProtocolVersion); mcp.IsModernProtocol(v) {
		return v
	}
	var env struct {
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if len(body) == 0 || body[0] != '{' || json.Unmarshal(body, &env) != nil {
		return ""
	}
	var v string
	if json.Unmarshal(env.Params.Meta[mcp.MetaKeyProtocolVersion], &v) != nil || !mcp.IsModernProtocol(v) {
		return ""
	}
	return v
}

// refuseModernVerb answers a GET or DELETE of a modern client: the
// revision has no session to stream on or to end.
func refuseModernVerb(w http.ResponseWriter, verb string) {
	closeAfter(w)
	w.Header().Set("Allow", http.MethodPost)
	httpError(w, http.StatusMethodNotAllowed, verb+" is not part of protocol "+mcp.ProtocolVersion20260728+
		": send every request with POST, and open subscriptions/listen for notifications")
}

// modernBatchRefusal is the answer to a JSON array sent as a modern
// request.
func modernBatchRefusal(version string) []byte {
	return wire.Error(json.RawMessage("null"), mcp.INVALID_REQUEST,
		fmt.Sprintf("batch refused: protocol version %s has no JSON-RPC batches; send one message at a time", version))
}

// callerState is the caller's modern-era state, opened on its first
// modern request. It is marked busy: the caller must leave it.
func (h *HTTPServer) callerState(w http.ResponseWriter, caller Caller) (*httpSession, bool) {
	owner := caller.owner()
	h.mu.Lock()
	st := h.modern[owner]
	if st != nil {
		st.enter(h.opts.Now()) // under h.mu: an eviction sees it busy
		h.mu.Unlock()
		return st, true
	}
	h.mu.Unlock()
	h.sweepModern()
	srv, err := h.open(agent.Seat{Caller: caller.Name, Profile: caller.Profile, Deny: caller.Deny,
		Transport: "streamable HTTP at " + h.h.Addr + " (protocol " + mcp.ProtocolVersion20260728 + ", per caller)"})
	if err != nil {
		httpError(w, http.StatusInternalServerError, "cannot open this caller's state: "+err.Error())
		return nil, false
	}
	st = &httpSession{srv: srv, caller: caller.Name, owner: owner, used: h.opts.Now(), busy: 1}
	st.http = server.NewStreamableHTTPServer(srv.MCP(),
		server.WithEndpointPath(MCPPath),
		server.WithDisableLocalhostProtection(true), // checkOrigin is stricter
		server.WithStreamableHTTPLogger(h.log),
	)
	for range h.h.MaxSessions + 1 {
		h.mu.Lock()
		if cur := h.modern[owner]; cur != nil { // opened by a request arriving together
			cur.enter(h.opts.Now())
			h.mu.Unlock()
			srv.Close()
			return cur, true
		}
		if len(h.modern) < h.h.MaxSessions {
			h.modern[owner] = st
			h.mu.Unlock()
			return st, true
		}
		h.mu.Unlock()
		if !h.evictIdlestModern() {
			break
		}
	}
	srv.Close()
	httpError(w, http.StatusServiceUnavailable, fmt.Sprintf("too many callers (%d) sent %s requests in the last minute; retry later",
		h.h.MaxSessions, mcp.ProtocolVersion20260728))
	return nil, false
}

// sweepModern drops the callers' states idle for longer than IdleTTL.
func (h *HTTPServer) sweepModern() {
	cut := h.opts.Now().Add(-h.h.IdleTTL)
	h.mu.Lock()
	var idle []*httpSession
	for owner, st := range h.modern {
		if u, ok := st.idleSince(); ok && u.Before(cut) {
			idle = append(idle, st)
			delete(h.modern, owner)
		}
	}
	h.mu.Unlock()
	for _, st := range idle {
		st.srv.Close()
	}
}

// evictIdlestModern drops the caller state used least recently when it
// has been idle for at least a minute.
func (h *HTTPServer) evictIdlestModern() bool {
	h.mu.Lock()
	var owner string
	var oldest time.Time
	for o, st := range h.modern {
		if u, ok := st.idleSince(); ok && (owner == "" || u.Before(oldest)) {
			owner, oldest = o, u
		}
	}
	st := h.modern[owner]
	if owner == "" || h.opts.Now().Sub(oldest) < time.Minute {
		h.mu.Unlock()
		return false
	}
	delete(h.modern, owner)
	h.mu.Unlock()
	st.srv.Close()
	return true
}

// modernCount is the number of callers' states.
func (h *HTTPServer) modernCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.modern)
}
