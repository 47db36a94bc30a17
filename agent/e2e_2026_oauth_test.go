package agent_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// authServer is an OAuth 2.1 authorization server on loopback for the
// go-sdk client's authorization-code flow (RFC 8414 metadata, PKCE S256,
// RFC 8707 resource indicators), issuing JWT access tokens signed with a
// key made at test run time. mode spoils the next tokens on purpose.
type authServer struct {
	url  string
	key  *ecdsa.PrivateKey
	bad  *ecdsa.PrivateKey // another key, for "signature"
	srv  *httptest.Server
	mu   sync.Mutex
	mode string // "", "audience", "expired", "signature"
	give string // the scope granted, whatever was asked
	code map[string]authCode
}

type authCode struct {
	challenge, resource, redirect string
}

const authClientID = "wicket-e2e-client"

func newAuthServer(t *testing.T) *authServer {
	t.Helper()
	gen := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	as := &authServer{key: gen(), bad: gen(), code: map[string]authCode{}}
	as.srv = httptest.NewServer(http.HandlerFunc(as.serve))
	t.Cleanup(as.srv.Close)
	as.url = as.srv.URL
	return as
}

func (as *authServer) set(mode, give string) {
	as.mu.Lock()
	as.mode, as.give = mode, give
	as.mu.Unlock()
}

