// Command wicket is the agent surface for systematic trading: an MCP server
// (wicket mcp), a trading node with paper venues, a research toolkit over a
// bar history store, and the review of what an agent did.
//
// main only sets up signals and exits with what run returns; run (app.go)
// builds the cli app and is what the tests call. The commands live in files
// named for them (trace_show.go, data_fetch.go, ...), each in one shape: its
// Action fills an options struct from the flags and calls a
// run…(ctx, opts, stdout, stderr) error that does the work and can be
// called without the cli. The helpers they share live in files named for
// the job (exitcode.go, project.go, flags.go, jsonout.go, keys.go,
// progress.go, research_flags.go, research_engine.go, terminal.go); the
// trade REPL is its own package, internal/trade.
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
