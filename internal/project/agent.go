package project

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/shopspring/decimal"
)

// Approval modes: who must agree before a confirmed write is sent.
const (
	ApprovalNone     = "none"     // the preview token is enough (the default)
	ApprovalElicit   = "elicit"   // the client asks its user (MCP elicitation)
	ApprovalOperator = "operator" // an operator at a terminal (wicket approve)
)

// ApprovalModes lists the valid approval modes.
var ApprovalModes = []string{ApprovalNone, ApprovalElicit, ApprovalOperator}

// AgentConfig is the [agent] table: the defaults of `wicket mcp`'s
// --approval and session budgets (the flags override them). A zero budget
// is no limit.
type AgentConfig struct {
	Approval           string          `toml:"approval"`
	MaxWrites          int             `toml:"max_writes"`
	MaxNotional        decimal.Decimal `toml:"max_notional"`
	MaxWritesPerMinute int             `toml:"max_writes_per_minute"`
	// Envelope is [agent.envelope.VENUE], the agent's capital envelope per
	// venue, enforced by the node (envelope.go).
	Envelope map[string]AgentEnvelope `toml:"envelope"`
	// OAuth, when set, makes `wicket mcp --http` an OAuth 2.1 resource
	// server as well ([agent.oauth]; agent/front/oauth.go).
	OAuth *OAuthConfig `toml:"oauth"`
}

// IssuerBuiltin as [agent.oauth] issuer makes wicket its own
// authorization server (agent/authserver), at the audience's origin.
const IssuerBuiltin = "builtin"

// OAuthConfig is [agent.oauth]: the authorization server wicket trusts,
// this resource's identifier (the audience its tokens must name, RFC
// 8707), and which scope grants which profile and deny list.
type OAuthConfig struct {
	Issuer   string       `toml:"issuer"`
	Audience string       `toml:"audience"`
	JWKSURL  string       `toml:"jwks_url"` // empty: discovered from the issuer's metadata
	Scopes   []OAuthScope `toml:"scope"`
}

// OAuthScope maps one OAuth scope to a profile and deny list.
type OAuthScope struct {
	Name    string   `toml:"name"`
	Profile string   `toml:"profile"`
	Deny    []string `toml:"deny_tool"`
}

// DefaultOAuthScopes are served when [agent.oauth] names no scope.
var DefaultOAuthScopes = []OAuthScope{
	{Name: "wicket:read", Profile: "read-only"},
	{Name: "wicket:trade", Profile: "full"},
}

func (o *OAuthConfig) validate() error {
	if o.Issuer == IssuerBuiltin {
		if o.JWKSURL != "" {
			return fmt.Errorf("agent.oauth.jwks_url: the built-in issuer serves its own keys; remove jwks_url")
		}
	} else if err := oauthURL("agent.oauth.issuer", o.Issuer); err != nil {
		return fmt.Errorf("%w (or %q to let wicket issue tokens itself)", err, IssuerBuiltin)
	}
	if err := oauthURL("agent.oauth.audience", o.Audience); err != nil {
		return err
	}
	if o.JWKSURL != "" {
		if err := oauthURL("agent.oauth.jwks_url", o.JWKSURL); err != nil {
			return err
		}
	}
	if len(o.Scopes) == 0 {
		o.Scopes = append([]OAuthScope(nil), DefaultOAuthScopes...)
	}
	seen := map[string]bool{}
	for _, s := range o.Scopes {
		// RFC 6749 §3.3 scope-token: printable ASCII but space, " and \.
		if s.Name == "" || strings.ContainsFunc(s.Name, func(r rune) bool { return r <= ' ' || r > '~' || r == '"' || r == '\\' }) {
			return fmt.Errorf("agent.oauth.scope: name %q is not an OAuth scope (printable ASCII without spaces, quotes or backslashes)", s.Name)
		}
		if seen[s.Name] {
			return fmt.Errorf("agent.oauth.scope: %q appears twice", s.Name)
		}
		seen[s.Name] = true
		if s.Profile == "" {
			return fmt.Errorf("agent.oauth.scope %q: give its profile (full, read-only or offline)", s.Name)
		}
	}
	return nil
}

// oauthURL checks an absolute https URL (http only to a loopback host),
// without a fragment.
func oauthURL(key, raw string) error {
	u, err := url.Parse(raw)
	if raw == "" || err != nil || u.Host == "" || u.Fragment != "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("%s = %q: give an absolute https URL without a fragment (e.g. https://auth.example.com)", key, raw)
	}
	if u.Scheme == "http" {
		h := strings.ToLower(u.Hostname())
		if ip := net.ParseIP(h); h != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return fmt.Errorf("%s = %q: plain http is allowed only to a loopback host; use https", key, raw)
		}
	}
	return nil
}

// ValidApproval checks an approval mode, naming the valid ones.
func ValidApproval(mode string) error {
	for _, m := range ApprovalModes {
		if mode == m {
			return nil
		}
	}
	return fmt.Errorf("approval mode %q is not valid (valid: %s)", mode, strings.Join(ApprovalModes, ", "))
}

func (a *AgentConfig) validate() error {
	if a.Approval == "" {
		a.Approval = ApprovalNone
	}
	if err := ValidApproval(a.Approval); err != nil {
		return fmt.Errorf("agent.approval: %w", err)
	}
	if a.MaxWrites < 0 || a.MaxWritesPerMinute < 0 || a.MaxNotional.IsNegative() {
		return fmt.Errorf("agent.max_writes, agent.max_notional and agent.max_writes_per_minute must not be negative (0 means no limit)")
	}
	if a.OAuth != nil {
		return a.OAuth.validate()
	}
	return nil
}
