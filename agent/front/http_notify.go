package front

import (
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"

	"wicket/agent/wire"
)

// Notifications of protocol 2026-07-28 over HTTP. The revision requires
// the protocol version in _meta on requests; a notification carries it in
// the Mcp-Protocol-Version header, and the official Go SDK sends its
// notifications/cancelled so. mcp-go's transport requires it in _meta on
// every message and answers such a notification 400, so the call it
// cancels ran on. The front desk puts the header's version into the
// notification's _meta before mcp-go reads it.

// withModernMeta is body with version in params._meta when m is a
// notification whose _meta does not name one; else body unchanged.
func withModernMeta(body []byte, m *wire.Message, version string) []byte {
	if m.IsRequest() || m.Method == "" {
		return body
	}
	params := m.Params
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage("{}")
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil {
		return body // not an object: mcp-go says what is wrong with it
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := p["_meta"]; ok && json.Unmarshal(raw, &meta) != nil {
		return body
	}
	if _, ok := meta[mcp.MetaKeyProtocolVersion]; ok {
		return body
	}
	v, _ := json.Marshal(version)
	meta[mcp.MetaKeyProtocolVersion] = v
	mb, err := json.Marshal(meta)
	if err != nil {
		return body
	}
	out := wire.ReplaceParam(body, params, "_meta", string(mb))
	var nm wire.Message
	if json.Unmarshal(out, &nm) == nil {
		*m = nm
	}
	return out
}
