package authserver

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"wicket/internal/testkit"
)

const redirect = "http://127.0.0.1:9/callback"

// fixture is a built-in issuer on loopback with a stepping clock and an
// operator key made for the test.
type fixture struct {
	t     testing.TB
	srv   *httptest.Server
	as    *Server
	clock *testkit.Clock
	key   ed25519.PrivateKey
	dir   string
	res   string
	http  *http.Client // follows no redirects
}

func newFixture(t testing.TB, mod func(*Options)) *fixture {
	t.Helper()
	f := &fixture{t: t, clock: testkit.NewClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)), key: testkit.Key(t), dir: t.TempDir()}
	var h atomic.Pointer[Server]
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.Load().ServeHTTP(w, r) }))
	t.Cleanup(f.srv.Close)
	f.res = f.srv.URL + "/mcp"
	o := Options{Dir: f.dir, Resource: f.res, Operator: f.key.Public().(ed25519.PublicKey), Now: f.clock.Now,
		Scopes: []Scope{{Name: "wicket:read", Words: "read"}, {Name: "wicket:trade", Words: "trade"}}}
	if mod != nil {
		mod(&o)
	}
	as, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	h.Store(as)
	f.as = as
	f.http = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return f
}

func (f *fixture) register(name string, redirects ...string) (*http.Response, map[string]any) {
	f.t.Helper()
	body, _ := json.Marshal(map[string]any{"client_name": name, "redirect_uris": redirects, "token_endpoint_auth_method": "none"})
	res, err := f.http.Post(f.srv.URL+RegisterPath, "application/json", bytes.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res, out
}

func (f *fixture) clientID(name string) string {
	f.t.Helper()
	res, out := f.register(name, redirect)
	if res.StatusCode != http.StatusCreated {
		f.t.Fatalf("register: %s %v", res.Status, out)
	}
	return out["client_id"].(string)
}

type pkce struct{ verifier, challenge string }

func newPKCE() pkce {
	v := rand.Text() + rand.Text()
	sum := sha256.Sum256([]byte(v))
	return pkce{v, base64.RawURLEncoding.EncodeToString(sum[:])}
}

var requestField = regexp.MustCompile(`name="request" value="([^"]+)"`)

// authorize opens the authorize page and returns the request id it shows
// (or the redirect it answered with).
func (f *fixture) authorize(q url.Values) (id string, res *http.Response, page string) {
	f.t.Helper()
	res, err := f.http.Get(f.srv.URL + AuthorizePath + "?" + q.Encode())
	if err != nil {
		f.t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if m := requestField.FindStringSubmatch(string(b)); m != nil {
		id = m[1]
	}
	return id, res, string(b)
}

func authQuery(clientID, scope, resource string, p pkce) url.Values {
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirect}, "state": {"st-1"},
		"code_challenge": {p.challenge}, "code_challenge_method": {"S256"}, "scope": {scope}}
	if resource != "" {
		q.Set("resource", resource)
	}
	return q
}

