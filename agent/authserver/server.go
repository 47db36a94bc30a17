// Package authserver is wicket's own OAuth 2.1 authorization server for a
// lone operator ([agent.oauth] issuer = "builtin"): authorization code
// with PKCE S256 only, RFC 8414 metadata, RFC 8707 resource binding,
// clients by RFC 7591 dynamic registration or by client ID metadata
// document, ES256 access tokens (RFC 9068) with a served, rotated JWKS,
// refresh-token rotation with reuse detection, and RFC 7009 revocation.
//
// Consent is the operator's: a request is granted only with a one-time
// code `wicket approve --oauth` makes at a terminal and signs with the
// operator key, which this package verifies and never holds.
//
// It must never log, trace or answer with a token, a code or a key; it
// stores only their SHA-256, and its signing keys only in a 0600 file.
package authserver

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Paths the server answers (the issuer is the resource's origin).
const (
	MetadataPath  = "/.well-known/oauth-authorization-server"
	AuthorizePath = "/oauth/authorize"
	TokenPath     = "/oauth/token"
	RegisterPath  = "/oauth/register"
	RevokePath    = "/oauth/revoke"
	JWKSPath      = "/oauth/jwks"
)

// Paths lists every path Server answers.
var Paths = []string{MetadataPath, AuthorizePath, TokenPath, RegisterPath, RevokePath, JWKSPath}

// Scope is one scope the server grants, and what it offers in words.
type Scope struct {
	Name  string
	Words string // e.g. "read-only tools: research, node state; no orders"
}

// Options configure a Server.
type Options struct {
	// Dir is the project's settings/ directory (the keys and grants files).
	Dir string
	// Resource is the one resource tokens are for (the MCP endpoint's
	// URL, RFC 8707); the issuer is its origin.
	Resource string
	// Scopes are the grantable scopes, the narrowest first (the default
	// when a client asks for none).
	Scopes []Scope
	// Operator verifies consents (settings/operator.pub).
	Operator ed25519.PublicKey
	// AccessTTL is an access token's life (default 5 minutes); keys sign
	// for RotateEvery (default 30 days).
	AccessTTL   time.Duration
	RotateEvery time.Duration
	// Fetch fetches client ID metadata documents (nil: a client with a
	// 5 s bound that refuses non-public addresses unless the resource
	// itself is on loopback).
	Fetch *http.Client
	// Now and Random are the clock and randomness (nil: time.Now and
	// crypto/rand).
	Now    func() time.Time
	Random io.Reader
}

// Server is the authorization server's HTTP side.
type Server struct {
	o      Options
	issuer string
	scopes map[string]Scope
	keys   *keyRing
	store  *Store
	cimd   *cimdCache
	reg    *bucket // registrations

	mu    sync.Mutex
	codes map[string]*authCode // by the code's hash
	spent map[string]spentCode // used codes, by hash: a replay revokes the grant
}

// authCode is an issued authorization code, in memory only.
type authCode struct {
	clientID, clientName, redirect, challenge, scope, resource string
	expires                                                    time.Time
}

type spentCode struct {
	grant   string
	expires time.Time
}

// New opens the server's keys (making the first one) and grants file.
func New(o Options) (*Server, error) {
	u, err := url.Parse(o.Resource)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("agent.oauth.audience %q: give this server's absolute URL", o.Resource)
	}
	if len(o.Scopes) == 0 {
		return nil, fmt.Errorf("the built-in issuer needs at least one scope")
	}
	if len(o.Operator) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("the built-in issuer needs the operator's public key (settings/operator.pub) to verify consents: run `wicket init --operator-key`")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Random == nil {
		o.Random = rand.Reader
	}
	if o.AccessTTL <= 0 {
		o.AccessTTL = 5 * time.Minute
	}
	if o.RotateEvery <= 0 {
		o.RotateEvery = 30 * 24 * time.Hour
	}
	if o.Fetch == nil {
		o.Fetch = fetchClient(isLoopback(u.Hostname()))
	}
	s := &Server{o: o, issuer: u.Scheme + "://" + u.Host, scopes: map[string]Scope{}, store: OpenStore(o.Dir),
		codes: map[string]*authCode{}, spent: map[string]spentCode{},
		cimd: newCIMDCache(o.Fetch), reg: &bucket{size: 10, every: 6 * time.Minute}}
	for _, sc := range o.Scopes {
		s.scopes[sc.Name] = sc
	}
	if s.keys, err = openKeys(o.Dir, o.RotateEvery, o.AccessTTL+time.Minute, o.Random, o.Now()); err != nil {
		return nil, err
	}
	if _, err := s.store.view(); err != nil {
		return nil, err
	}
	return s, nil
}

// Issuer is the issuer identifier (the resource's origin).
func (s *Server) Issuer() string { return s.issuer }

