package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"wicket/agent"
	"wicket/trace"
)

// sessionIDs records the Mcp-Session-Id each MCP request carried and the
// status it was answered with.
type sessionIDs struct {
	challenges
	seen []string // "POST <session id> <status>"
}

func (s *sessionIDs) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := s.challenges.RoundTrip(req)
	if err == nil {
		s.mu.Lock()
		s.seen = append(s.seen, fmt.Sprintf("%s %s %d", req.Method, req.Header.Get("Mcp-Session-Id"), res.StatusCode))
		s.mu.Unlock()
	}
	return res, err
}

// TestSDK2025OAuthStepUpKeepsTheSession: the official Go SDK client in
// the 2025 protocol era (a session) connects with a read scope; a trade
// call is answered 403 insufficient_scope, the client steps up to a trade
// token of the same subject and retries in the same session, which now
// serves the trade tools (before: 404, and the client's session was lost
// for good). The session id never changes; the read tools go on working.
// The move is traced as an entry of its own (issue 46): `wicket trace`
// shows who moved from which profile to which under what scope, and the
// trace holds no token.
func TestSDK2025OAuthStepUpKeepsTheSession(t *testing.T) {
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
	traceDir := filepath.Join(t.TempDir(), "trace")
	startHTTP(t, nil, proj, "--http", addr, "--trace-dir", traceDir)

	as.set("", "wicket:read")
	oh, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		PreregisteredClient:      &oauthex.ClientCredentials{ClientID: authClientID},
		RedirectURL:              "http://127.0.0.1:1/callback",
		AuthorizationCodeFetcher: fetchCode,
	})
	if err != nil {
		t.Fatal(err)
	}
	ids := &sessionIDs{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := sdk.NewClient(&sdk.Implementation{Name: "wicket-e2e-stepup", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: ids},
		OAuthHandler: oh, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect with a read scope: %v\n%s", err, ids.all())
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Fatalf("negotiated %s, want the 2025 era", v)
	}
	session := cs.ID()
	if session == "" {
		t.Fatal("no session id in the 2025 era")
	}
	if names := toolNames(t, cs); lists(names, "submit_order") || !lists(names, "list_series") {
		t.Fatalf("a read scope lists: %s", names)
	}

	as.set("", "wicket:trade") // the operator grants trade when the client asks again
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "submit_order",
		Arguments: map[string]any{"venue": "paper", "symbol": "BTC-USD", "side": "buy", "type": "market", "quantity": "0.1", "reason": "step-up"}})
	if err != nil {
		t.Fatalf("the trade call after a step-up: %v\nchallenges:\n%s\nrequests:\n%s", err, ids.all(), strings.Join(ids.seen, "\n"))
	}
	if !strings.Contains(ids.all(), `error="insufficient_scope"`) {
		t.Errorf("no step-up was asked for:\n%s", ids.all())
	}
	if text := resultText(res); strings.Contains(text, "not served") || strings.Contains(text, "profile") && res.IsError {
		t.Errorf("submit_order after the step-up is refused: %s", text)
	}
	if names := toolNames(t, cs); !lists(names, "submit_order") || !lists(names, "list_series") {
		t.Errorf("after the step-up the session lists: %s", names)
	}
	if cs.ID() != session {
		t.Errorf("the session changed: %s → %s", session, cs.ID())
	}
	for _, line := range ids.seen {
		if strings.HasSuffix(line, " 404") {
			t.Errorf("a request was answered 404: %s", line)
		}
	}

	// The re-scope is the session's own trace entry, between the refused
	// read-scope listing and the trade call, and `wicket trace` shows it.
	var moves []trace.Entry
	for _, e := range traceEntries(t, traceDir) {
		if e.Tool == agent.RescopeTool {
			moves = append(moves, e)
		}
	}
	if len(moves) != 1 {
		t.Fatalf("%d re-scope entries, want 1: %+v", len(moves), moves)
	}
	mv := moves[0]
	var args struct{ From, To, Scope string }
	if err := json.Unmarshal(mv.Args, &args); err != nil {
		t.Fatalf("re-scope args %s: %v", mv.Args, err)
	}
	if mv.Session != session || mv.Caller != "person-7" || mv.Profile != agent.ProfileFull || mv.Verdict != trace.OK ||
		args.From != agent.ProfileReadOnly || args.To != agent.ProfileFull || args.Scope != "wicket:trade" {
		t.Errorf("re-scope entry: %+v, args %s", mv, mv.Args)
	}
	out := runWicket(t, nil, "trace", "list", "--dir", traceDir, "--session", session, "--json")
	if !strings.Contains(out, `"tool":"`+agent.RescopeTool+`"`) || !strings.Contains(out, `"scope":"wicket:trade"`) {
		t.Errorf("wicket trace list does not show the re-scope:\n%s", out)
	}
	months, _ := filepath.Glob(filepath.Join(traceDir, "*.jsonl"))
	for _, m := range months {
		raw, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(raw), "eyJ") { // every JWT begins so
			t.Errorf("the trace holds token material:\n%s", raw)
		}
	}
	if len(months) == 0 {
		t.Error("no trace file was written")
	}
}

// lists is whether toolNames' list holds name.
func lists(names, name string) bool { return strings.Contains(" "+names+" ", " "+name+" ") }

func resultText(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
