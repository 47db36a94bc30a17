package agent_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

const builtinRedirect = "http://127.0.0.1:1/callback"

// operatorDesk is `wicket approve --oauth` on a pseudo-terminal: it
// answers each authorization request as the test says and hands the
// one-time code it prints to the browser.
type operatorDesk struct {
	term    *terminal
	mu      sync.Mutex
	asked   int
	refused int
}

func startOperatorDesk(t *testing.T, proj string) *operatorDesk {
	t.Helper()
	cmd := exec.Command(wicketBin, "--project", proj, "approve", "--oauth")
	cmd.Env = append(os.Environ(), cleanEnv...)
	f, err := pty.Start(cmd)
	if err != nil {
		t.Fatalf("start wicket approve --oauth on a pty: %v", err)
	}
	term := &terminal{t: t, f: f, cmd: cmd}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			term.mu.Lock()
			term.out.Write(buf[:n])
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		f.Close()
	})
	term.waitFor("Nothing is waiting.", 1)
	return &operatorDesk{term: term}
}

var deskCode = regexp.MustCompile(`One-time code for this request: ([A-Z2-7]{4}-[A-Z2-7]{4})`)

// answer waits for the next request at the terminal, answers it and
// returns the code printed ("" when refused).
func (d *operatorDesk) answer(ans string) (code, shown string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.asked++
	shown = d.term.waitFor("Grant it?", d.asked)
	before := d.codes() // counted before the answer: its code may be printed at once
	d.term.typeLine(ans)
	if ans == "n" {
		d.refused++
		d.term.waitFor("refused: the authorize page", d.refused)
		return "", shown
	}
	codes := d.term.waitFor("One-time code for this request: ", before+1)
	m := deskCode.FindAllStringSubmatch(codes, -1)
	return m[len(m)-1][1], shown
}

func (d *operatorDesk) codes() int {
	d.term.mu.Lock()
	defer d.term.mu.Unlock()
	return strings.Count(d.term.out.String(), "One-time code for this request: ")
}

var formRequest = regexp.MustCompile(`name="request" value="([^"]+)"`)

// browser plays the person: it opens the authorize page, gets the
// operator's code from the desk and types it in; it returns where the
// server sent the browser back to.
func browser(ctx context.Context, desk *operatorDesk, ans, authURL string) (*url.URL, string, error) {
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	res, err := c.Do(req)
	if err != nil {
		return nil, "", err
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode == http.StatusSeeOther {
		loc, err := url.Parse(res.Header.Get("Location"))
		return loc, "", err
	}
	m := formRequest.FindSubmatch(page)
	if m == nil {
		return nil, "", fmt.Errorf("no consent form: %s\n%s", res.Status, page)
	}
	code, shown := desk.answer(ans)
	form := url.Values{"request": {string(m[1])}, "code": {code}}
	u, _ := url.Parse(authURL)
	req, _ = http.NewRequestWithContext(ctx, http.MethodPost, u.Scheme+"://"+u.Host+u.Path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err = c.Do(req)
	if err != nil {
		return nil, shown, err
	}
	res.Body.Close()
	loc, err := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusSeeOther || err != nil {
		return nil, shown, fmt.Errorf("consent answered %s", res.Status)
	}
	return loc, shown, nil
}

// connectBuiltin connects the go-sdk client, registered by DCR or by a
// client ID metadata document, asking for scopes (nil: what the server
// challenges with); the operator answers ans.
func connectBuiltin(t *testing.T, endpoint string, desk *operatorDesk, ans, cimd string, scopes []string) (*sdk.ClientSession, string, error) {
	t.Helper()
	var shown string
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL: builtinRedirect,
		AuthorizationCodeFetcher: func(ctx context.Context, a *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			loc, s, err := browser(ctx, desk, ans, a.URL)
			shown = s
			if err != nil {
				return nil, err
			}
			q := loc.Query()
			if e := q.Get("error"); e != "" {
				return nil, fmt.Errorf("authorization refused: %s", e)
			}
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		},
	}
	if cimd != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: cimd}
	} else {
		cfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName: "Go SDK e2e", RedirectURIs: []string{builtinRedirect}, TokenEndpointAuthMethod: "none"}}
	}
	if scopes != nil {
		cfg.ScopeFilter = func([]string) []string { return scopes }
	}
	oh, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "wicket-e2e-builtin", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint, OAuthHandler: oh, MaxRetries: -1}, nil)
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, shown, err
}

