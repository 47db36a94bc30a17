package agent_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"wicket/agent"
	"wicket/node/nodetest"
	"wicket/trace"
)

// httpServer is one running `wicket mcp --http 127.0.0.1:0`.
type httpServer struct {
	url string
	cmd *exec.Cmd
}

var servingLine = regexp.MustCompile(`serving Streamable HTTP at (\S+)`)

// startHTTP starts `wicket --project proj mcp --http 127.0.0.1:0 args...`
// and waits for the line that names its URL.
func startHTTP(t testing.TB, env []string, proj string, args ...string) *httpServer {
	t.Helper()
	argv := append([]string{"--project", proj, "mcp", "--http", "127.0.0.1:0"}, args...)
	cmd := exec.Command(wicketBin, argv...)
	cmd.Env = append(append(os.Environ(), cleanEnv...), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil && !sent {
				urls <- m[1]
				sent = true
			}
			t.Logf("mcp stderr: %s", sc.Text())
		}
		if !sent {
			close(urls)
		}
	}()
	s := &httpServer{cmd: cmd}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	select {
	case u, ok := <-urls:
		if !ok {
			t.Fatal("wicket mcp --http exited before serving")
		}
		s.url = u
	case <-time.After(20 * time.Second):
		t.Fatal("wicket mcp --http did not start")
	}
	return s
}