// submit posts the consent form.
func (f *fixture) submit(id, code string, deny bool) (*http.Response, string) {
	f.t.Helper()
	form := url.Values{"request": {id}, "code": {code}}
	if deny {
		form.Set("deny", "1")
	}
	res, err := f.http.PostForm(f.srv.URL+AuthorizePath, form)
	if err != nil {
		f.t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res, string(b)
}

func (f *fixture) tokenReq(form url.Values) (int, map[string]any) {
	f.t.Helper()
	res, err := f.http.PostForm(f.srv.URL+TokenPath, form)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

// grant runs the whole flow with the operator granting scope and
// returns the token response.
func (f *fixture) grant(clientID, asked, granted string) map[string]any {
	f.t.Helper()
	p := newPKCE()
	id, res, page := f.authorize(authQuery(clientID, asked, f.res, p))
	if id == "" {
		f.t.Fatalf("authorize: %s %s\n%s", res.Status, res.Header.Get("Location"), page)
	}
	code, err := Approve(OpenStore(f.dir), f.clock.Now(), id, granted, f.key, "test operator", rand.Reader)
	if err != nil {
		f.t.Fatal(err)
	}
	res, page = f.submit(id, code, false)
	loc, _ := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusSeeOther || loc.Query().Get("code") == "" || loc.Query().Get("state") != "st-1" || loc.Query().Get("iss") != f.srv.URL {
		f.t.Fatalf("consent: %s %s\n%s", res.Status, loc, page)
	}
	st, out := f.tokenReq(url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "client_id": {clientID},
		"redirect_uri": {redirect}, "code_verifier": {p.verifier}, "resource": {f.res}})
	if st != http.StatusOK {
		f.t.Fatalf("token: %d %v", st, out)
	}
	return out
}

// verifier is the resource server's check (agent/front/oauth.go's go-oidc
// verifier over this server's KeySet).
func (f *fixture) verify(tok string) (map[string]any, error) {
	v := oidc.NewVerifier(f.as.Issuer(), f.as.KeySet(), &oidc.Config{ClientID: f.res, Now: f.clock.Now, SupportedSigningAlgs: []string{oidc.ES256}})
	t, err := v.Verify(context.Background(), tok)
	if err != nil {
		return nil, err
	}
	var cl map[string]any
	return cl, t.Claims(&cl)
}

func TestMetadataAndJWKS(t *testing.T) {
	f := newFixture(t, nil)
	res, err := http.Get(f.srv.URL + MetadataPath)
	if err != nil {
		t.Fatal(err)
	}
	var md map[string]any
	_ = json.NewDecoder(res.Body).Decode(&md)
	res.Body.Close()
	for k, want := range map[string]string{"issuer": f.srv.URL, "authorization_endpoint": f.srv.URL + AuthorizePath,
		"token_endpoint": f.srv.URL + TokenPath, "registration_endpoint": f.srv.URL + RegisterPath, "jwks_uri": f.srv.URL + JWKSPath} {
		if md[k] != want {
			t.Errorf("%s = %v, want %s", k, md[k], want)
		}
	}
	if fmt.Sprint(md["code_challenge_methods_supported"]) != "[S256]" || md["client_id_metadata_document_supported"] != true {
		t.Errorf("metadata: %v", md)
	}
	res, err = http.Get(f.srv.URL + JWKSPath)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(b), `"kty":"EC"`) || strings.Contains(string(b), `"d":`) {
		t.Errorf("the JWKS must hold the public keys only: %s", b)
	}
	for _, name := range []string{KeysFile} {
		fi, err := os.Stat(filepath.Join(f.dir, name))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v mode %v", name, err, fi.Mode().Perm())
		}
	}
}

