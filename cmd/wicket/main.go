// Command wicket is the agent surface for systematic trading: an MCP server
// (wicket mcp), a trading node with paper venues, a research toolkit over a
// bar history store, and the review of what an agent did.
//
// main only sets up signals and exits with what run returns; run wires the
// packages together and is what the tests call.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
