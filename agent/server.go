package agent

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"wicket/agent/wire"
	"wicket/gate"
	"wicket/internal/buildinfo"
	"wicket/node/guardrail"
	"wicket/strategy/ledger"
	"wicket/trace"
)

// Tracer receives one entry per tools/call (a *trace.Writer). Write must
// not block the caller for long and never fails it.
type Tracer interface{ Write(trace.Entry) }

// Options configure a Server. Zero values are usable defaults except where
// noted.
type Options struct {
	Profile string   // required: full, read-only or offline
	Deny    []string // --deny-tool names

	Version string // build version, for serverInfo
	Trace   Tracer // nil: tracing off
	Now     func() time.Time
	// NewID mints the session id and the client order ids a preview
	// resolves (command.NewID in production); required.
	NewID  func() string
	Stderr io.Writer // logs; never stdout
	// Drain bounds how long the server waits, after stdin closes, for
	// outstanding responses (default 30 s).
	Drain time.Duration

	// MaxMessage bounds one JSON-RPC message: a stdio line or an HTTP
	// body (default DefaultMaxMessage).
	MaxMessage int
	// Caller names the HTTP caller whose session this is; traced on
	// every entry and shown in wicket://session. Empty over stdio.
	Caller string
	// owners, set by NewSessions, are the orders each caller placed,
	// shared by its sessions (owners.go); nil over stdio (one caller).
	owners *orderOwners
	// Transport is what wicket://session reports: "stdio" (the default)
	// or "streamable HTTP at ADDR".
	Transport string

	// What wicket://session reports.
	TraceDir    string // where the trace is written, when tracing
	DataService string // "embedded (project history store)" or the --addr
	NodeAddr    string // the --node address, "" when none

	Loop Loop // --approval and the session budgets (loop.go)
}

// serverTitle is serverInfo's title.
const serverTitle = "Wicket: strategy authoring, research and gated trading"

// Server is a configured MCP server for one session: a stdio connection,
// or one session of the HTTP server (which builds a Server per session, so
// pending previews, the trace session id and the access set never cross).
type Server struct {
	reg      *registry
	access   atomic.Pointer[ToolAccess] // swapped whole by rescope, never changed in place
	opts     Options
	session  string
	seq      atomic.Int64
	mcp      *server.MCPServer
	venues   venueKinds
	tb       *toolbox
	ids      *wire.IDs
	protocol atomic.Value // string: the negotiated protocol version
	client   atomic.Value // string: mcp-go's id of the client session
	watch    *nodeWatch
	listen   *listens   // subscriptions/listen streams and notices (listen.go)
	loop     *writeLoop // set by New (loop.go)
}