// TestCodeFlowWithOperatorConsent: a registered client gets tokens only
// after the operator's one-time code; the access token verifies for this
// resource with the granted scope; the code works once (a replay revokes
// the grant) and only with its PKCE verifier.
func TestCodeFlowWithOperatorConsent(t *testing.T) {
	f := newFixture(t, nil)
	cid := f.clientID("Claude")

	// No consent yet: the page says how to get a code; nothing is granted.
	p := newPKCE()
	id, _, page := f.authorize(authQuery(cid, "wicket:read wicket:trade", f.res, p))
	if id == "" || !strings.Contains(page, "Claude") || !strings.Contains(page, "127.0.0.1:9") || !strings.Contains(page, "wicket:trade") ||
		!strings.Contains(page, "wicket approve --oauth") || !strings.Contains(page, "grants trading") {
		t.Fatalf("the consent page:\n%s", page)
	}
	res, err := f.http.Get(f.srv.URL + AuthorizePath + "?" + authQuery(cid, "wicket:read", f.res, newPKCE()).Encode())
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self' http://127.0.0.1:9;") ||
		!strings.Contains(csp, "frame-ancestors 'none'") || res.Header.Get("Referrer-Policy") != "same-origin" {
		t.Errorf("the page's headers: %v", res.Header)
	}
	if res, page := f.submit(id, "ABCD-EFGH", false); res.StatusCode != http.StatusOK || !strings.Contains(page, "No one-time code is ready") {
		t.Fatalf("a code before consent: %s\n%s", res.Status, page)
	}
	// A consent signed by another key is no consent.
	forgedCode, err := Approve(OpenStore(f.dir), f.clock.Now(), id, "wicket:trade", testkit.Key(t), "intruder", rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if res, page := f.submit(id, forgedCode, false); res.StatusCode != http.StatusOK || !strings.Contains(page, "No one-time code is ready") {
		t.Fatalf("a code signed by another key: %s\n%s", res.Status, page)
	}
	w, _ := OpenStore(f.dir).Waiting(f.clock.Now())
	if len(w) != 1 || w[0].ID == id {
		t.Errorf("an answered request is still listed as waiting (or the other one is not): %v", w)
	}
	g, _ := OpenStore(f.dir).view()
	forged := g.Consents[id]
	if forged == nil {
		t.Fatal("no consent stored")
	}
	code, err := Approve(OpenStore(f.dir), f.clock.Now(), id, "wicket:read", f.key, "op", rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	// Wrong codes count; the right one redirects with a code.
	if res, page := f.submit(id, "AAAA-AAAA", false); res.StatusCode != http.StatusOK || !strings.Contains(page, "4 tries left") {
		t.Fatalf("a wrong code: %s\n%s", res.Status, page)
	}
	res, _ = f.submit(id, strings.ToLower(code), false)
	loc, _ := url.Parse(res.Header.Get("Location"))
	ac := loc.Query().Get("code")
	if res.StatusCode != http.StatusSeeOther || ac == "" {
		t.Fatalf("the right code: %s %s", res.Status, loc)
	}
	exchange := func(verifier string) (int, map[string]any) {
		return f.tokenReq(url.Values{"grant_type": {"authorization_code"}, "code": {ac}, "client_id": {cid}, "redirect_uri": {redirect},
			"code_verifier": {verifier}})
	}
	if st, out := exchange(newPKCE().verifier); st != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Errorf("a wrong PKCE verifier: %d %v", st, out)
	}
	// The code was spent by that attempt: it is single use.
	if st, out := exchange(p.verifier); st != http.StatusBadRequest {
		t.Errorf("a spent code: %d %v", st, out)
	}

	tok := f.grant(cid, "wicket:read wicket:trade", "wicket:read")
	if tok["scope"] != "wicket:read" || tok["refresh_token"] == "" || tok["expires_in"] != float64(300) {
		t.Errorf("token response: %v", tok)
	}
	cl, err := f.verify(tok["access_token"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if cl["scope"] != "wicket:read" || cl["client_id"] != cid || !strings.HasPrefix(cl["sub"].(string), "claude-") {
		t.Errorf("claims: %v", cl)
	}
	if strings.Contains(readAll(t, f.dir), tok["refresh_token"].(string)) || strings.Contains(readAll(t, f.dir), code) {
		t.Error("a token or code is stored in the clear")
	}
}

func readAll(t *testing.T, dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, GrantsFile))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDenyAndTooManyWrongCodes(t *testing.T) {
	f := newFixture(t, nil)
	cid := f.clientID("x")
	id, _, _ := f.authorize(authQuery(cid, "wicket:trade", f.res, newPKCE()))
	if err := Deny(OpenStore(f.dir), f.clock.Now(), id); err != nil {
		t.Fatal(err)
	}
	res, _ := f.submit(id, "", false)
	if loc := res.Header.Get("Location"); !strings.Contains(loc, "error=access_denied") {
		t.Errorf("a refused request: %s %s", res.Status, loc)
	}
	id, _, _ = f.authorize(authQuery(cid, "wicket:trade", f.res, newPKCE()))
	if _, err := Approve(OpenStore(f.dir), f.clock.Now(), id, "wicket:trade", f.key, "op", rand.Reader); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < maxCodeFailure; i++ {
		res, _ = f.submit(id, "2222-2222", false)
	}
	if loc := res.Header.Get("Location"); !strings.Contains(loc, "error=access_denied") {
		t.Errorf("after %d wrong codes: %s %s", maxCodeFailure, res.Status, loc)
	}
	if _, err := Approve(OpenStore(f.dir), f.clock.Now(), id, "wicket:read", f.key, "op", rand.Reader); err == nil {
		t.Error("a dropped request took a consent")
	}
	// One client holds at most 3 waiting requests (both above are answered).
	for i := 0; i < 3; i++ {
		if id, res, _ := f.authorize(authQuery(cid, "wicket:read", f.res, newPKCE())); id == "" {
			t.Fatalf("waiting request %d: %s", i+1, res.Status)
		}
	}
	if _, res, _ := f.authorize(authQuery(cid, "wicket:read", f.res, newPKCE())); !strings.Contains(res.Header.Get("Location"), "error=temporarily_unavailable") {
		t.Errorf("a 4th waiting request of one client: %s %s", res.Status, res.Header.Get("Location"))
	}
	f.clock.Advance(pendingTTL)
	// A scope the client did not ask for cannot be granted.
	id, _, _ = f.authorize(authQuery(cid, "wicket:read", f.res, newPKCE()))
	if _, err := Approve(OpenStore(f.dir), f.clock.Now(), id, "wicket:trade", f.key, "op", rand.Reader); err == nil {
		t.Error("trade granted on a read request")
	}
}

// TestResourceBinding: a request for another resource is refused at the
// authorize and token endpoints, and a token checked as another
// resource's does not verify.
func TestResourceBinding(t *testing.T) {
	f := newFixture(t, nil)
	cid := f.clientID("x")
	_, res, _ := f.authorize(authQuery(cid, "wicket:read", "https://other.example/mcp", newPKCE()))
	if loc := res.Header.Get("Location"); !strings.Contains(loc, "error=invalid_target") {
		t.Errorf("authorize for another resource: %s %s", res.Status, loc)
	}
	tok := f.grant(cid, "wicket:read", "wicket:read")
	st, out := f.tokenReq(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}, "client_id": {cid},
		"resource": {"https://other.example/mcp"}})
	if st != http.StatusBadRequest || out["error"] != "invalid_target" {
		t.Errorf("refresh for another resource: %d %v", st, out)
	}
	v := oidc.NewVerifier(f.as.Issuer(), f.as.KeySet(), &oidc.Config{ClientID: "https://other.example/mcp", Now: f.clock.Now, SupportedSigningAlgs: []string{oidc.ES256}})
	if _, err := v.Verify(context.Background(), tok["access_token"].(string)); err == nil || !strings.Contains(err.Error(), "audience") {
		t.Errorf("a token checked by another resource: %v", err)
	}
	// Other refusals: no PKCE, an unknown scope, a redirect not registered.
	q := authQuery(cid, "wicket:read", "", newPKCE())
	q.Set("code_challenge_method", "plain")
	if _, res, _ := f.authorize(q); !strings.Contains(res.Header.Get("Location"), "error=invalid_request") {
		t.Errorf("plain PKCE: %s", res.Header.Get("Location"))
	}
	if _, res, _ := f.authorize(authQuery(cid, "wicket:admin", "", newPKCE())); !strings.Contains(res.Header.Get("Location"), "error=invalid_scope") {
		t.Errorf("unknown scope: %s", res.Header.Get("Location"))
	}
	q = authQuery(cid, "wicket:read", "", newPKCE())
	q.Set("redirect_uri", "https://evil.example/cb")
	if _, res, page := f.authorize(q); res.StatusCode != http.StatusBadRequest || res.Header.Get("Location") != "" || !strings.Contains(page, "did not register") {
		t.Errorf("an unregistered redirect: %s %s", res.Status, res.Header.Get("Location"))
	}
}

