package front

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"

	"wicket/agent"
	"wicket/internal/project"
)

// TestHTTPShapeRefused: valid JSON that is not a JSON-RPC message (a bare
// value, an id that is an object, an array or a boolean) is -32600 with id
// null over HTTP as over stdio (agent's TestWireShapeRefused), never
// -32700, and never served with its odd id echoed.
func TestHTTPShapeRefused(t *testing.T) {
	bad := []string{`42`, `"ping"`, `true`,
		`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`,
		`{"jsonrpc":"2.0","id":[1],"method":"ping"}`,
		`{"jsonrpc":"2.0","id":true,"method":"ping"}`}
	check := func(t *testing.T, in, got string) {
		t.Helper()
		var resp struct {
			ID    json.RawMessage `json:"id"`
			Error *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(got), &resp); err != nil || resp.Error == nil ||
			resp.Error.Code != mcp.INVALID_REQUEST || string(resp.ID) != "null" {
			t.Errorf("%s answered %s; want -32600 with id null", in, got)
		}
	}
	h, err := NewHTTP(agent.Options{Profile: agent.ProfileOffline, NewID: uuid.NewString},
		agent.Backends{Config: project.Defaults()}, HTTPOptions{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, b := range bad {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+MCPPath, strings.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		check(t, b, strings.TrimSpace(string(body)))
	}
}
