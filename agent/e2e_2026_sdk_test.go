package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"wicket/agent"
	"wicket/node/nodetest"
)

// The official Go SDK's client (test-only) against the real binary over
// HTTP: it tries server/discover first and stays in protocol 2026-07-28
// when the server answers it.

// sdkRecorder adds the caller's bearer token to every request and records
// what went over the wire.
type sdkRecorder struct {
	token string

	mu       sync.Mutex
	methods  []string // "POST tools/call", "GET ", ...
	sessions []string // Mcp-Session-Id headers seen, either way
	acks     chan string
}

// acked returns the next subscriptions/acknowledged notification, or the
// end (the result), a listen stream carried (its JSON), or fails.
func (r *sdkRecorder) acked(t *testing.T) string {
	t.Helper()
	select {
	case a := <-r.acks:
		return a
	case <-time.After(20 * time.Second):
		t.Fatal("no notifications/subscriptions/acknowledged nor end on a listen stream")
		return ""
	}
}

// ackWatch passes a listen stream through, handing each
// subscriptions/acknowledged line to acks as it arrives.
type ackWatch struct {
	io.ReadCloser
	acks chan string
	line []byte
}

func (a *ackWatch) Read(p []byte) (int, error) {
	n, err := a.ReadCloser.Read(p)
	for _, c := range p[:n] {
		if c != '\n' {
			a.line = append(a.line, c)
			continue
		}
		if l := string(a.line); strings.Contains(l, "notifications/subscriptions/acknowledged") ||
			(strings.Contains(l, `"result"`) && strings.Contains(l, "io.modelcontextprotocol/subscriptionId")) {
			select {
			case a.acks <- strings.TrimPrefix(l, "data: "):
			default:
			}
		}
		a.line = a.line[:0]
	}
	return n, err
}

func (r *sdkRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	r.mu.Lock()
	r.methods = append(r.methods, req.Method+" "+req.Header.Get("Mcp-Method"))
	if id := req.Header.Get("Mcp-Session-Id"); id != "" {
		r.sessions = append(r.sessions, "request "+id)
	}
	r.mu.Unlock()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil && req.Header.Get("Mcp-Method") == "subscriptions/listen" {
		resp.Body = &ackWatch{ReadCloser: resp.Body, acks: r.acks}
	}
	if err == nil {
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
			r.mu.Lock()
			r.sessions = append(r.sessions, "response "+id)
			r.mu.Unlock()
		}
	}
	return resp, err
}

func (r *sdkRecorder) seen() (methods, sessions []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.methods...), append([]string(nil), r.sessions...)
}

// sdkSession is one SDK client connected to h with token.
type sdkSession struct {
	*sdk.ClientSession
	rec *sdkRecorder
}

