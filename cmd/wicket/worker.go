package main

import (
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
			if code := worker.Main(c.Args().Slice(), workerHandlers()); code != 0 {
				return cli.Exit("", code)
			}
			return nil
		},
	}
}

// workerHandlers is every request kind a worker serves. One memo per
// worker process: indicator results are shared across its requests.
func workerHandlers() worker.Handlers {
	return handlers.New(ta.NewMemo(worker.MemoBytes))
}