// TestRefreshRotationAndReuse: a refresh token works once; using a
// rotated one revokes the grant, its newest refresh token and its access
// tokens.
func TestRefreshRotationAndReuse(t *testing.T) {
	f := newFixture(t, nil)
	cid := f.clientID("VS Code")
	tok := f.grant(cid, "wicket:read wicket:trade", "wicket:read wicket:trade")
	refresh := func(rt, scope string) (int, map[string]any) {
		return f.tokenReq(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {cid}, "scope": {scope}})
	}
	f.clock.Advance(time.Minute)
	st, next := refresh(tok["refresh_token"].(string), "")
	if st != http.StatusOK || next["refresh_token"] == tok["refresh_token"] || next["scope"] != "wicket:read wicket:trade" {
		t.Fatalf("refresh: %d %v", st, next)
	}
	if st, out := refresh(next["refresh_token"].(string), "wicket:admin"); st != http.StatusBadRequest || out["error"] != "invalid_scope" {
		t.Errorf("a wider scope on refresh: %d %v", st, out)
	}
	if _, err := f.verify(next["access_token"].(string)); err != nil {
		t.Fatal(err)
	}
	// The first refresh token again: reuse, the grant is revoked.
	if st, out := refresh(tok["refresh_token"].(string), ""); st != http.StatusBadRequest || !strings.Contains(fmt.Sprint(out["error_description"]), "already used") {
		t.Errorf("reuse: %d %v", st, out)
	}
	if st, out := refresh(next["refresh_token"].(string), ""); st != http.StatusBadRequest || !strings.Contains(fmt.Sprint(out["error_description"]), "revoked") {
		t.Errorf("the newest refresh token after reuse: %d %v", st, out)
	}
	if _, err := f.verify(next["access_token"].(string)); err == nil || !strings.Contains(err.Error(), "revoked") {
		t.Errorf("an access token of a revoked grant: %v", err)
	}
}