func (h *httpServer) connectSDK(t *testing.T, token string, opts *sdk.ClientOptions) *sdkSession {
	t.Helper()
	rec := &sdkRecorder{token: token, acks: make(chan string, 16)}
	c := sdk.NewClient(&sdk.Implementation{Name: "wicket-e2e-go-sdk", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: h.url, HTTPClient: &http.Client{Transport: rec}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("go-sdk connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return &sdkSession{ClientSession: cs, rec: rec}
}

// call invokes a tool with args as JSON text.
func (s *sdkSession) call(t *testing.T, tool, args string) *sdk.CallToolResult {
	t.Helper()
	var a map[string]any
	if args != "" {
		if err := json.Unmarshal([]byte(args), &a); err != nil {
			t.Fatalf("test args %s: %v", args, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: a})
	if err != nil {
		t.Fatalf("go-sdk call %s: %v", tool, err)
	}
	return res
}

func sdkText(r *sdk.CallToolResult) string {
	for _, c := range r.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			return tc.Text
		}
	}
	return ""
}

func sdkObject(t *testing.T, r *sdk.CallToolResult) map[string]any {
	t.Helper()
	if r.IsError {
		t.Fatalf("tool error: %s", sdkText(r))
	}
	var m map[string]any
	body, _ := json.Marshal(r.StructuredContent)
	if r.StructuredContent == nil {
		body = []byte(sdkText(r))
	}
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("result is not a JSON object: %v: %s", err, sdkText(r))
	}
	return m
}

// TestSDK2026GatedLoop: the go-sdk client negotiates 2026-07-28 through
// server/discover (no initialize, no session id either way, no GET
// stream), lists the caller's tools, previews and confirms an order;
// the token is refused to another caller and on replay, and a viewer's
// write is refused.
func TestSDK2026GatedLoop(t *testing.T) {
	n := nodetest.NewServer(t)
	proj := newProject(t)
	alice := addCaller(t, proj, "alice", agent.ProfileFull)
	bob := addCaller(t, proj, "bob", agent.ProfileFull)
	viewer := addCaller(t, proj, "vera", agent.ProfileReadOnly)
	h := startHTTP(t, nodeEnv(n), proj, "--node", n.Addr, "--trace-dir", t.TempDir())
	a, b, v := h.connectSDK(t, alice, nil), h.connectSDK(t, bob, nil), h.connectSDK(t, viewer, nil)

	init := a.InitializeResult()
	if init.ProtocolVersion != "2026-07-28" || init.ServerInfo == nil || init.ServerInfo.Name != "wicket" {
		t.Fatalf("negotiated %q with %+v, want 2026-07-28 from wicket", init.ProtocolVersion, init.ServerInfo)
	}
	//lint:ignore SA1019 the test checks that the deprecated capability is not advertised
	if init.Capabilities == nil || init.Capabilities.Logging != nil || init.Capabilities.Tools == nil {
		t.Errorf("discovered capabilities %+v: want tools and no logging (legacy sessions only)", init.Capabilities)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tools, err := a.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	vtools, err := v.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	has := func(l *sdk.ListToolsResult, name string) bool {
		for _, tool := range l.Tools {
			if tool.Name == name {
				return true
			}
		}
		return false
	}
	if !has(tools, "submit_order") || has(vtools, "submit_order") || !has(vtools, "node_snapshot") {
		t.Fatalf("full caller lists submit_order: %v; read-only caller: %v, node_snapshot %v",
			has(tools, "submit_order"), has(vtools, "submit_order"), has(vtools, "node_snapshot"))
	}

	order := `"venue":"paper","symbol":"BTC-USD","side":"buy","type":"market","quantity":"0.5","client_order_id":"sdk-2026-1"`
	prev := sdkObject(t, a.call(t, "submit_order", "{"+order+"}"))
	tok, _ := prev["preview_token"].(string)
	if prev["status"] != "preview" || tok == "" {
		t.Fatalf("preview = %v", prev)
	}
	assertOrders(t, n, 0)
	confirm := "{" + order + `,"confirm":true,"preview_token":"` + tok + `"}`
	if cross := b.call(t, "submit_order", confirm); !cross.IsError || !strings.Contains(sdkText(cross), "token") {
		t.Fatalf("bob confirmed alice's token: %q", sdkText(cross))
	}
	assertOrders(t, n, 0)
	done := sdkObject(t, a.call(t, "submit_order", confirm))
	if done["status"] != "accepted" || done["client_order_id"] != "sdk-2026-1" {
		t.Fatalf("alice's confirm = %v", done)
	}
	assertOrders(t, n, 1)
	if replay := a.call(t, "submit_order", confirm); !replay.IsError || !strings.Contains(sdkText(replay), "token") {
		t.Fatalf("a replayed token was not refused: %q", sdkText(replay))
	}
	if w := v.call(t, "submit_order", "{"+order+"}"); !w.IsError || !strings.Contains(sdkText(w), "profile") {
		t.Fatalf("the read-only caller's write: %q", sdkText(w))
	}
	assertOrders(t, n, 1)

	methods, sessions := a.rec.seen()
	if len(sessions) != 0 {
		t.Errorf("a modern client saw session ids: %v", sessions)
	}
	for _, m := range methods {
		if !strings.HasPrefix(m, "POST ") || m == "POST initialize" {
			t.Errorf("the modern client sent %q; want only POSTs, never initialize (all: %v)", m, methods)
		}
	}
	if len(methods) == 0 || methods[0] != "POST server/discover" {
		t.Errorf("the client's first request was %v, want server/discover", methods)
	}
}

// TestSDK2026ElicitMRTR: under --approval elicit a modern confirm answers
// input_required with the approval form (2026-07-28 has no
// server-initiated requests); the go-sdk client asks its person and
// retries with the answer: accepted sends once, declined sends nothing, a
// client without elicitation is refused; a forged requestState, the state
// for other arguments, and a replayed one send nothing.
func TestSDK2026ElicitMRTR(t *testing.T) {
	n := nodetest.NewServer(t)
	proj := newProject(t)
	tok := addCaller(t, proj, "alice", agent.ProfileFull)
	h := startHTTP(t, nodeEnv(n), proj, "--node", n.Addr, "--approval", "elicit")
	var mu sync.Mutex
	var shown []string
	action := "accept"
	person := func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		mu.Lock()
		defer mu.Unlock()
		shown = append(shown, req.Params.Message)
		return &sdk.ElicitResult{Action: action, Content: map[string]any{"approve": true}}, nil
	}
	s := h.connectSDK(t, tok, &sdk.ClientOptions{ElicitationHandler: person})
	confirm := func(s *sdkSession, coid string) *sdk.CallToolResult {
		order := marketBuy + `,"client_order_id":"` + coid + `"`
		prev := sdkObject(t, s.call(t, "submit_order", "{"+order+"}"))
		return s.call(t, "submit_order", "{"+order+`,"confirm":true,"preview_token":"`+prev["preview_token"].(string)+`"}`)
	}
	if done := sdkObject(t, confirm(s, "mrtr-accept")); done["status"] != "accepted" {
		t.Fatalf("accepted: %v", done)
	}
	assertOrders(t, n, 1)
	mu.Lock()
	if len(shown) != 1 || !strings.Contains(shown[0], "mrtr-accept") {
		t.Errorf("the person was shown %q", shown)
	}
	action = "decline"
	mu.Unlock()
	if res := confirm(s, "mrtr-decline"); !res.IsError || !strings.HasPrefix(sdkText(res), "REFUSED [approval] the person declined") {
		t.Fatalf("declined: %q", sdkText(res))
	}
	assertOrders(t, n, 1)

	bare := h.connectSDK(t, tok, nil)
	if res := confirm(bare, "mrtr-bare"); !res.IsError || !strings.Contains(sdkText(res), "did not declare the elicitation capability") {
		t.Fatalf("a client without elicitation: %q", sdkText(res))
	}

	// By hand: the client returns input_required, and the test retries.
	manual := h.connectSDK(t, tok, &sdk.ClientOptions{ElicitationHandler: person, MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true}})
	order := map[string]any{"venue": "paper", "symbol": "BTC-USD", "side": "buy", "type": "market", "quantity": "0.01", "client_order_id": "mrtr-manual"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prev, err := manual.CallTool(ctx, &sdk.CallToolParams{Name: "submit_order", Arguments: order})
	if err != nil {
		t.Fatal(err)
	}
	order["confirm"], order["preview_token"] = true, sdkObject(t, prev)["preview_token"]
	asked, err := manual.CallTool(ctx, &sdk.CallToolParams{Name: "submit_order", Arguments: order})
	if err != nil || !asked.NeedsInput() || asked.RequestState == "" || asked.InputRequests["approval"] == nil {
		t.Fatalf("confirm without auto-retry: %v %+v", err, asked)
	}
	yes := sdk.InputResponseMap{"approval": &sdk.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}}
	retry := func(args map[string]any, state string) string {
		t.Helper()
		res, err := manual.CallTool(ctx, &sdk.CallToolParams{Name: "submit_order", Arguments: args, InputResponses: yes, RequestState: state})
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError {
			return "sent: " + sdkText(res)
		}
		return sdkText(res)
	}
	forged := asked.RequestState[:len(asked.RequestState)-2] + "AA"
	if got := retry(order, forged); !strings.Contains(got, "not issued by this server") {
		t.Errorf("a forged requestState: %q", got)
	}
	other := map[string]any{}
	for k, v := range order {
		other[k] = v
	}
	other["quantity"] = "0.02"
	if got := retry(other, asked.RequestState); !strings.HasPrefix(got, "REFUSED [approval]") {
		t.Errorf("the state for other arguments: %q", got)
	}
	assertOrders(t, n, 1)
	if got := retry(order, asked.RequestState); !strings.HasPrefix(got, "sent: ") {
		t.Fatalf("the genuine retry: %q", got)
	}
	assertOrders(t, n, 2)
	if got := retry(order, asked.RequestState); !strings.Contains(got, "already answered") {
		t.Errorf("a replayed requestState: %q", got)
	}
	assertOrders(t, n, 2)
}