// addCaller runs `wicket callers add` and returns the printed token.
func addCaller(t *testing.T, proj, name, profile string, deny ...string) string {
	t.Helper()
	args := []string{"--project", proj, "callers", "add", name, "--profile", profile}
	for _, d := range deny {
		args = append(args, "--deny-tool", d)
	}
	cmd := exec.Command(wicketBin, args...)
	cmd.Env = append(os.Environ(), cleanEnv...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("callers add %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

// connect opens an initialized MCP session over HTTP with token.
func (h *httpServer) connect(t testing.TB, token string, opts ...transport.StreamableHTTPCOption) *session {
	t.Helper()
	if token != "" {
		opts = append(opts, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	}
	c, err := client.NewStreamableHttpClient(h.url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// Start's context lives as long as the client: it carries the GET
	// stream when continuous listening is on.
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "wicket-e2e-http", Version: "1"}
	res, err := c.Initialize(ctx, req)
	if err != nil {
		t.Fatalf("initialize over HTTP: %v", err)
	}
	return &session{Client: c, init: res}
}

// TestHTTPCallersScopes: two callers with different profiles see different
// tools/list and refusals, and the trace names each entry's caller.
func TestHTTPCallersScopes(t *testing.T) {
	proj := newProject(t)
	alice := addCaller(t, proj, "alice", agent.ProfileReadOnly)
	bob := addCaller(t, proj, "bob", agent.ProfileFull, "run_sweep")
	traceDir := filepath.Join(t.TempDir(), "trace")
	h := startHTTP(t, nil, proj, "--trace-dir", traceDir)

	a, b := h.connect(t, alice), h.connect(t, bob)
	for _, tc := range []struct {
		s       *session
		profile string
		deny    []string
	}{{a, agent.ProfileReadOnly, nil}, {b, agent.ProfileFull, []string{"run_sweep"}}} {
		want, err := agent.Check(tc.profile, tc.deny)
		if err != nil {
			t.Fatal(err)
		}
		if got := tc.s.toolNames(t); !slices.Equal(got, want.ServedNames()) {
			t.Errorf("%s: tools/list = %v, want %v", tc.profile, got, want.ServedNames())
		}
	}
	if r := a.call(t, "submit_order", `{}`); !r.IsError || !strings.HasPrefix(text(r), "REFUSED [profile] read-only") {
		t.Errorf("alice submit_order: %q", text(r))
	}
	if r := b.call(t, "run_sweep", `{}`); !r.IsError || !strings.HasPrefix(text(r), "REFUSED [deny-tool] run_sweep") {
		t.Errorf("bob run_sweep: %q", text(r))
	}
	if r := b.call(t, "list_templates", `{}`); r.IsError {
		t.Errorf("bob list_templates: %q", text(r))
	}
	if s := readSession(t, a); s["caller"] != "alice" || s["profile"] != agent.ProfileReadOnly {
		t.Errorf("alice's wicket://session = %v", s)
	}

	entries := traceEntries(t, traceDir)
	callers := map[string][]string{}
	for _, e := range entries {
		callers[e.Caller] = append(callers[e.Caller], e.Tool)
	}
	if !slices.Equal(callers["alice"], []string{"submit_order"}) || !slices.Equal(callers["bob"], []string{"run_sweep", "list_templates"}) {
		t.Errorf("traced callers: %v", callers)
	}
	out := runWicket(t, nil, "trace", "list", "--dir", traceDir, "--caller", "bob", "--json")
	if strings.Count(out, `"caller":"bob"`) != 2 || strings.Contains(out, "alice") {
		t.Errorf("trace list --caller bob:\n%s", out)
	}
}

func traceEntries(t *testing.T, dir string) []trace.Entry {
	t.Helper()
	es, err := (&trace.Reader{Dir: dir}).Read(trace.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// TestHTTPAuthOriginAndSessions: 401 with WWW-Authenticate without or with
// a wrong token, 403 for a foreign Origin or Host, 403 for another
// caller's session.
func TestHTTPAuthOriginAndSessions(t *testing.T) {
	proj := newProject(t)
	alice := addCaller(t, proj, "alice", agent.ProfileOffline)
	bob := addCaller(t, proj, "bob", agent.ProfileOffline)
	h := startHTTP(t, nil, proj)
	initBody := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

	post := func(token, body string, hdr map[string]string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, h.url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		for k, v := range hdr {
			if k == "Host" {
				req.Host = v
			} else {
				req.Header.Set(k, v)
			}
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		return res
	}
	for name, token := range map[string]string{"no token": "", "wrong token": "wkc_not-a-token"} {
		res := post(token, initBody, nil)
		if res.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: status %d, WWW-Authenticate %q", name, res.StatusCode, res.Header.Get("WWW-Authenticate"))
		}
		if b, _ := io.ReadAll(res.Body); strings.Contains(string(b), "tools") {
			t.Errorf("%s: a 401 body talks about tools: %s", name, b)
		}
	}
	for name, hdr := range map[string]map[string]string{
		"foreign Origin": {"Origin": "http://evil.example.com"},
		"foreign Host":   {"Host": "evil.example.com"},
	} {
		if res := post(alice, initBody, hdr); res.StatusCode != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403", name, res.StatusCode)
		}
	}
	ok := post(alice, initBody, map[string]string{"Origin": "http://localhost:3000"})
	sid := ok.Header.Get("Mcp-Session-Id")
	if ok.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("alice initialize: status %d, session %q", ok.StatusCode, sid)
	}
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	if res := post(bob, ping, map[string]string{"Mcp-Session-Id": sid}); res.StatusCode != http.StatusForbidden {
		t.Errorf("bob in alice's session: status %d, want 403", res.StatusCode)
	}
	if res := post(alice, ping, map[string]string{"Mcp-Session-Id": sid}); res.StatusCode != http.StatusOK {
		t.Errorf("alice in her session: status %d", res.StatusCode)
	}
	if res := post(alice, ping, map[string]string{"Mcp-Session-Id": "no-such-session"}); res.StatusCode != http.StatusNotFound {
		t.Errorf("unknown session: status %d, want 404", res.StatusCode)
	}
}

// TestHTTPStartupRefusals: no remote listen without TLS, no --no-auth with
// --allow-remote, no server without callers.
func TestHTTPStartupRefusals(t *testing.T) {
	proj := newProject(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--http", "0.0.0.0:0"}, "not a loopback address"},
		{[]string{"--http", "127.0.0.1:0", "--allow-remote"}, "--allow-remote needs --tls-cert and --tls-key"},
		{[]string{"--http", "0.0.0.0:0", "--allow-remote", "--no-auth", "--tls-cert", "c", "--tls-key", "k"}, "--no-auth serves loopback only"},
		{[]string{"--http", "127.0.0.1:0", "--tls-cert", "c"}, "both --tls-cert and --tls-key"},
		{[]string{"--http", "127.0.0.1:0", "--tls-cert", "missing.pem", "--tls-key", "missing.key"}, "--tls-cert missing.pem / --tls-key missing.key: open missing.pem"},
		{[]string{"--http", "127.0.0.1:0"}, "no callers are configured"},
		{[]string{"--no-auth"}, "--no-auth needs --http"},
	} {
		code, stderr := runWicketCode(t, proj, append([]string{"mcp"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("mcp %v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestHTTPGateAcrossSessions: the gate end to end over HTTP, and a preview
// token issued in session A is refused in session B (nothing is sent).
func TestHTTPGateAcrossSessions(t *testing.T) {
	n := nodetest.NewServer(t)
	proj := newProject(t)
	tok := addCaller(t, proj, "desk", agent.ProfileFull)
	h := startHTTP(t, nodeEnv(n), proj, "--node", n.Addr)
	a, b := h.connect(t, tok), h.connect(t, tok)
	order := `"venue":"paper","symbol":"BTC-USD","side":"buy","type":"market","quantity":"0.5","client_order_id":"http-gate-1"`
	prev := object(t, a.call(t, "submit_order", "{"+order+"}"))
	ptok, _ := prev["preview_token"].(string)
	if prev["status"] != "preview" || ptok == "" {
		t.Fatalf("preview = %v", prev)
	}
	assertOrders(t, n, 0)
	cross := b.call(t, "submit_order", "{"+order+`,"confirm":true,"preview_token":"`+ptok+`"}`)
	if !cross.IsError || !strings.Contains(text(cross), "token") {
		t.Fatalf("session B confirmed session A's token: %q", text(cross))
	}
	assertOrders(t, n, 0)
	done := object(t, a.call(t, "submit_order", "{"+order+`,"confirm":true,"preview_token":"`+ptok+`"}`))
	if done["status"] != "accepted" || done["client_order_id"] != "http-gate-1" {
		t.Fatalf("confirm in session A = %v", done)
	}
	assertOrders(t, n, 1)
}

// TestHTTPConcurrentSessions: 20 sessions at once, each previewing and
// confirming exactly one order: the node takes exactly 20, one each.
func TestHTTPConcurrentSessions(t *testing.T) {
	n := nodetest.NewServer(t)
	proj := newProject(t)
	tok := addCaller(t, proj, "desk", agent.ProfileFull)
	h := startHTTP(t, nodeEnv(n), proj, "--node", n.Addr)
	const sessions = 20
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for i := 0; i < sessions; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			s := h.connect(t, tok)
			order := fmt.Sprintf(`"venue":"paper","symbol":"BTC-USD","side":"buy","type":"market","quantity":"0.01","client_order_id":"conc-%02d"`, i)
			prev := s.call(t, "submit_order", "{"+order+"}")
			var m map[string]any
			if prev.IsError || json.Unmarshal([]byte(text(prev)), &m) != nil || m["preview_token"] == nil {
				errs <- fmt.Errorf("session %d preview: %s", i, text(prev))
				return
			}
			done := s.call(t, "submit_order", "{"+order+`,"confirm":true,"preview_token":"`+m["preview_token"].(string)+`"}`)
			if done.IsError || !strings.Contains(text(done), `"status":"accepted"`) {
				errs <- fmt.Errorf("session %d confirm: %s", i, text(done))
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	audit := auditEntries(t, n)
	seen := map[string]int{}
	for _, e := range audit {
		seen[e.ClientOrderID]++
	}
	if len(audit) != sessions || len(seen) != sessions {
		t.Fatalf("node took %d commands for %d client order ids, want %d each once: %v", len(audit), len(seen), sessions, seen)
	}
}
