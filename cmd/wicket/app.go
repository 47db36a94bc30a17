package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"wicket/internal/buildinfo"
	"wicket/internal/project"
)

// version is the release stamp, set with -ldflags "-X main.version=..."
// (make build, GoReleaser). Left empty, internal/buildinfo derives the
// version from what the Go toolchain recorded (module version, VCS).
var version = ""

// buildVersion is the version every report of this binary carries:
// --version, serverInfo, the node's status, the server card.
func buildVersion() string { return buildinfo.Version(version) }

// commands lists every top-level command, one file each.
var commands = []func() *cli.Command{
	initCommand,
	secretsCommand,
	traceCommand,
	mcpCommand,
	mcpConfigCommand,
	callersCommand,
	approveCommand, // approve.go: operator approval of agent writes
	demoCommand,
	nodeCommand,
	tradeCommand,
	deployCommand, // deploy.go: a strategy that trades on the node
	dataCommand,
	backtestCommand,
	sweepCommand,
	optimizeCommand,
	walkForwardCommand,
	cpcvCommand, // cpcv.go: combinatorial purged cross-validation
	researchCommand,
	strategyCommand,
	indicatorsCommand,
	workerCommand,
	clusterWorkerCommand, // cluster.go: `wicket worker --cluster URL`
	completionCommand,    // completion.go: `wicket completion bash|zsh|fish`
	doctorCommand,        // doctor.go: `wicket doctor` checks a project and names each fix
}

// run builds the app with the given streams and runs args. It never calls
// os.Exit; the exit code is its result.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := newApp(stdin, stdout, stderr)
	err := app.RunContext(ctx, args)
	return exitCode(err, stderr)
}

func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:    "wicket",
		Usage:   "an agent surface for systematic trading",
		Version: buildVersion(),
		Description: "wicket serves an MCP surface (wicket mcp) through which an AI agent authors and " +
			"researches Starlark strategies and trades against a wicket node through a preview gate; " +
			"every call is traced for review (wicket trace).",
		Reader:    stdin,
		Writer:    stdout,
		ErrWriter: stderr,
		Flags: []cli.Flag{
			&cli.StringFlag{
				Name:  "project",
				Usage: "project directory (default: $" + project.EnvProject + ", then the nearest ancestor holding wicket.toml)",
			},
		},
		HideHelpCommand:      true,
		EnableBashCompletion: false,
		ExitErrHandler:       func(*cli.Context, error) {},
	}
	for _, mk := range commands {
		app.Commands = append(app.Commands, mk())
	}
	sort.Slice(app.Commands, func(i, j int) bool { return app.Commands[i].Name < app.Commands[j].Name })
	addHelpExamples(app.Commands) // help_examples.go
	app.OnUsageError = onUsageError
	app.Action = groupAction
	for _, c := range app.Commands {
		prepare(c)
	}
	return app
}

// prepare makes every command report flag errors as usage errors and every
// group report an unknown subcommand by name.
func prepare(c *cli.Command) {
	c.OnUsageError = onUsageError
	c.HideHelpCommand = true
	if len(c.Subcommands) > 0 && c.Action == nil {
		c.Action = groupAction
	}
	for _, s := range c.Subcommands {
		prepare(s)
	}
}

func onUsageError(_ *cli.Context, err error, _ bool) error {
	return usageError{fmt.Errorf("%w (see --help)", err)}
}

// groupAction runs for a command that has subcommands but was given none, or
// an unknown one.
func groupAction(c *cli.Context) error {
	subs, name := c.App.Commands, "wicket"
	if c.Command != nil && c.Command.Name != "" && c.Command.Name != c.App.Name {
		subs, name = c.Command.Subcommands, "wicket "+c.Command.Name
	}
	var valid []string
	for _, s := range subs {
		if !s.Hidden {
			valid = append(valid, s.Name)
		}
	}
	if c.Args().Present() {
		if name == "wicket" {
			return usagef("unknown command %q; valid: %s", c.Args().First(), strings.Join(valid, ", "))
		}
		return usagef("%s: unknown command %q; valid: %s", name, c.Args().First(), strings.Join(valid, ", "))
	}
	if name == "wicket" {
		return cli.ShowAppHelp(c)
	}
	return usagef("%s needs a subcommand: %s (see --help)", name, strings.Join(valid, ", "))
}
