package front

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/coreos/go-oidc/v3/oidc"

	"wicket/agent"
	"wicket/agent/authserver"
	"wicket/internal/project"
)

// startBuiltin makes a the resource server of wicket's own authorization
// server ([agent.oauth] issuer = "builtin"): the issuer is the audience's
// origin, tokens are verified against the server's own keys in process
// (no JWKS fetch) and against the grants file, so a revocation takes
// effect at the next request.
func (a *OAuth) startBuiltin(cfg project.OAuthConfig, o OAuthOptions) error {
	if o.Project == nil {
		return agent.NewUsageError("agent.oauth.issuer = \"builtin\" needs a project (its settings/ holds the issuer's keys and grants)")
	}
	pub, err := o.Project.OperatorPublic()
	if err != nil {
		return agent.NewUsageError(fmt.Sprintf("agent.oauth.issuer = \"builtin\": consents are signed with the operator key: %v", err))
	}
	var scopes []authserver.Scope
	for i := len(a.grants) - 1; i >= 0; i-- { // the narrowest first
		g := a.grants[i]
		words := fmt.Sprintf("profile %s, %d tools", g.access.Profile, len(g.access.ServedNames()))
		if g.access.Served("submit_order") {
			words += ", orders included (preview, then confirm)"
		} else {
			words += ", no orders"
		}
		scopes = append(scopes, authserver.Scope{Name: g.scope, Words: words})
	}
	s, err := authserver.New(authserver.Options{Dir: o.Project.SettingsDir(), Resource: cfg.Audience, Scopes: scopes, Operator: pub, Now: o.Now})
	if err != nil {
		return agent.NewUsageError(err.Error())
	}
	a.builtin, a.issuer = s, s.Issuer()
	a.verify = oidc.NewVerifier(a.issuer, s.KeySet(), &oidc.Config{ClientID: cfg.Audience, Now: o.Now, SupportedSigningAlgs: []string{oidc.ES256}})
	return nil
}

// builtinPaths are the paths the built-in authorization server answers
// (none without one).
func (a *OAuth) builtinPaths() []string {
	if a == nil || a.builtin == nil {
		return nil
	}
	return authserver.Paths
}

// serveBuiltin answers a request for the built-in authorization server;
// false if r is not one. Only the Host is checked here (DNS rebinding):
// the endpoints are public by design, and the consent form checks its
// own Origin against the issuer.
func (h *HTTPServer) serveBuiltin(w http.ResponseWriter, r *http.Request) bool {
	if !slices.Contains(h.h.OAuth.builtinPaths(), r.URL.Path) {
		return false
	}
	if !h.h.Remote && !h.allowedHost(hostOnly(r.Host)) {
		closeAfter(w)
		httpError(w, http.StatusForbidden, fmt.Sprintf("forbidden Host %q: this server answers only to its loopback address (DNS-rebinding protection)", r.Host))
		return true
	}
	h.h.OAuth.builtin.ServeHTTP(w, r)
	return true
}
