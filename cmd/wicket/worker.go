package main

import (
	"context"
	"io"

	"github.com/urfave/cli/v2"

	"wicket/strategy/ta"
	"wicket/strategy/worker"
	"wicket/strategy/worker/handlers"
)

// workerCommand is the hidden worker mode: the process a worker pool
// starts to run strategy code under memory and CPU limits. Its stdin and
// stdout carry the worker protocol only.
func workerCommand() *cli.Command {
	return &cli.Command{
		Name:            worker.Arg,
		Hidden:          true,
		Usage:           "run as a strategy worker (started by wicket itself)",
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			return runWorker(c.Context, workerOptions{args: c.Args().Slice()}, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// workerOptions is what worker mode works with: its arguments, unparsed
// (worker.Main reads them).
type workerOptions struct {
	args []string
}

// runWorker serves the worker protocol on the process's own stdin and
// stdout (not the streams given: they are the protocol's, whatever a
// caller passes) until the pool closes it; a failure is its exit code.
func runWorker(_ context.Context, o workerOptions, _, _ io.Writer) error {
	if code := worker.Main(o.args, workerHandlers()); code != 0 {
		return cli.Exit("", code)
	}
	return nil
}

// workerHandlers is every request kind a worker serves. One memo per
// worker process: indicator results are shared across its requests.
func workerHandlers() worker.Handlers {
	return handlers.New(ta.NewMemo(worker.MemoBytes))
}
