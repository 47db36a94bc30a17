// Package front is the HTTP front desk of `wicket mcp --http`: MCP over
// Streamable HTTP at /mcp, in front of mcp-go's transport. It checks Host
// and Origin (DNS-rebinding protection), bounds connections, bodies and
// sessions, authenticates every request (a bearer caller from
// settings/callers.toml, or an OAuth access token: the resource server,
// the issuer's JWKS, the built-in authorization server's endpoints),
// routes a 2025-era request by its Mcp-Session-Id and a 2026-07-28 request
// to its caller's own state, answers step-up with 403 insufficient_scope
// and moves a session to its subject's new token, and passes every message
// through the session's wire layer (agent/wire). It also serves the
// Protected Resource Metadata and the server card.
//
// Each session is an agent.Server opened through agent.Sessions with the
// caller's profile and deny list; Session below is all the desk uses of
// one. front must never decide which tools a session serves or hold the
// preview gate (both are agent's: the desk names a profile and a deny
// list, and agent builds the access set from its registry), never let a
// session, a preview token or a trace session cross callers, never serve
// a request without a caller's token (unless --no-auth on loopback), and
// never log, store or forward a token.
package front

import (
	"encoding/json"

	"github.com/mark3labs/mcp-go/server"

	"wicket/agent"
	"wicket/agent/wire"
)

// Session is the MCP server behind one session or one modern caller's
// state: what the desk routes a message through.
type Session interface {
	// Session is the session's id (its Mcp-Session-Id, as traced).
	Session() string
	// MCP is the mcp-go server the session's transport serves.
	MCP() *server.MCPServer
	// Wire is the session's id table.
	Wire() *wire.IDs
	// Intercept may answer a request itself (an unknown tool, a refused
	// subscription); handled is false to pass it on.
	Intercept(body []byte, id json.RawMessage, method string) (resp []byte, handled bool)
	// Prepare may rewrite a message before mcp-go reads it.
	Prepare(body []byte, m *wire.Message) []byte
	// ProtocolVersion is the negotiated version, "" before initialize.
	ProtocolVersion() string
	// Rescope moves the session to profile and deny (a step-up token's
	// scope); the session traces the move.
	Rescope(profile string, deny []string, scope string) error
	// Close ends the session's background work.
	Close()
}

var _ Session = (*agent.Server)(nil)