func toolNames(t *testing.T, cs *sdk.ClientSession) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	return strings.Join(names, " ")
}

// startBuiltin starts a project's wicket mcp --http with the built-in
// issuer, trusting the CIMD server's certificate (as the system would a
// public one).
func startBuiltin(t *testing.T) (proj, endpoint string, cimd *httptest.Server, cimdURL string) {
	t.Helper()
	cimd = httptest.NewTLSServer(nil)
	t.Cleanup(cimd.Close)
	cimdURL = cimd.URL + "/client.json"
	cimd.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"client_id": cimdURL, "client_name": "Loopback CIMD client",
			"redirect_uris": []string{builtinRedirect}, "token_endpoint_auth_method": "none", "grant_types": []string{"authorization_code", "refresh_token"}})
	})
	certFile := filepath.Join(t.TempDir(), "cimd.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cimd.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	proj = newProject(t)
	addr := freeLoopbackAddr(t)
	endpoint = "http://" + addr + "/mcp"
	f, err := os.OpenFile(filepath.Join(proj, "wicket.toml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "\n[agent.oauth]\nissuer = \"builtin\"\naudience = %q\n", endpoint)
	f.Close()
	h := startHTTP(t, []string{"SSL_CERT_FILE=" + certFile}, proj, "--http", addr)
	if h.url != endpoint {
		t.Fatalf("served at %s, want %s", h.url, endpoint)
	}
	return proj, endpoint, cimd, cimdURL
}

// TestSDK2026BuiltinIssuer: the official Go SDK's OAuth client against
// wicket's own authorization server, consent by the operator's one-time
// code from `wicket approve --oauth` on a terminal: a DCR client with
// the read scope is served read-only; a trade request the operator
// narrows to read gets no trade tool; one the operator grants gets them;
// a client by metadata document on loopback connects too.
func TestSDK2026BuiltinIssuer(t *testing.T) {
	proj, endpoint, _, cimdURL := startBuiltin(t)
	desk := startOperatorDesk(t, proj)

	cs, shown, err := connectBuiltin(t, endpoint, desk, "y", "", nil)
	if err != nil {
		t.Fatalf("connect with DCR: %v\n%s", err, shown)
	}
	if !strings.Contains(shown, "Go SDK e2e") || !strings.Contains(shown, "redirects to 127.0.0.1:1") || !strings.Contains(shown, "asks for     wicket:read") {
		t.Errorf("the terminal showed:\n%s", shown)
	}
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Errorf("negotiated %s", v)
	}
	if names := toolNames(t, cs); strings.Contains(names, "submit_order") || !strings.Contains(names, "run_backtest") {
		t.Errorf("a read grant lists: %s", names)
	}

	both := []string{"wicket:read", "wicket:trade"}
	cs, _, err = connectBuiltin(t, endpoint, desk, "r", "", both)
	if err != nil {
		t.Fatalf("connect with trade narrowed to read: %v", err)
	}
	if names := toolNames(t, cs); strings.Contains(names, "submit_order") {
		t.Errorf("trade was asked, the operator granted read, and the client lists submit_order")
	}
	cs, _, err = connectBuiltin(t, endpoint, desk, "y", "", both)
	if err != nil {
		t.Fatalf("connect with trade granted: %v", err)
	}
	if names := toolNames(t, cs); !strings.Contains(names, "submit_order") {
		t.Errorf("a trade grant lists: %s", names)
	}
	if _, _, err := connectBuiltin(t, endpoint, desk, "n", "", both); err == nil || !strings.Contains(err.Error(), "access_denied") {
		t.Errorf("a refused request connected: %v", err)
	}

	cs, shown, err = connectBuiltin(t, endpoint, desk, "y", cimdURL, nil)
	if err != nil {
		t.Fatalf("connect by client ID metadata document: %v", err)
	}
	if !strings.Contains(shown, "Loopback CIMD client") || !strings.Contains(shown, cimdURL) {
		t.Errorf("the terminal showed for the CIMD client:\n%s", shown)
	}
	toolNames(t, cs)
}

