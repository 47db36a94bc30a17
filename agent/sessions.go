package agent

import (
	"encoding/json"

	"github.com/mark3labs/mcp-go/server"

	"wicket/agent/wire"
	"wicket/trace"
)

// What a transport that serves many sessions (Streamable HTTP, in
// agent/front) gets from agent: a Server per session or caller, opened by
// Sessions with the caller's profile and deny list, and the few methods
// it routes a message through. Which tools a session serves is decided
// here, from the registry, never by the transport: it names a profile and
// a deny list (a caller's, or an OAuth scope's), and Rescope is the only
// way a live session's set changes.

// Seat is whom one session or modern caller's state serves.
type Seat struct {
	Caller  string   // the caller's name ("" under --no-auth)
	Profile string   // its profile
	Deny    []string // its deny list
	// Transport is what wicket://session reports, e.g. "streamable HTTP
	// at 127.0.0.1:8765".
	Transport string
}

// Sessions opens the Servers of one multi-session transport. They share
// the record of which caller placed which order (owners.go), so a caller
// modifies or cancels only its own, whichever of its sessions placed it.
type Sessions struct {
	opts Options
	b    Backends
}

// NewSessions checks opts (NewID is required) and fills its defaults.
func NewSessions(opts Options, b Backends) (*Sessions, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	opts.owners = newOrderOwners()
	return &Sessions{opts: opts, b: b}, nil
}

// Options are the options every session starts from, defaults filled.
func (ss *Sessions) Options() Options { return ss.opts }

// Open builds the Server of one session for seat.
func (ss *Sessions) Open(seat Seat) (*Server, error) {
	opts := ss.opts
	opts.Profile, opts.Deny, opts.Caller, opts.Transport = seat.Profile, seat.Deny, seat.Caller, seat.Transport
	return New(opts, ss.b)
}

// MCP is the mcp-go server a transport hands this Server's messages to.
func (s *Server) MCP() *server.MCPServer { return s.mcp }

// Wire is this session's id table: a transport passes every message
// through it (agent/wire).
func (s *Server) Wire() *wire.IDs { return s.ids }

// RescopeTool is the trace's tool name for a session's re-scope: it is
// not a tool (the parentheses keep it out of any registry's names).
const RescopeTool = "(rescope)"

// Rescope swaps the server's access set for profile's and deny's, whole
// (a call already running keeps the set it was checked against), and
// traces the move as an entry of its own: tool RescopeTool, verdict ok,
// the new profile and deny list, and args naming the old profile, the new
// one and scope, the grant that moved it (an OAuth scope; never a token).
func (s *Server) Rescope(profile string, deny []string, scope string) error {
	start := s.opts.Now()
	access, err := newToolAccess(s.reg, profile, deny)
	if err != nil {
		return err
	}
	old := s.access.Swap(access)
	if s.opts.Trace != nil {
		moved := map[string]any{"from": old.Profile, "to": access.Profile, "scope": scope}
		if len(old.Denied) > 0 {
			moved["from_denied"] = old.Denied
		}
		args, _ := json.Marshal(moved)
		s.opts.Trace.Write(trace.Entry{
			TS: start, Session: s.session, Caller: s.opts.Caller, Seq: s.seq.Add(1),
			Tool: RescopeTool, Profile: access.Profile, Denied: access.Denied,
			Args: args, Verdict: trace.OK, MS: trace.Millis(s.opts.Now().Sub(start)),
		})
	}
	return nil
}

// NewUsageError is an operator's start-up mistake found outside agent (a
// transport's options): the command line exits 2 with msg, as for an
// unknown profile.
func NewUsageError(msg string) *UsageError { return &UsageError{msg: msg} }
