// Package agent is wicket's MCP surface: the tool registry, the access rings
// (ToolAccess from --profile and --deny-tool), the preview gate wired into
// every write tool, instructions, resources and prompts, the trace of every
// tools/call, and the stdio server that carries it all. Streamable HTTP with
// named callers and OAuth is agent/front (the HTTP front desk), which opens
// one Server per session through Sessions and must never decide a tool's
// access; the JSON-RPC wire layer both transports put in front of mcp-go
// (ids exactly as sent, batches per protocol version, no answer to a
// cancelled request, a bounded message) is agent/wire.
//
// The operator decides at start-up what the agent is offered; ToolAccess is
// derived in one pass over the registry and scopes tools/list, tools/call,
// resources, prompts and instructions alike.
//
// agent must never write anything but JSON-RPC messages to its stdout, never
// let a preview token, a trace session or an access set cross sessions,
// never import agent/front (the transport depends on agent, not the other
// way), never execute a write without the JSON boolean confirm plus
// the preview token issued for that exact command, never run strategy code
// in-process (that happens in strategy worker processes), and never return
// or trace a key.
package agent
