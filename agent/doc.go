// Package agent is wicket's MCP surface: the tool registry, the access rings
// (ToolAccess from --profile and --deny-tool), the preview gate wired into
// every write tool, instructions, resources and prompts, the trace of every
// tools/call, and the stdio server that carries it all.
//
// The operator decides at start-up what the agent is offered; ToolAccess is
// derived in one pass over the registry and scopes tools/list, tools/call,
// resources, prompts and instructions alike.
//
// agent must never write anything but JSON-RPC messages to its stdout, never
// execute a write without the JSON boolean confirm plus the preview token
// issued for that exact command, never run strategy code in-process (that
// happens in strategy worker processes), and never return or trace a key.
package agent