func (as *authServer) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": as.url, "authorization_endpoint": as.url + "/authorize", "token_endpoint": as.url + "/token",
			"jwks_uri": as.url + "/jwks", "response_types_supported": []string{"code"},
			"grant_types_supported": []string{"authorization_code"}, "code_challenge_methods_supported": []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"none"}, "scopes_supported": []string{"wicket:read", "wicket:trade"},
		})
	case "/jwks":
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &as.key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	case "/authorize":
		q := r.URL.Query()
		if q.Get("response_type") != "code" || q.Get("client_id") != authClientID || q.Get("code_challenge_method") != "S256" ||
			q.Get("code_challenge") == "" || q.Get("resource") == "" {
			http.Error(w, "bad authorization request: "+r.URL.RawQuery, http.StatusBadRequest)
			return
		}
		code := rand.Text()
		as.mu.Lock()
		as.code[code] = authCode{challenge: q.Get("code_challenge"), resource: q.Get("resource"), redirect: q.Get("redirect_uri")}
		as.mu.Unlock()
		to, _ := url.Parse(q.Get("redirect_uri"))
		v := to.Query()
		v.Set("code", code)
		v.Set("state", q.Get("state"))
		to.RawQuery = v.Encode()
		http.Redirect(w, r, to.String(), http.StatusFound)
	case "/token":
		if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "authorization_code" {
			http.Error(w, `{"error":"unsupported_grant_type"}`, http.StatusBadRequest)
			return
		}
		as.mu.Lock()
		c, ok := as.code[r.PostForm.Get("code")]
		delete(as.code, r.PostForm.Get("code"))
		mode, give := as.mode, as.give
		as.mu.Unlock()
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge || r.PostForm.Get("resource") != c.resource ||
			r.PostForm.Get("redirect_uri") != c.redirect {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"invalid_grant"}`))
			return
		}
		now := time.Now()
		cl := jwt.Claims{Issuer: as.url, Subject: "person-7", Audience: jwt.Audience{c.resource},
			IssuedAt: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(10 * time.Minute))}
		key := as.key
		switch mode {
		case "audience":
			cl.Audience = jwt.Audience{"https://another.example/mcp"}
		case "expired":
			cl.IssuedAt, cl.Expiry = jwt.NewNumericDate(now.Add(-2*time.Hour)), jwt.NewNumericDate(now.Add(-time.Hour))
		case "signature":
			key = as.bad
		}
		sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", "k1"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		tok, err := jwt.Signed(sig).Claims(cl).Claims(map[string]any{"scope": give, "client_id": authClientID}).Serialize()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 600, "scope": give})
	default:
		http.NotFound(w, r)
	}
}

// fetchCode plays the person's browser: it follows the authorization URL
// once and reads the code from the redirect.
func fetchCode(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
	if err != nil {
		return nil, err
	}
	res, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	res.Body.Close()
	loc, err := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusFound || err != nil {
		return nil, fmt.Errorf("authorization refused: %s", res.Status)
	}
	return &auth.AuthorizationResult{Code: loc.Query().Get("code"), State: loc.Query().Get("state")}, nil
}

// challenges records the WWW-Authenticate of every refused MCP request.
type challenges struct {
	mu  sync.Mutex
	got []string // "401 Bearer ..."
}

func (c *challenges) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := http.DefaultTransport.RoundTrip(req)
	if err == nil && (res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusForbidden) {
		c.mu.Lock()
		c.got = append(c.got, fmt.Sprintf("%d %s", res.StatusCode, res.Header.Get("WWW-Authenticate")))
		c.mu.Unlock()
	}
	return res, err
}

func (c *challenges) all() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.got, "\n")
}

// freeLoopbackAddr is a loopback address no one listens on just now: the
// OAuth audience is this server's own URL, which must be known before it
// starts.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// connectOAuth connects the go-sdk client with its authorization-code
// OAuth handler (no static token).
func connectOAuth(t *testing.T, endpoint string, ch *challenges) (*sdk.ClientSession, error) {
	t.Helper()
	oh, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		PreregisteredClient:      &oauthex.ClientCredentials{ClientID: authClientID},
		RedirectURL:              "http://127.0.0.1:1/callback",
		AuthorizationCodeFetcher: fetchCode,
	})
	if err != nil {
		t.Fatal(err)
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "wicket-e2e-oauth", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: ch},
		OAuthHandler: oh, MaxRetries: -1}, nil)
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

// TestSDK2026OAuth: the go-sdk client with its OAuth handler finds the
// authorization server through the Protected Resource Metadata, runs the
// authorization-code flow and negotiates 2026-07-28; a read scope is
// served read-only (a trade tool is refused 403 insufficient_scope naming
// wicket:trade), a trade scope is served full; a token for another
// audience, an expired one and a wrong signature are each refused 401
// invalid_token with the resource metadata named.
func TestSDK2026OAuth(t *testing.T) {
	as := newAuthServer(t)
	proj := newProject(t)
	addr := freeLoopbackAddr(t)
	endpoint := "http://" + addr + "/mcp"
	f, err := os.OpenFile(filepath.Join(proj, "wicket.toml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "\n[agent.oauth]\nissuer = %q\naudience = %q\n", as.url, endpoint)
	f.Close()
	h := startHTTP(t, nil, proj, "--http", addr)
	if h.url != endpoint {
		t.Fatalf("served at %s, want %s", h.url, endpoint)
	}
	prm := "resource_metadata=\"http://" + addr + "/.well-known/oauth-protected-resource/mcp\""

	as.set("", "wicket:read")
	ch := &challenges{}
	cs, err := connectOAuth(t, endpoint, ch)
	if err != nil {
		t.Fatalf("connect with a read scope: %v\n%s", err, ch.all())
	}
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Errorf("negotiated %s", v)
	}
	if first := ch.all(); !strings.HasPrefix(first, "401 ") || !strings.Contains(first, prm) || !strings.Contains(first, `scope="wicket:read"`) {
		t.Errorf("the first challenge: %s", first)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if tool.Name == "submit_order" {
			t.Fatal("a read scope lists submit_order")
		}
	}
	_, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "submit_order", Arguments: map[string]any{"venue": "paper"}})
	if err == nil || !strings.Contains(ch.all(), `403 `) || !strings.Contains(ch.all(), `error="insufficient_scope"`) ||
		!strings.Contains(ch.all(), `scope="wicket:trade"`) {
		t.Errorf("a trade call under a read scope: %v\n%s", err, ch.all())
	}

	as.set("", "wicket:trade")
	cs, err = connectOAuth(t, endpoint, &challenges{})
	if err != nil {
		t.Fatalf("connect with a trade scope: %v", err)
	}
	tools, err = cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	full := false
	for _, tool := range tools.Tools {
		full = full || tool.Name == "submit_order"
	}
	if !full {
		t.Error("a trade scope does not list submit_order")
	}

	for _, mode := range []string{"audience", "expired", "signature"} {
		as.set(mode, "wicket:trade")
		ch := &challenges{}
		if _, err := connectOAuth(t, endpoint, ch); err == nil {
			t.Errorf("%s: a bad token connected", mode)
		}
		got := ch.all()
		lines := strings.Split(got, "\n")
		last := lines[len(lines)-1]
		if len(lines) < 2 || !strings.HasPrefix(last, "401 ") || !strings.Contains(last, `error="invalid_token"`) || !strings.Contains(last, prm) {
			t.Errorf("%s: challenges %s", mode, got)
		}
	}
}