// TestSDK2026ListenSnapshot: a modern client's Subscribe opens a
// subscriptions/listen stream on wicket://node/snapshot; a confirmed order
// changes the node and the update arrives on that stream; losing the
// node is an update too.
func TestSDK2026ListenSnapshot(t *testing.T) {
	n := nodetest.NewServer(t)
	proj := newProject(t)
	tok := addCaller(t, proj, "alice", agent.ProfileFull)
	h := startHTTP(t, nodeEnv(n), proj, "--node", n.Addr)
	updates := make(chan string, 16)
	s := h.connectSDK(t, tok, &sdk.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
		select {
		case updates <- req.Params.URI:
		default:
		}
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s.Subscribe(ctx, &sdk.SubscribeParams{URI: "wicket://node/snapshot"}); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	wait := func(what string) {
		t.Helper()
		select {
		case uri := <-updates:
			if uri != "wicket://node/snapshot" {
				t.Fatalf("%s: update for %q", what, uri)
			}
		case <-ctx.Done():
			t.Fatalf("%s: no notifications/resources/updated on the listen stream", what)
		}
	}
	prev := sdkObject(t, s.call(t, "submit_order", "{"+marketBuy+"}"))
	done := sdkObject(t, s.call(t, "submit_order", "{"+marketBuy+`,"confirm":true,"preview_token":"`+prev["preview_token"].(string)+`"}`))
	if done["status"] != "accepted" {
		t.Fatalf("order: %v", done)
	}
	wait("an order filled")
	for len(updates) > 0 {
		<-updates
	}
	n.Close()
	wait("the node went away")
	if _, sessions := s.rec.seen(); len(sessions) != 0 {
		t.Errorf("session ids: %v", sessions)
	}
}

// TestSDK2026ListenNotices: what a legacy session hears as
// notifications/message reaches a modern client on its
// subscriptions/listen streams instead: each notice (a budget at 80 %, a
// strategy worker killed at its memory limit, the node lost and back) is
// a notifications/resources/updated for wicket://session carrying the
// notice in _meta, node ones also for wicket://node/snapshot, and
// wicket://session lists them. A listen stream is acknowledged only for
// the URIs that send updates, and no log message ever reaches the client.
func TestSDK2026ListenNotices(t *testing.T) {
	n := nodetest.NewServer(t)
	proj := newProject(t)
	smallWorkerMemory(t, proj)
	tok := addCaller(t, proj, "alice", agent.ProfileFull)
	h := startHTTP(t, nodeEnv(n), proj, "--node", n.Addr, "--max-writes", "5")
	type update struct {
		uri    string
		notice map[string]any
	}
	updates := make(chan update, 64)
	var logs sync.Mutex
	var logged []string
	s := h.connectSDK(t, tok, &sdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
			u := update{uri: req.Params.URI}
			u.notice, _ = req.Params.Meta["wicket/notice"].(map[string]any)
			select {
			case updates <- u:
			default:
			}
		},
		//lint:ignore SA1019 the test checks that no log message reaches a modern client
		LoggingMessageHandler: func(_ context.Context, req *sdk.LoggingMessageRequest) {
			logs.Lock()
			logged = append(logged, fmt.Sprint(req.Params.Data))
			logs.Unlock()
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, uri := range []string{"wicket://session", "wicket://node/snapshot", "wicket://series"} {
		if err := s.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}); err != nil {
			t.Fatalf("subscribe %s: %v", uri, err)
		}
		if uri != "wicket://series" {
			if ack := s.rec.acked(t); !strings.Contains(ack, `"resourceSubscriptions":["`+uri+`"]`) {
				t.Errorf("the listen on %s was acknowledged as %s", uri, ack)
			}
			continue
		}
		// wicket://series sends no updates: the stream is acknowledged for
		// nothing and ends at once (mcp-go may lose the acknowledgement to
		// the end on a POST stream; the end always arrives).
		for {
			l := s.rec.acked(t)
			if strings.Contains(l, "wicket://series") {
				t.Errorf("the listen on wicket://series was acknowledged as %s", l)
			}
			if strings.Contains(l, `"result"`) {
				break
			}
		}
	}
	// wait returns the notice of the first update of uri whose notice
	// mentions text, among those seen so far and then those to come.
	var seen []update
	wait := func(uri, text string) map[string]any {
		t.Helper()
		for i := 0; ; i++ {
			for i == len(seen) {
				select {
				case u := <-updates:
					seen = append(seen, u)
				case <-ctx.Done():
					t.Fatalf("no update of %s with a notice mentioning %q", uri, text)
				}
			}
			if d, _ := seen[i].notice["data"].(string); seen[i].uri == uri && strings.Contains(d, text) {
				return seen[i].notice
			}
		}
	}
	for i := range 4 {
		order := marketBuy + fmt.Sprintf(`,"client_order_id":"listen-%d"`, i)
		prev := sdkObject(t, s.call(t, "submit_order", "{"+order+"}"))
		if done := sdkObject(t, s.call(t, "submit_order", "{"+order+`,"confirm":true,"preview_token":"`+prev["preview_token"].(string)+`"}`)); done["status"] != "accepted" {
			t.Fatalf("order %d: %v", i, done)
		}
	}
	if b := wait("wicket://session", "max-writes is 80% used: 4 of 5"); b["level"] != "warning" || b["logger"] != "budget" {
		t.Errorf("the budget notice: %v", b)
	}

	var bomb string
	for _, h := range hostile {
		if h.want == "memory" {
			bomb = h.source
		}
	}
	src, _ := json.Marshal(bomb)
	if r := s.call(t, "validate_strategy", `{"source":`+string(src)+`}`); !r.IsError {
		t.Fatalf("the memory bomb did not fail the call: %.300s", sdkText(r))
	}
	if w := wait("wicket://session", "killed at its memory limit"); w["logger"] != "worker" {
		t.Errorf("the worker notice: %v", w)
	}

	n.Close()
	wait("wicket://node/snapshot", "unreachable")
	if lost := wait("wicket://session", "unreachable"); lost["level"] != "warning" || lost["logger"] != "node" {
		t.Errorf("the node-lost notice: %v", lost)
	}
	n.Restart(t)
	wait("wicket://node/snapshot", "reachable again")
	wait("wicket://session", "reachable again")

	res, err := s.ReadResource(ctx, &sdk.ReadResourceParams{URI: "wicket://session"})
	if err != nil || len(res.Contents) == 0 {
		t.Fatalf("read wicket://session: %v", err)
	}
	var info struct {
		Notices []struct{ Logger, Data string }
	}
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &info); err != nil {
		t.Fatal(err)
	}
	var loggers []string
	for _, x := range info.Notices {
		loggers = append(loggers, x.Logger)
	}
	if got := strings.Join(loggers, " "); got != "budget worker node node" {
		t.Errorf("wicket://session notices by logger: %q, want budget worker node node (%+v)", got, info.Notices)
	}
	logs.Lock()
	defer logs.Unlock()
	if len(logged) != 0 {
		t.Errorf("a modern client heard log messages: %q", logged)
	}
}
