// Package agent is wicket's MCP surface: the tool registry, the access rings
// (ToolAccess from --profile and --deny-tool), the preview gate wired into
// every write tool, instructions, resources and prompts, the trace of every
// tools/call, and the two servers that carry it all: stdio, and Streamable
// HTTP with named callers (one Server per session). In front of mcp-go, the
// wire layer returns ids exactly as sent, answers batches per protocol
// version, never answers a cancelled request and bounds a message.
//
// The operator decides at start-up what the agent is offered; ToolAccess is
// derived in one pass over the registry and scopes tools/list, tools/call,
// resources, prompts and instructions alike.
//
// agent must never write anything but JSON-RPC messages to its stdout, never
// let a preview token, a trace session or an access set cross HTTP sessions,
// never serve an HTTP request without a caller's token (unless --no-auth on
// loopback), never execute a write without the JSON boolean confirm plus
// the preview token issued for that exact command, never run strategy code
// in-process (that happens in strategy worker processes), and never return
// or trace a key.
package agent