// withDefaults fills the optional fields; NewID is required.
func (opts Options) withDefaults() (Options, error) {
	if opts.NewID == nil {
		return opts, errors.New("agent: Options.NewID is required")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Stderr == nil {
		opts.Stderr = io.Discard
	}
	if opts.Drain == 0 {
		opts.Drain = 30 * time.Second
	}
	if opts.MaxMessage <= 0 {
		opts.MaxMessage = defaultMaxMessage
	}
	if opts.Transport == "" {
		opts.Transport = "stdio"
	}
	opts.Version = buildinfo.Version(opts.Version) // internal/buildinfo: one rule for every report
	return opts, nil
}

// newServer builds a server over an explicit registry.
func newServer(reg *registry, opts Options, tb *toolbox) (*Server, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	access, err := newToolAccess(reg, opts.Profile, opts.Deny)
	if err != nil {
		return nil, err
	}
	if tb == nil {
		tb = &toolbox{}
	}
	s := &Server{reg: reg, opts: opts, session: opts.NewID(), tb: tb, ids: wire.NewIDs()}
	s.access.Store(access)
	s.protocol.Store("")
	s.client.Store("")
	s.watch = newNodeWatch(s)
	s.listen = newListens(s)
	hooks := &server.Hooks{}
	hooks.AddAfterInitialize(func(_ context.Context, _ any, _ *mcp.InitializeRequest, res *mcp.InitializeResult) {
		s.protocol.Store(res.ProtocolVersion)
	})
	hooks.AddOnRegisterSession(func(_ context.Context, cs server.ClientSession) {
		s.client.Store(cs.SessionID())
	})
	hooks.AddAfterSubscribe(func(_ context.Context, _ any, req *mcp.SubscribeRequest, _ *mcp.EmptyResult) {
		if req.Params.URI == uriSnapshot {
			s.watch.subscribe(true)
		}
	})
	hooks.AddAfterUnsubscribe(func(_ context.Context, _ any, req *mcp.UnsubscribeRequest, _ *mcp.EmptyResult) {
		if req.Params.URI == uriSnapshot {
			s.watch.subscribe(false)
		}
	})
	hooks.AddOnError(func(ctx context.Context, id any, method mcp.MCPMethod, _ any, err error) {
		s.recodeResource(ctx, id, method, err) // resources.go
	})
	hooks.AddBeforeSubscriptionsListen(s.listen.open) // listen.go
	hooks.AddAfterDiscover(modernDiscover)            // protocol.go
	hooks.AddAfterSetLevel(func(context.Context, any, *mcp.SetLevelRequest, *mcp.EmptyResult) {
		s.watch.wantLogs()
	})
	hooks.AddAfterListTools(func(_ context.Context, _ any, _ *mcp.ListToolsRequest, res *mcp.ListToolsResult) {
		served := res.Tools[:0]
		for _, t := range res.Tools {
			if s.Access().Served(t.Name) {
				served = append(served, t)
			}
		}
		res.Tools = served
	})
	s.mcp = server.NewMCPServer("wicket", opts.Version,
		server.WithTitle(serverTitle),
		server.WithInstructions(instructions(reg, access)+opts.Loop.instructions(len(servedWrites(reg, access)) > 0)),
		server.WithToolCapabilities(false),
		server.WithResourceCapabilities(true, false),
		server.WithPromptCapabilities(false),
		server.WithLogging(),
		server.WithCompletions(),
		server.WithPromptCompletionProvider(completer{s}),
		server.WithResourceCompletionProvider(completer{s}),
		server.WithHooks(hooks),
	)
	for _, spec := range reg.Specs() {
		s.mcp.AddTool(tb.render(spec), s.handler(spec))
	}
	s.addResources()
	s.addPrompts()
	return s, nil
}

// Access is the server's served and refused sets.
func (s *Server) Access() *ToolAccess { return s.access.Load() }

// Session is this server's session id, as traced.
func (s *Server) Session() string { return s.session }

// ProtocolVersion is the negotiated protocol version, "" before initialize.
func (s *Server) ProtocolVersion() string { return s.protocol.Load().(string) }

// Close stops the session's background work (the node watch).
func (s *Server) Close() { s.watch.stop() }

// Serve runs the MCP protocol on stdin/stdout until stdin closes (after
// answering everything it read) or ctx is cancelled.
func (s *Server) Serve(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	defer s.Close()
	desk := newFrontDesk(stdin, stdout, s.opts.Drain, s.opts.MaxMessage, s.ids)
	desk.intercept = s.Intercept
	desk.prepare = s.Prepare
	desk.version = s.ProtocolVersion
	stdio := server.NewStdioServer(s.mcp)
	stdio.SetErrorLogger(log.New(s.opts.Stderr, "wicket mcp: ", log.LstdFlags))
	err := stdio.Listen(ctx, desk.reader(), desk.writer())
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// handler wraps a spec's Handle with the access check, strict arguments,
// panic recovery and the trace.
func (s *Server) handler(spec *toolSpec) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		start := s.opts.Now()
		raw := req.Params.RawArguments
		var res *result
		if !s.Access().Served(spec.Name) {
			res = refuse(s.Access().refusalText(spec.Name))
		} else if a, notes, err := parseArgs(spec.Name, spec.Params, raw); err != nil {
			res = fail("%v", err)
		} else {
			res = s.run(ledger.WithWho(ctx, s.who()), spec, &call{tool: spec.Name, args: a, raw: raw, request: req})
			res.addNotes(notes)
			if ctx.Err() != nil && res.verdict.IsZero() && res.ticket == "" {
				res = cancelled(ctx) // its answer is dropped; the trace says what became of it
			}
		}
		s.record(spec.Name, spec.Write, raw, res, start)
		if res.errText != "" {
			s.notifyFailure(spec.Name, res)
		}
		return res.toMCP(), nil
	}
}

// run calls the handler, turning a panic into an isError result.
func (s *Server) run(ctx context.Context, spec *toolSpec, c *call) (res *result) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(s.opts.Stderr, "wicket mcp: panic in %s: %v\n%s", spec.Name, p, debug.Stack())
			res = fail("internal error in %s (the server recovered and keeps serving): %v", spec.Name, p)
		}
	}()
	res = spec.Handle(ctx, c)
	if res == nil {
		res = fail("internal error in %s: no result", spec.Name)
	}
	return res
}

