package front

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/mark3labs/mcp-go/mcp"

	"wicket/agent"
	"wicket/agent/authserver"
	"wicket/agent/wire"
	"wicket/internal/project"
)

// PRMPath is where the Protected Resource Metadata (RFC 9728) is served;
// it is also served at PRMPath+MCPPath, the path-inserted form RFC 9728
// §3.1 derives from a resource at /mcp.
const PRMPath = "/.well-known/oauth-protected-resource"

// OAuth checks the JWT access tokens of hosted MCP clients: wicket is an
// OAuth 2.1 resource server for [agent.oauth]'s issuer. It verifies a
// token's signature against the issuer's JWKS, its iss, its aud (this
// resource, RFC 8707), exp and nbf, and maps its scopes to a profile and
// deny list. It never issues, stores, logs or forwards a token.
type OAuth struct {
	issuer   string
	audience string
	metadata string // the PRM URL named in WWW-Authenticate
	verify   *oidc.IDTokenVerifier
	keys     *jwksKeys    // the issuer's keys verify checks against
	grants   []oauthGrant // most tools served first

	builtin *authserver.Server // issuer = "builtin" (oauth_builtin.go)
}

// oauthGrant is what one scope grants.
type oauthGrant struct {
	scope  string
	access *agent.ToolAccess
}

// OAuthOptions are NewOAuth's outside dependencies: the HTTP client that
// fetches the issuer's metadata and JWKS (nil: http.DefaultClient) and the
// clock tokens' exp and nbf are checked against (nil: time.Now).
type OAuthOptions struct {
	Client *http.Client
	Now    func() time.Time
	// Project holds the built-in issuer's keys, grants and operator.pub.
	Project *project.Project
}

// NewOAuth builds the resource server for cfg (already validated by
// internal/project). Without jwks_url the JWKS location is discovered from
// the issuer's metadata (RFC 8414, then OpenID Connect discovery), once.
func NewOAuth(ctx context.Context, cfg project.OAuthConfig, o OAuthOptions) (*OAuth, error) {
	if o.Client == nil {
		o.Client = http.DefaultClient
	}
	aud, err := url.Parse(cfg.Audience)
	if err != nil || aud.Host == "" {
		return nil, agent.NewUsageError(fmt.Sprintf("agent.oauth.audience %q: give this server's absolute URL (e.g. https://wicket.example.com/mcp)", cfg.Audience))
	}
	scopes := cfg.Scopes
	if len(scopes) == 0 {
		scopes = project.DefaultOAuthScopes
	}
	a := &OAuth{issuer: cfg.Issuer, audience: cfg.Audience,
		metadata: aud.Scheme + "://" + aud.Host + PRMPath + strings.TrimSuffix(aud.EscapedPath(), "/")}
	for _, s := range scopes {
		access, err := agent.Check(s.Profile, s.Deny)
		if err != nil {
			return nil, agent.NewUsageError(fmt.Sprintf("agent.oauth.scope %q: %v", s.Name, err))
		}
		a.grants = append(a.grants, oauthGrant{scope: s.Name, access: access})
	}
	// The widest grant first: a token holding several scopes gets the one
	// that serves the most tools.
	for i := 1; i < len(a.grants); i++ {
		for j := i; j > 0 && len(a.grants[j].access.ServedNames()) > len(a.grants[j-1].access.ServedNames()); j-- {
			a.grants[j], a.grants[j-1] = a.grants[j-1], a.grants[j]
		}
	}
	if cfg.Issuer == project.IssuerBuiltin {
		if err := a.startBuiltin(cfg, o); err != nil {
			return nil, err
		}
		return a, nil
	}
	jwks := cfg.JWKSURL
	if jwks == "" {
		if jwks, err = discoverJWKS(ctx, o.Client, cfg.Issuer); err != nil {
			return nil, err
		}
	}
	// The key set is fetched again on its cache lifetime (at most 10
	// minutes) and when a token names a key it does not hold (jwks.go).
	a.keys = newJWKSKeys(jwks, o.Client, o.Now)
	a.verify = oidc.NewVerifier(cfg.Issuer, a.keys, &oidc.Config{ClientID: cfg.Audience, Now: o.Now,
		SupportedSigningAlgs: []string{oidc.RS256, oidc.RS384, oidc.RS512, oidc.ES256, oidc.ES384, oidc.ES512, oidc.PS256, oidc.PS384, oidc.PS512, oidc.EdDSA}})
	return a, nil
}

// discoverJWKS reads jwks_uri from the issuer's authorization server
// metadata (RFC 8414), or else its OpenID configuration; the metadata
// must name the same issuer.
func discoverJWKS(ctx context.Context, c *http.Client, issuer string) (string, error) {
	u, _ := url.Parse(issuer)
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	tried := []string{}
	for _, wk := range []string{
		u.Scheme + "://" + u.Host + "/.well-known/oauth-authorization-server" + path,
		strings.TrimSuffix(issuer, "/") + "/.well-known/openid-configuration",
	} {
		tried = append(tried, wk)
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, wk, nil)
		if err != nil {
			cancel()
			continue
		}
		res, err := c.Do(req)
		if err != nil {
			cancel()
			continue
		}
		var md struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		err = json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&md)
		res.Body.Close()
		cancel()
		if res.StatusCode != http.StatusOK || err != nil || md.JWKSURI == "" {
			continue
		}
		if md.Issuer != issuer {
			return "", fmt.Errorf("agent.oauth: %s names issuer %q, not %q: fix agent.oauth.issuer", wk, md.Issuer, issuer)
		}
		return md.JWKSURI, nil
	}
	return "", fmt.Errorf("agent.oauth: cannot discover the issuer's JWKS (tried %s): start the authorization server, or give agent.oauth.jwks_url",
		strings.Join(tried, ", "))
}

