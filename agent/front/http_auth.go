package front

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"wicket/agent/wire"
)

// checkOrigin validates Host and Origin against the listen address and
// the allow list; "" means the request may proceed.
func (h *HTTPServer) checkOrigin(r *http.Request) string {
	if !h.h.Remote && !h.allowedHost(hostOnly(r.Host)) {
		return fmt.Sprintf("forbidden Host %q: this server answers only to its loopback address (DNS-rebinding protection)", r.Host)
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return ""
	}
	for _, o := range h.h.AllowOrigins {
		if strings.EqualFold(strings.TrimSuffix(o, "/"), origin) {
			return ""
		}
	}
	if u, err := url.Parse(origin); err == nil && !h.h.Remote && h.allowedHost(hostOnly(u.Host)) {
		return ""
	}
	return fmt.Sprintf("forbidden Origin %q: not this server's address and not in --allow-origin (DNS-rebinding protection)", origin)
}

func (h *HTTPServer) allowedHost(host string) bool {
	host = strings.ToLower(host)
	switch host {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	if listen := strings.ToLower(hostOnly(h.h.Addr)); listen != "" && host == listen {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostOnly strips a port and IPv6 brackets.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// authenticate returns the request's caller; without callers or OAuth
// the caller is the command line's own profile ("" name). A missing or
// wrong token is answered 401 with WWW-Authenticate (naming the resource
// metadata under OAuth), before any body is read, and the connection is
// closed; a valid OAuth token without a mapped scope is answered 403
// insufficient_scope.
func (h *HTTPServer) authenticate(w http.ResponseWriter, r *http.Request) (Caller, bool) {
	if h.h.Callers == nil && h.h.OAuth == nil {
		return Caller{Profile: h.opts.Profile, Deny: h.opts.Deny}, true
	}
	oa := h.h.OAuth
	refuse := func(status int, code, msg, scope string) (Caller, bool) {
		closeAfter(w)
		challenge := `Bearer realm="wicket mcp"`
		switch {
		case oa != nil:
			challenge = oa.challenge(code, msg, scope)
		case code != "":
			challenge += `, error="` + code + `"`
		}
		w.Header().Set("WWW-Authenticate", challenge)
		httpError(w, status, msg)
		return Caller{}, false
	}
	auth := r.Header.Get("Authorization")
	scheme, token, _ := strings.Cut(auth, " ")
	token = strings.TrimSpace(token)
	if auth == "" || !strings.EqualFold(scheme, "Bearer") || token == "" {
		if oa != nil {
			return refuse(http.StatusUnauthorized, "", "missing bearer token: send Authorization: Bearer <token>, an access token of "+oa.issuer+
				" (see "+oa.metadata+") or a caller's token from `wicket callers add`", oa.entryScope())
		}
		return refuse(http.StatusUnauthorized, "", "missing bearer token: send Authorization: Bearer <token> (the operator issues one with `wicket callers add`)", "")
	}
	if h.h.Callers != nil {
		if c, ok := h.h.Callers.authenticate(token); ok {
			return c, true
		}
	}
	if oa == nil || strings.Count(token, ".") != 2 {
		return refuse(http.StatusUnauthorized, "invalid_token", "unknown bearer token", "")
	}
	c, err := oa.authenticate(r.Context(), token)
	switch {
	case errors.Is(err, errInsufficientScope):
		return refuse(http.StatusForbidden, "insufficient_scope",
			"the token holds none of this server's scopes: ask the authorization server for "+oa.entryScope(), oa.entryScope())
	case err != nil:
		return refuse(http.StatusUnauthorized, "invalid_token", err.Error(), "")
	}
	return c, true
}

// stepUp answers 403 insufficient_scope when m calls a tool the caller's
// OAuth grant does not serve but another scope does; true if it did.
func (h *HTTPServer) stepUp(w http.ResponseWriter, caller Caller, m *wire.Message) bool {
	if h.h.OAuth == nil {
		return false
	}
	scope := h.h.OAuth.needsScope(caller, m)
	if scope == "" {
		return false
	}
	msg := fmt.Sprintf("this call needs scope %s (the token grants %s): ask the authorization server for a token with %s and send this request again with it: the session follows the new token's scope", scope, caller.grant, scope)
	w.Header().Set("WWW-Authenticate", h.h.OAuth.challenge("insufficient_scope", msg, scope))
	httpError(w, http.StatusForbidden, msg)
	return true
}