// tokenFlow runs the flow with a plain HTTP client (DCR) and returns the
// token response and the client id.
func tokenFlow(t *testing.T, endpoint string, desk *operatorDesk, scope string) (map[string]any, string) {
	t.Helper()
	base := strings.TrimSuffix(endpoint, "/mcp")
	body, _ := json.Marshal(map[string]any{"client_name": "plain", "redirect_uris": []string{builtinRedirect}})
	res, err := http.Post(base+"/oauth/register", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var reg map[string]any
	_ = json.NewDecoder(res.Body).Decode(&reg)
	res.Body.Close()
	cid, _ := reg["client_id"].(string)
	verifier := strings.Repeat("v", 50)
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {cid}, "redirect_uri": {builtinRedirect}, "scope": {scope},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}, "resource": {endpoint}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	loc, _, err := browser(ctx, desk, "y", base+"/oauth/authorize?"+q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	st, tok := postToken(t, base, url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "client_id": {cid},
		"redirect_uri": {builtinRedirect}, "code_verifier": {verifier}, "resource": {endpoint}})
	if st != http.StatusOK {
		t.Fatalf("token: %d %v", st, tok)
	}
	return tok, cid
}

func postToken(t *testing.T, base string, form url.Values) (int, map[string]any) {
	t.Helper()
	res, err := http.PostForm(base+"/oauth/token", form)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

// mcpStatus is the HTTP status of an initialize with the access token.
func mcpStatus(t *testing.T, endpoint, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"plain","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode, res.Header.Get("WWW-Authenticate")
}

// TestBuiltinIssuerRefreshRevoke: against the real binary, a refresh
// token rotates; a rotated one used again revokes the grant (its newest
// access token is refused at once); `wicket callers revoke` takes effect
// at the next request; a token for another resource is refused.
func TestBuiltinIssuerRefreshRevoke(t *testing.T) {
	proj, endpoint, _, _ := startBuiltin(t)
	base := strings.TrimSuffix(endpoint, "/mcp")
	desk := startOperatorDesk(t, proj)

	tok, cid := tokenFlow(t, endpoint, desk, "wicket:read")
	if st, _ := mcpStatus(t, endpoint, tok["access_token"].(string)); st != http.StatusOK {
		t.Fatalf("the access token: %d", st)
	}
	refresh := func(rt string) (int, map[string]any) {
		return postToken(t, base, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {cid}})
	}
	st, next := refresh(tok["refresh_token"].(string))
	if st != http.StatusOK || next["refresh_token"] == tok["refresh_token"] {
		t.Fatalf("refresh: %d %v", st, next)
	}
	if st, _ := mcpStatus(t, endpoint, next["access_token"].(string)); st != http.StatusOK {
		t.Fatalf("the refreshed access token: %d", st)
	}
	if st, out := refresh(tok["refresh_token"].(string)); st != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Errorf("a reused refresh token: %d %v", st, out)
	}
	if st, chal := mcpStatus(t, endpoint, next["access_token"].(string)); st != http.StatusUnauthorized || !strings.Contains(chal, "revoked") {
		t.Errorf("an access token of a grant revoked for reuse: %d %s", st, chal)
	}

	tok, _ = tokenFlow(t, endpoint, desk, "wicket:trade")
	if st, _ := mcpStatus(t, endpoint, tok["access_token"].(string)); st != http.StatusOK {
		t.Fatalf("the trade access token: %d", st)
	}
	var grants []struct {
		Name, Scope, State string
	}
	if err := json.Unmarshal([]byte(runWicket(t, nil, "--project", proj, "callers", "grants", "--json")), &grants); err != nil || len(grants) != 2 {
		t.Fatalf("callers grants: %v %v", grants, err)
	}
	name := grants[0].Name
	if grants[0].Scope != "wicket:trade" || grants[0].State != "live" || !strings.HasPrefix(grants[1].State, "revoked") {
		t.Errorf("callers grants: %+v", grants)
	}
	runWicket(t, nil, "--project", proj, "callers", "revoke", name)
	if st, chal := mcpStatus(t, endpoint, tok["access_token"].(string)); st != http.StatusUnauthorized || !strings.Contains(chal, "revoked") {
		t.Errorf("after wicket callers revoke: %d %s", st, chal)
	}
	if st, out := refresh(tok["refresh_token"].(string)); st != http.StatusBadRequest {
		t.Errorf("a revoked grant's refresh token: %d %v", st, out)
	}

	if st, out := postToken(t, base, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"x.y"}, "client_id": {cid},
		"resource": {"https://another.example/mcp"}}); st != http.StatusBadRequest || out["error"] != "invalid_target" {
		t.Errorf("a token for another resource: %d %v", st, out)
	}
	for _, f := range []string{"oauth-keys.json", "oauth-grants.json"} {
		fi, err := os.Stat(filepath.Join(proj, "settings", f))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("settings/%s: %v", f, err)
		}
	}
}