// tokenClaims are the claims read beyond those go-oidc checks.
type tokenClaims struct {
	Subject string `json:"sub"`
	Scope   string `json:"scope"` // RFC 9068: space-separated
	Scp     []string
}

// UnmarshalJSON accepts scp as a list or a string (issuers differ).
func (t *tokenClaims) UnmarshalJSON(b []byte) error {
	var raw struct {
		Subject string          `json:"sub"`
		Scope   string          `json:"scope"`
		Scp     json.RawMessage `json:"scp"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	t.Subject, t.Scope = raw.Subject, raw.Scope
	if len(raw.Scp) > 0 {
		var list []string
		var one string
		switch {
		case json.Unmarshal(raw.Scp, &list) == nil:
			t.Scp = list
		case json.Unmarshal(raw.Scp, &one) == nil:
			t.Scp = strings.Fields(one)
		}
	}
	return nil
}

// errInsufficientScope is a valid token none of whose scopes is mapped.
var errInsufficientScope = errors.New("insufficient scope")

// authenticate verifies token and returns its caller: the subject as the
// name, the widest mapped scope's profile and deny list. The error's text
// is safe to show (it never holds the token).
func (a *OAuth) authenticate(ctx context.Context, token string) (Caller, error) {
	tok, err := a.verify.Verify(ctx, token)
	if err != nil {
		return Caller{}, errors.New(a.why(err))
	}
	var cl tokenClaims
	if err := tok.Claims(&cl); err != nil {
		return Caller{}, errors.New("the token's claims are not valid JSON")
	}
	if cl.Subject == "" || len(cl.Subject) > 255 || strings.ContainsFunc(cl.Subject, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return Caller{}, errors.New("the token has no usable subject (sub)")
	}
	held := map[string]bool{}
	for _, s := range append(strings.Fields(cl.Scope), cl.Scp...) {
		held[s] = true
	}
	for _, g := range a.grants {
		if held[g.scope] {
			return Caller{Name: cl.Subject, Profile: g.access.Profile, Deny: g.access.Denied, grant: g.scope}, nil
		}
	}
	return Caller{Name: cl.Subject}, errInsufficientScope
}

// why turns a verification failure into a short reason, safe in a
// WWW-Authenticate error_description (no quotes, no token).
func (a *OAuth) why(err error) string {
	var exp *oidc.TokenExpiredError
	msg := err.Error()
	switch {
	case errors.As(err, &exp):
		return "the token expired at " + exp.Expiry.UTC().Format(time.RFC3339)
	case strings.Contains(msg, "expected audience"):
		return "the token is not for this resource: its aud must be " + a.audience
	case strings.Contains(msg, "issued by a different provider"):
		return "the token was not issued by " + a.issuer
	case strings.Contains(msg, "nbf"):
		return "the token is not valid yet (nbf)"
	case strings.Contains(msg, "revoked"):
		return "the token's grant was revoked: authorize again"
	case strings.Contains(msg, "signature"):
		return "the token's signature does not verify against the issuer's keys"
	case strings.Contains(msg, "malformed") || strings.Contains(msg, "jwt"):
		return "the token is not a signed JWT access token"
	}
	return "the token does not verify"
}

// narrowest is the scope of the fewest tools that serves tool, "" if none.
func (a *OAuth) narrowest(tool string) string {
	for i := len(a.grants) - 1; i >= 0; i-- {
		if a.grants[i].access.Served(tool) {
			return a.grants[i].scope
		}
	}
	return ""
}

// entryScope is the scope to ask for first: the one of the fewest tools.
func (a *OAuth) entryScope() string { return a.grants[len(a.grants)-1].scope }

// challenge is a WWW-Authenticate value (RFC 6750 §3, RFC 9728 §5.1).
func (a *OAuth) challenge(errCode, desc, scope string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `Bearer realm="wicket mcp", resource_metadata=%q`, a.metadata)
	if errCode != "" {
		fmt.Fprintf(&b, `, error=%q`, errCode)
	}
	if desc != "" {
		fmt.Fprintf(&b, `, error_description="%s"`, strings.NewReplacer(`"`, `'`, `\`, `/`).Replace(desc))
	}
	if scope != "" {
		fmt.Fprintf(&b, `, scope=%q`, scope)
	}
	return b.String()
}

// serveMetadata answers the Protected Resource Metadata document.
func (a *OAuth) serveMetadata(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		closeAfter(w)
		w.Header().Set("Allow", "GET, HEAD")
		httpError(w, http.StatusMethodNotAllowed, "use GET on "+PRMPath)
		return
	}
	scopes := make([]string, 0, len(a.grants))
	for i := len(a.grants) - 1; i >= 0; i-- {
		scopes = append(scopes, a.grants[i].scope)
	}
	body, _ := json.Marshal(map[string]any{
		"resource":                 a.audience,
		"authorization_servers":    []string{a.issuer},
		"scopes_supported":         scopes,
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "wicket mcp",
	})
	w.Header().Set("Cache-Control", "max-age=300")
	writeJSON(w, http.StatusOK, body)
}

// needsScope is the scope a tools/call needs that caller's grant lacks,
// "" when it needs none (a static caller, another method, a tool the
// grant serves, or one no scope serves: the session refuses it itself).
func (a *OAuth) needsScope(caller Caller, m *wire.Message) string {
	if caller.grant == "" || m.Method != string(mcp.MethodToolsCall) {
		return ""
	}
	var p struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(m.Params, &p) != nil || p.Name == "" {
		return ""
	}
	for _, g := range a.grants {
		if g.scope == caller.grant {
			if g.access.Served(p.Name) {
				return ""
			}
			break
		}
	}
	return a.narrowest(p.Name)
}
