package agent_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"wicket/agent"
	"wicket/node/nodetest"
)

// modernHeaders sets the headers a 2026-07-28 client sends with msg over
// Streamable HTTP (Mcp-Protocol-Version, Mcp-Method, Mcp-Name), derived
// from its body; a legacy message gets none.
func modernHeaders(h http.Header, msg string) {
	var m struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal([]byte(msg), &m) != nil {
		return
	}
	var p struct {
		Meta map[string]any `json:"_meta"`
	}
	_ = json.Unmarshal(m.Params, &p)
	v, _ := p.Meta[mcp.MetaKeyProtocolVersion].(string)
	if !mcp.IsModernProtocol(v) {
		return
	}
	h.Set(mcp.HeaderProtocolVersion, v)
	for k, val := range mcp.StandardHeaders(v, mcp.MCPMethod(m.Method), m.Params) {
		h.Set(k, val)
	}
}

// modernMeta is the _meta of a 2026-07-28 request.
const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// rawHTTP is one request to h: its status, headers and body.
type rawHTTP struct {
	status int
	header http.Header
	body   string
}

func (h *httpServer) raw(t *testing.T, method, token, body string, header map[string]string) rawHTTP {
	t.Helper()
	req, err := http.NewRequest(method, h.url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if method == http.MethodPost {
		modernHeaders(req.Header, body)
	}
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<22))
	out := string(b)
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		for _, l := range strings.Split(out, "\n") {
			if d, ok := strings.CutPrefix(l, "data: "); ok && !isNotification(d) {
				out = d
			}
		}
	}
	return rawHTTP{status: res.StatusCode, header: res.Header, body: strings.TrimSpace(out)}
}

// TestHTTP2026FrontDesk pins each rule the front desk adds or passes on
// for modern requests: served without a session; a session id it is sent
// is ignored and none is minted; GET and DELETE are 405; a batch is
// refused; the Mcp-Method header is required (mcp-go's check, reached
// through the desk); lists carry ttlMs and cacheScope private; and a
// legacy session's preview token does not confirm in the caller's modern
// state (legacy sessions keep their own state).
func TestHTTP2026FrontDesk(t *testing.T) {
	n := nodetest.NewServer(t)
	proj := newProject(t)
	tok := addCaller(t, proj, "desk", agent.ProfileFull)
	h := startHTTP(t, nodeEnv(n), proj, "--node", n.Addr)

	list := `{"jsonrpc":"2.0","id":1,"method":"prompts/list","params":{` + modernMeta + `}}`
	r := h.raw(t, http.MethodPost, tok, list, nil)
	if r.status != http.StatusOK || !strings.Contains(r.body, `"cacheScope":"private"`) || !strings.Contains(r.body, `"ttlMs":`) ||
		!strings.Contains(r.body, `"resultType":"complete"`) {
		t.Fatalf("modern prompts/list: %d %s", r.status, r.body)
	}
	if id := r.header.Get("Mcp-Session-Id"); id != "" {
		t.Errorf("a modern response minted session id %q", id)
	}

	legacy := h.connect(t, tok)
	r = h.raw(t, http.MethodPost, tok, list, map[string]string{"Mcp-Session-Id": "wk-not-a-session"})
	if r.status != http.StatusOK || r.header.Get("Mcp-Session-Id") != "" {
		t.Errorf("a modern request with a stray session id: %d %q %s", r.status, r.header.Get("Mcp-Session-Id"), r.body)
	}

	for _, verb := range []string{http.MethodGet, http.MethodDelete} {
		r = h.raw(t, verb, tok, "", map[string]string{mcp.HeaderProtocolVersion: "2026-07-28", "Content-Type": ""})
		if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != http.MethodPost || !strings.Contains(r.body, "subscriptions/listen") {
			t.Errorf("modern %s: %d Allow=%q %s", verb, r.status, r.header.Get("Allow"), r.body)
		}
	}

	r = h.raw(t, http.MethodPost, tok, "["+list+"]", map[string]string{mcp.HeaderProtocolVersion: "2026-07-28"})
	if r.status != http.StatusBadRequest || !strings.Contains(r.body, `"code":-32600`) || !strings.Contains(r.body, "no JSON-RPC batches") {
		t.Errorf("modern batch: %d %s", r.status, r.body)
	}

	r = h.raw(t, http.MethodPost, tok, list, map[string]string{mcp.HeaderMethod: ""})
	if r.status != http.StatusBadRequest || !strings.Contains(r.body, "Mcp-Method") {
		t.Errorf("modern request without Mcp-Method: %d %s", r.status, r.body)
	}
	r = h.raw(t, http.MethodPost, tok, list, map[string]string{mcp.HeaderMethod: "tools/list"})
	if r.status != http.StatusBadRequest || !strings.Contains(r.body, "Mcp-Method") {
		t.Errorf("modern request whose Mcp-Method disagrees with the body: %d %s", r.status, r.body)
	}

	init := `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"x","version":"1"},` + modernMeta + `}}`
	if r = h.raw(t, http.MethodPost, tok, init, nil); r.header.Get("Mcp-Session-Id") != "" || !strings.Contains(r.body, "-32601") {
		t.Errorf("a modern initialize opened a session or was served: %d %q %s", r.status, r.header.Get("Mcp-Session-Id"), r.body)
	}

	prev := object(t, legacy.call(t, "submit_order", "{"+marketBuy+"}"))
	ptok, _ := prev["preview_token"].(string)
	if ptok == "" {
		t.Fatalf("legacy preview = %v", prev)
	}
	args, _ := json.Marshal(map[string]any{"name": "submit_order", "arguments": json.RawMessage("{" + marketBuy + `,"confirm":true,"preview_token":"` + ptok + `"}`)})
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{` + modernMeta + "," + strings.TrimPrefix(string(args), "{") + "}"
	r = h.raw(t, http.MethodPost, tok, call, nil)
	if r.status != http.StatusOK || !strings.Contains(r.body, `"isError":true`) || !strings.Contains(r.body, "token") {
		t.Fatalf("a legacy session's token confirmed in the modern state: %d %s", r.status, r.body)
	}
	assertOrders(t, n, 0)
}