// tsSDK is the TypeScript SDK that `make conformance` installs with the
// pinned conformance suite (bin/conformance), or WICKET_TS_SDK.
func tsSDK(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("WICKET_TS_SDK")
	if dir == "" {
		dir, _ = filepath.Abs("../bin/conformance/node_modules/@modelcontextprotocol/sdk")
	}
	if _, err := os.Stat(filepath.Join(dir, "dist", "esm", "client", "auth.js")); err != nil {
		t.Skip("the TypeScript SDK is not installed: `make bin/conformance/.installed` (or WICKET_TS_SDK=DIR)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("no node")
	}
	return dir
}

// runTSClient runs testdata/oauth/ts_client.mjs: it plays the browser and
// the operator when the client asks to authorize, and returns its lines.
func runTSClient(t *testing.T, sdkDir, endpoint string, desk *operatorDesk, ans, cimd string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := []string{"testdata/oauth/ts_client.mjs", sdkDir, endpoint}
	if cimd != "" {
		args = append(args, cimd)
	}
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Env = os.Environ()
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		key, val, _ := strings.Cut(sc.Text(), " ")
		got[key] = val
		if key == "AUTHORIZE" {
			loc, _, err := browser(ctx, desk, ans, val)
			if err != nil {
				t.Fatalf("the TS client's authorization: %v", err)
			}
			if e := loc.Query().Get("error"); e != "" {
				t.Fatalf("authorization refused: %s", e)
			}
			fmt.Fprintln(stdin, loc.Query().Get("code"))
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("ts_client.mjs: %v\n%s", err, stderr.String())
	}
	return got
}

// TestTSSDKBuiltinIssuer: the TypeScript SDK's OAuth client registers by
// DCR and by a metadata document on loopback, the operator grants at the
// terminal, and it is served the granted scope's tools (skipped without
// the SDK, which `make conformance` installs).
func TestTSSDKBuiltinIssuer(t *testing.T) {
	sdkDir := tsSDK(t)
	proj, endpoint, _, cimdURL := startBuiltin(t)
	desk := startOperatorDesk(t, proj)

	got := runTSClient(t, sdkDir, endpoint, desk, "y", "")
	if !strings.HasPrefix(got["CLIENT"], "wkc_") || !strings.Contains(got["TOOLS"], "run_backtest") {
		t.Errorf("the TS client by DCR: %v", got)
	}
	if strings.Contains(got["TOOLS"], "submit_order") != strings.Contains(got["SCOPE"], "wicket:trade") {
		t.Errorf("tools do not follow the granted scope %q: %s", got["SCOPE"], got["TOOLS"])
	}
	got = runTSClient(t, sdkDir, endpoint, desk, "y", cimdURL)
	if got["CLIENT"] != cimdURL || got["SCOPE"] != "wicket:read" || strings.Contains(got["TOOLS"], "submit_order") {
		t.Errorf("the TS client by metadata document, asking for read: %v", got)
	}
}