// TestRevokeFromAnotherProcess: a revocation written by another Store on
// the same file (wicket callers revoke) is seen at the next check.
func TestRevokeFromAnotherProcess(t *testing.T) {
	f := newFixture(t, nil)
	cid := f.clientID("ChatGPT")
	tok := f.grant(cid, "wicket:trade", "wicket:trade")
	if _, err := f.verify(tok["access_token"].(string)); err != nil {
		t.Fatal(err)
	}
	grants, _ := OpenStore(f.dir).Grants()
	if len(grants) != 1 || !strings.HasPrefix(grants[0].Name, "chatgpt-") {
		t.Fatalf("grants: %+v", grants)
	}
	if _, err := OpenStore(f.dir).Revoke(f.clock.Now(), grants[0].Name, "revoked by the operator"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.verify(tok["access_token"].(string)); err == nil || !strings.Contains(err.Error(), "revoked") {
		t.Errorf("after wicket callers revoke: %v", err)
	}
	if _, err := OpenStore(f.dir).Revoke(f.clock.Now(), grants[0].Name, "again"); err == nil {
		t.Error("a revoked grant was revoked again")
	}
	// RFC 7009: a client revokes its own grant with its refresh token.
	tok = f.grant(cid, "wicket:read", "wicket:read")
	res, err := f.http.PostForm(f.srv.URL+RevokePath, url.Values{"token": {tok["refresh_token"].(string)}})
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("revoke: %v %v", err, res)
	}
	if _, err := f.verify(tok["access_token"].(string)); err == nil {
		t.Error("an access token after the client revoked its grant")
	}
}

// TestRegistrationLimits: registration is rate limited; a client never
// used expires after a day; bad redirect URIs are refused.
func TestRegistrationLimits(t *testing.T) {
	f := newFixture(t, nil)
	for i := 0; i < 10; i++ {
		f.clientID(fmt.Sprint("c", i))
	}
	if res, _ := f.register("one too many", redirect); res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
		t.Errorf("the 11th registration at once: %s", res.Status)
	}
	f.clock.Advance(12 * time.Minute) // two more
	cid := f.clientID("after a while")
	used := f.clientID("used")
	f.grant(used, "wicket:read", "wicket:read")
	f.clock.Advance(time.Hour) // the bucket is full again
	for _, bad := range []string{"http://example.com/cb", "javascript:alert(1)", "https://x.example/cb#frag", "myapp:/cb"} {
		if res, out := f.register("bad", bad); res.StatusCode != http.StatusBadRequest {
			t.Errorf("redirect %q: %s %v", bad, res.Status, out)
		}
	}
	f.clock.Advance(24 * time.Hour)
	f.clientID("prune") // any write prunes
	_, res, page := f.authorize(authQuery(cid, "wicket:read", "", newPKCE()))
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(page, "unknown client_id") {
		t.Errorf("an unused client after a day: %s", res.Status)
	}
	if id, res, _ := f.authorize(authQuery(used, "wicket:read", "", newPKCE())); id == "" {
		t.Errorf("a client with a live grant expired: %s", res.Status)
	}
}

