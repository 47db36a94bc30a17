package front

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"wicket/agent"
	"wicket/internal/project"
)

// testIssuer is an authorization server's JWKS on loopback, with a key
// made at test run time, and a signer of access tokens.
type testIssuer struct {
	url string
	key *ecdsa.PrivateKey
}

func newTestIssuer(t *testing.T) *testIssuer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	is := &testIssuer{key: key}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			_ = json.NewEncoder(w).Encode(map[string]string{"issuer": is.url, "jwks_uri": is.url + "/jwks"})
		case "/jwks":
			_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	is.url = srv.URL
	return is
}

// token signs claims with key (the issuer's unless another is given).
func (is *testIssuer) token(t *testing.T, key *ecdsa.PrivateKey, cl jwt.Claims, scope string) string {
	t.Helper()
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", "k1"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := jwt.Signed(sig).Claims(cl).Claims(map[string]any{"scope": scope}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const testAudience = "http://127.0.0.1/mcp"

func oauthServer(t *testing.T, is *testIssuer, now time.Time) *httptest.Server {
	t.Helper()
	cfg := project.OAuthConfig{Issuer: is.url, Audience: testAudience}
	oa, err := NewOAuth(context.Background(), cfg, OAuthOptions{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHTTP(agent.Options{Profile: agent.ProfileOffline, NewID: uuid.NewString}, agent.Backends{Config: project.Defaults()},
		HTTPOptions{Addr: "127.0.0.1:0", Callers: &Callers{}, OAuth: oa})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func post(t *testing.T, url, token, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+MCPPath, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// TestOAuthRefusals: no token, a token for another audience, an expired
// one, one not valid yet, another issuer's and a wrong signature are each
// refused 401 with a WWW-Authenticate naming the resource metadata; a
// valid token without a mapped scope is 403 insufficient_scope.
func TestOAuthRefusals(t *testing.T) {
	is := newTestIssuer(t)
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	srv := oauthServer(t, is, now)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	good := jwt.Claims{Issuer: is.url, Subject: "alice", Audience: jwt.Audience{testAudience},
		Expiry: jwt.NewNumericDate(now.Add(time.Hour)), IssuedAt: jwt.NewNumericDate(now)}
	with := func(f func(*jwt.Claims)) jwt.Claims { c := good; f(&c); return c }
	meta := `resource_metadata="http://127.0.0.1` + PRMPath + `/mcp"`
	for _, tc := range []struct {
		name, token string
		status      int
		want        []string
	}{
		{"none", "", 401, []string{meta, `scope="wicket:read"`}},
		{"audience", is.token(t, is.key, with(func(c *jwt.Claims) { c.Audience = jwt.Audience{"https://other.example/mcp"} }), "wicket:trade"), 401,
			[]string{meta, `error="invalid_token"`, "not for this resource"}},
		{"expired", is.token(t, is.key, with(func(c *jwt.Claims) { c.Expiry = jwt.NewNumericDate(now.Add(-time.Minute)) }), "wicket:trade"), 401,
			[]string{meta, `error="invalid_token"`, "expired"}},
		{"not yet", is.token(t, is.key, with(func(c *jwt.Claims) { c.NotBefore = jwt.NewNumericDate(now.Add(time.Hour)) }), "wicket:trade"), 401,
			[]string{meta, `error="invalid_token"`, "not valid yet"}},
		{"issuer", is.token(t, is.key, with(func(c *jwt.Claims) { c.Issuer = "https://evil.example" }), "wicket:trade"), 401,
			[]string{meta, `error="invalid_token"`, "not issued by"}},
		{"signature", is.token(t, other, good, "wicket:trade"), 401,
			[]string{meta, `error="invalid_token"`, "signature"}},
		{"no scope", is.token(t, is.key, good, "email profile"), 403,
			[]string{meta, `error="insufficient_scope"`, `scope="wicket:read"`}},
	} {
		res := post(t, srv.URL, tc.token, initBody)
		h := res.Header.Get("WWW-Authenticate")
		if res.StatusCode != tc.status {
			t.Errorf("%s: status %d, want %d (%s)", tc.name, res.StatusCode, tc.status, h)
		}
		for _, w := range tc.want {
			if !strings.Contains(h, w) {
				t.Errorf("%s: WWW-Authenticate %s, want %s", tc.name, h, w)
			}
		}
		if tc.token != "" && strings.Contains(h, tc.token) {
			t.Errorf("%s: the challenge holds the token", tc.name)
		}
	}
	if res := post(t, srv.URL, is.token(t, is.key, good, "wicket:read"), initBody); res.StatusCode != 200 {
		t.Errorf("a good token: %d", res.StatusCode)
	}
}

// TestOAuthDiscoveryAndScopes: a client finds the issuer through the
// Protected Resource Metadata; through mcp-go's client a read scope sees
// the read-only tools and is refused a write with insufficient_scope, a
// trade scope sees the full set.
func TestOAuthDiscoveryAndScopes(t *testing.T) {
	is := newTestIssuer(t)
	now := time.Now()
	srv := oauthServer(t, is, now)

	for _, p := range []string{PRMPath, PRMPath + MCPPath} {
		res, err := http.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		var md struct {
			Resource string   `json:"resource"`
			AS       []string `json:"authorization_servers"`
			Scopes   []string `json:"scopes_supported"`
		}
		err = json.NewDecoder(res.Body).Decode(&md)
		res.Body.Close()
		if err != nil || md.Resource != testAudience || !slices.Equal(md.AS, []string{is.url}) || !slices.Equal(md.Scopes, []string{"wicket:read", "wicket:trade"}) {
			t.Fatalf("%s: %+v %v", p, md, err)
		}
	}

	claims := jwt.Claims{Issuer: is.url, Subject: "alice", Audience: jwt.Audience{testAudience},
		Expiry: jwt.NewNumericDate(now.Add(time.Hour))}
	tools := func(scope string) ([]string, *client.Client) {
		c, err := client.NewStreamableHttpClient(srv.URL+MCPPath,
			transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + is.token(t, is.key, claims, scope)}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		req := mcp.InitializeRequest{}
		req.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
		req.Params.ClientInfo = mcp.Implementation{Name: "oauth-test", Version: "1"}
		if _, err := c.Initialize(ctx, req); err != nil {
			t.Fatalf("%s: initialize: %v", scope, err)
		}
		res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		slices.Sort(names)
		return names, c
	}
	ro, _ := agent.Check(agent.ProfileReadOnly, nil)
	full, _ := agent.Check(agent.ProfileFull, nil)
	readNames, rc := tools("wicket:read")
	if !slices.Equal(readNames, sorted(ro.ServedNames())) {
		t.Errorf("read scope tools = %v, want %v", readNames, ro.ServedNames())
	}
	tradeNames, _ := tools("openid wicket:read wicket:trade")
	if !slices.Equal(tradeNames, sorted(full.ServedNames())) {
		t.Errorf("trade scope tools = %v, want %v", tradeNames, full.ServedNames())
	}
	var write string
	for _, n := range full.ServedNames() {
		if !ro.Served(n) {
			write = n
			break
		}
	}
	if write == "" {
		t.Fatal("full serves nothing read-only does not")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	call := mcp.CallToolRequest{}
	call.Params.Name = write
	_, err := rc.CallTool(ctx, call)
	if err == nil || !strings.Contains(err.Error(), "needs scope wicket:trade") {
		t.Errorf("a read scope calling %s: %v, want a 403 insufficient_scope", write, err)
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