// record hands one tools/call to the trace.
func (s *Server) record(tool string, write bool, raw json.RawMessage, res *result, start time.Time) {
	if s.opts.Trace == nil {
		return
	}
	v := res.verdict
	if v.IsZero() {
		v = trace.OK
	}
	s.opts.Trace.Write(trace.Entry{
		TS:            start,
		Session:       s.session,
		Caller:        s.opts.Caller,
		Seq:           s.seq.Add(1),
		Tool:          tool,
		Write:         write,
		Profile:       s.Access().Profile,
		Denied:        s.Access().Denied,
		Args:          raw,
		Verdict:       v,
		Token:         res.token,
		ClientOrderID: res.clientOrderID,
		Ticket:        res.ticket,
		Outcome:       res.outcome,
		Error:         res.errText,
		Approval:      res.approval,
		ApprovedBy:    res.approvedBy,
		MS:            trace.Millis(s.opts.Now().Sub(start)),
	})
}

// Prepare adjusts a request before mcp-go sees it: a resources/read of a
// template URI whose variable holds characters a simple URI-template
// variable cannot match ('@' in BTC-USD@1h) gets them percent-encoded, as
// RFC 6570 expects; the handlers decode them again.
func (s *Server) Prepare(body []byte, m *wire.Message) []byte {
	if m.Method != string(mcp.MethodResourcesRead) {
		return body
	}
	var p struct {
		URI string `json:"uri"`
	}
	if json.Unmarshal(m.Params, &p) != nil {
		return body
	}
	for _, prefix := range []string{"wicket://series/", "wicket://strategy/"} {
		if rest, ok := strings.CutPrefix(p.URI, prefix); ok && strings.ContainsAny(rest, "@") {
			uri, _ := json.Marshal(prefix + strings.ReplaceAll(rest, "@", "%40"))
			return wire.ReplaceParam(body, m.Params, "uri", string(uri))
		}
	}
	return body
}

// Intercept answers tools/call requests the registry cannot route: an
// unknown name gets the protocol's -32602 with up to three suggestions,
// and is traced as refused. A resources/subscribe is refused unless its
// URI sends updates.
func (s *Server) Intercept(line []byte, id json.RawMessage, method string) ([]byte, bool) {
	if method == string(mcp.MethodResourcesSubscribe) {
		return s.checkSubscribe(line, id) // resources.go
	}
	if method != string(mcp.MethodToolsCall) {
		return nil, false
	}
	var msg struct {
		Params struct {
			Name      json.RawMessage `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	start := s.opts.Now()
	var name string
	if json.Unmarshal(line, &msg) != nil || json.Unmarshal(msg.Params.Name, &name) != nil {
		text := "invalid tools/call: params.name must be a tool name (a string)"
		s.record("", false, nil, refuse(text), start)
		return wire.Error(id, mcp.INVALID_PARAMS, text), true
	}
	if _, known := s.reg.Lookup(name); known {
		return nil, false
	}
	text := fmt.Sprintf("unknown tool %q", name)
	if sugg := s.Access().suggest(name); len(sugg) > 0 {
		text += "; did you mean " + strings.Join(sugg, ", ") + "?"
	} else {
		text += "."
	}
	text += " Call tools/list for the tools this server offers."
	s.record(name, false, msg.Params.Arguments, refuse(text), start)
	return wire.Error(id, mcp.INVALID_PARAMS, text), true
}

func encodeBase64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// New builds the server: the registry over the backends, the access set
// from the profile and deny list, the preview gate and the guardrail.
func New(opts Options, b Backends) (*Server, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := opts.Loop.Validate(); err != nil {
		return nil, err
	}
	tb := &toolbox{
		rendered: &productionTools,
		Backends: b,
		newID:    opts.NewID,
		now:      opts.Now,
		previews: gate.New[pendingWrite](gate.Options{Now: opts.Now}),
		deploys:  newDeployGate(opts.Now),
		guard:    guardrail.New(b.Config),
		loop:     newWriteLoop(opts.Loop, opts.Now),
		runs:     newRunStore(),
		sheets:   newSheetStore(),
		owners:   opts.owners,
		caller:   opts.Caller,
	}
	s, err := newServer(newRegistry(tb.specs()...), opts, tb)
	if err != nil {
		return nil, err
	}
	tb.venues = &s.venues
	s.loop, tb.loop.session, tb.loop.announce = tb.loop, s.session, s.announceCall
	s.addRunResources(tb.runs) // runs.go
	return s, nil
}