// TestClientIDMetadataDocument: a client identified by an https URL is
// described by the document there (fetched once, cached), which must name
// itself; an oversized document is refused; a resource not on loopback
// does not fetch from loopback.
func TestClientIDMetadataDocument(t *testing.T) {
	var fetches atomic.Int32
	var doc atomic.Value
	cimd := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, doc.Load().(string))
	}))
	t.Cleanup(cimd.Close)
	id := cimd.URL + "/client.json"
	doc.Store(fmt.Sprintf(`{"client_id":%q,"client_name":"Claude","redirect_uris":[%q],"token_endpoint_auth_method":"none"}`, id, redirect))
	f := newFixture(t, func(o *Options) { o.Fetch = cimd.Client() })
	rid, res, page := f.authorize(authQuery(id, "wicket:read", "", newPKCE()))
	if rid == "" || !strings.Contains(page, "Claude") {
		t.Fatalf("a CIMD client: %s\n%s", res.Status, page)
	}
	tok := f.grant(id, "wicket:read", "wicket:read")
	if cl, err := f.verify(tok["access_token"].(string)); err != nil || cl["client_id"] != id {
		t.Errorf("a CIMD client's token: %v %v", cl, err)
	}
	if n := fetches.Load(); n != 1 {
		t.Errorf("the document was fetched %d times, want once (cached)", n)
	}
	f.clock.Advance(2 * time.Hour)
	doc.Store(fmt.Sprintf(`{"client_id":"https://someone.else/c.json","redirect_uris":[%q]}`, redirect))
	if _, _, page := f.authorize(authQuery(id, "wicket:read", "", newPKCE())); !strings.Contains(page, "names client_id") {
		t.Errorf("a document naming another client_id:\n%s", page)
	}
	doc.Store(`{"client_id":"` + id + `","pad":"` + strings.Repeat("x", 6000) + `"}`)
	if _, _, page := f.authorize(authQuery(id, "wicket:read", "", newPKCE())); !strings.Contains(page, "over 5120 bytes") {
		t.Errorf("an oversized document:\n%s", page)
	}
	// A public resource's issuer fetches no document from a loopback address.
	pub, err := New(Options{Dir: t.TempDir(), Resource: "https://wicket.example.com/mcp", Operator: f.key.Public().(ed25519.PublicKey),
		Scopes: []Scope{{Name: "wicket:read"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pub.client(context.Background(), id); err == nil || !strings.Contains(err.Error(), "not public") {
		t.Errorf("a loopback document for a public issuer: %v", err)
	}
}

// TestKeyRotation: after RotateEvery a new key signs; the old one stays
// in the JWKS while its tokens can live, then goes.
func TestKeyRotation(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.RotateEvery = time.Hour })
	cid := f.clientID("x")
	old := f.grant(cid, "wicket:read", "wicket:read")
	f.clock.Advance(time.Hour)
	fresh := f.grant(cid, "wicket:read", "wicket:read")
	kid := func(tok string) string {
		h, _ := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[0])
		var v struct{ Kid string }
		_ = json.Unmarshal(h, &v)
		return v.Kid
	}
	if kid(old["access_token"].(string)) == kid(fresh["access_token"].(string)) {
		t.Fatal("no new key after RotateEvery")
	}
	if n := len(f.as.keys.public().Keys); n != 2 {
		t.Errorf("JWKS holds %d keys right after a rotation, want 2", n)
	}
	f.clock.Advance(10 * time.Minute)
	f.grant(cid, "wicket:read", "wicket:read")
	if n := len(f.as.keys.public().Keys); n != 1 {
		t.Errorf("JWKS holds %d keys once no old token can live, want 1", n)
	}
	// The ring survives a restart.
	again, err := openKeys(f.dir, time.Hour, 6*time.Minute, rand.Reader, f.clock.Now())
	if err != nil || len(again.keys) != 1 || again.keys[0].Key.KeyID != kid(fresh["access_token"].(string)) {
		t.Errorf("reopened keys: %v %v", err, again)
	}
}

// BenchmarkIssue is one access token signed (ES256), as the token
// endpoint does after its checks.
func BenchmarkIssue(b *testing.B) {
	f := newFixture(b, nil)
	gr := &Grant{ID: "g1", Name: "bench-g1", ClientID: "c", Scope: "wicket:read", Resource: f.res}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.as.issue(gr, gr.Scope, "r", f.clock.Now()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify is one access token checked as the resource server
// does: go-oidc's claims checks over the KeySet (signature, then the
// grant's liveness in the grants file: one stat).
func BenchmarkVerify(b *testing.B) {
	f := newFixture(b, nil)
	tok := f.grant(f.clientID("bench"), "wicket:read", "wicket:read")["access_token"].(string)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.verify(tok); err != nil {
			b.Fatal(err)
		}
	}
}

// TestGrantsFileMode: the grants file is written 0600, and one others may
// write is refused (whoever can write it can bring a revoked grant back):
// tokens then stop verifying instead of trusting it.
func TestGrantsFileMode(t *testing.T) {
	f := newFixture(t, nil)
	tok := f.grant(f.clientID("x"), "wicket:read", "wicket:read")
	path := filepath.Join(f.dir, GrantsFile)
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("grants file: %v %v", err, fi.Mode().Perm())
	}
	if err := os.Chmod(path, 0o622); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, time.Now(), time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.verify(tok["access_token"].(string)); err == nil || !strings.Contains(err.Error(), "writable by others") {
		t.Errorf("a token checked against a grants file others may write: %v", err)
	}
}

// BenchmarkRefreshHTTP is one refresh grant over loopback HTTP: the
// rotation written to the grants file under its lock, a token signed.
func BenchmarkRefreshHTTP(b *testing.B) {
	f := newFixture(b, nil)
	cid := f.clientID("bench")
	rt := f.grant(cid, "wicket:read", "wicket:read")["refresh_token"].(string)
	b.ReportAllocs()
	for b.Loop() {
		st, out := f.tokenReq(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {cid}})
		if st != http.StatusOK {
			b.Fatal(st, out)
		}
		rt = out["refresh_token"].(string)
	}
}