// KeySet verifies this issuer's access tokens, revocation included.
func (s *Server) KeySet() KeySet { return KeySet{s} }

func (s *Server) now() time.Time { return s.o.Now() }

// random is n random bytes in base64url-ish text (crypto/rand.Text's
// alphabet is base32; this uses the injected source).
func (s *Server) random(n int) string {
	b := make([]byte, n)
	if _, err := io.ReadFull(s.o.Random, b); err != nil {
		panic("authserver: no randomness: " + err.Error())
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	out := make([]byte, n)
	for i, c := range b {
		out[i] = alphabet[int(c)%32]
	}
	return string(out)
}

// ServeHTTP answers the authorization server's paths.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	switch r.URL.Path {
	case MetadataPath:
		h.Set("Cache-Control", "max-age=300")
		cors(w)
		if !method(w, r, http.MethodGet, http.MethodHead) {
			return
		}
		s.serveMetadata(w)
	case JWKSPath:
		h.Set("Cache-Control", "max-age=300")
		cors(w)
		if !method(w, r, http.MethodGet, http.MethodHead) {
			return
		}
		b, _ := json.Marshal(s.keys.public())
		h.Set("Content-Type", "application/jwk-set+json")
		_, _ = w.Write(b)
	case RegisterPath:
		cors(w)
		if !method(w, r, http.MethodPost) {
			return
		}
		s.register(w, r)
	case TokenPath:
		cors(w)
		if !method(w, r, http.MethodPost) {
			return
		}
		s.token(w, r)
	case RevokePath:
		cors(w)
		if !method(w, r, http.MethodPost) {
			return
		}
		s.revoke(w, r)
	case AuthorizePath:
		switch r.Method {
		case http.MethodGet:
			s.authorize(w, r)
		case http.MethodPost:
			s.consent(w, r)
		default:
			method(w, r, http.MethodGet, http.MethodPost)
		}
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) serveMetadata(w http.ResponseWriter) {
	scopes := make([]string, 0, len(s.o.Scopes)+1)
	for _, sc := range s.o.Scopes {
		scopes = append(scopes, sc.Name)
	}
	scopes = append(scopes, "offline_access")
	body, _ := json.Marshal(map[string]any{
		"issuer":                                         s.issuer,
		"authorization_endpoint":                         s.issuer + AuthorizePath,
		"token_endpoint":                                 s.issuer + TokenPath,
		"registration_endpoint":                          s.issuer + RegisterPath,
		"revocation_endpoint":                            s.issuer + RevokePath,
		"jwks_uri":                                       s.issuer + JWKSPath,
		"scopes_supported":                               scopes,
		"response_types_supported":                       []string{"code"},
		"response_modes_supported":                       []string{"query"},
		"grant_types_supported":                          []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":               []string{"S256"},
		"token_endpoint_auth_methods_supported":          []string{"none"},
		"revocation_endpoint_auth_methods_supported":     []string{"none"},
		"client_id_metadata_document_supported":          true,
		"authorization_response_iss_parameter_supported": true,
	})
	writeJSON(w, http.StatusOK, body)
}

func cors(w http.ResponseWriter) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
}

func method(w http.ResponseWriter, r *http.Request, allowed ...string) bool {
	for _, m := range allowed {
		if r.Method == m {
			return true
		}
	}
	if r.Method == http.MethodOptions {
		w.Header().Set("Access-Control-Allow-Methods", strings.Join(allowed, ", "))
		w.Header().Set("Access-Control-Allow-Headers", "Content-Type, Authorization, Mcp-Protocol-Version")
		w.WriteHeader(http.StatusNoContent)
		return false
	}
	w.Header().Set("Allow", strings.Join(allowed, ", "))
	oauthError(w, http.StatusMethodNotAllowed, "invalid_request", "use "+strings.Join(allowed, " or "))
	return false
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// oauthError answers an RFC 6749 §5.2 error.
func oauthError(w http.ResponseWriter, status int, code, desc string) {
	body, _ := json.Marshal(map[string]string{"error": code, "error_description": desc})
	writeJSON(w, status, body)
}

// bucket is a token bucket: size requests at once, one more every every.
type bucket struct {
	mu    sync.Mutex
	size  int
	every time.Duration
	left  float64
	at    time.Time
}

// take spends one token; when none is left it says how long to wait.
func (b *bucket) take(now time.Time) (time.Duration, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.at.IsZero() {
		b.left, b.at = float64(b.size), now
	}
	b.left = min(float64(b.size), b.left+float64(now.Sub(b.at))/float64(b.every))
	b.at = now
	if b.left < 1 {
		return time.Duration((1 - b.left) * float64(b.every)), false
	}
	b.left--
	return 0, true
}
