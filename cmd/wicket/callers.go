package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"wicket/agent"
	"wicket/agent/front"
	"wicket/internal/project"
)

// callersCommand manages the bearer-token callers of `wicket mcp --http`.
func callersCommand() *cli.Command {
	return &cli.Command{
		Name:  "callers",
		Usage: "manage who may call `wicket mcp --http`: named callers, each with a bearer token and its own profile",
		Description: "A caller is one agent or person with a bearer token and a profile (full, read-only, offline) minus any " +
			"--deny-tool. Only the token's SHA-256 is kept, in settings/" + front.CallersFile + " (mode 0600); the token is printed " +
			"once by `add`. A running server reads the callers when it starts: restart it after a change.",
		Subcommands: []*cli.Command{
			{
				Name:      "add",
				Usage:     "add a caller and print its bearer token (once)",
				ArgsUsage: "NAME",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "profile", Usage: "what the caller is offered: " + strings.Join(agent.Profiles, ", ")},
					&cli.StringSliceFlag{Name: "deny-tool", Usage: "refuse this tool to the caller although the profile allows it (repeatable)"},
					&cli.BoolFlag{Name: "json", Usage: "print the caller with its token (once) as JSON"},
				},
				Action: callersAdd,
			},
			{
				Name:   "list",
				Usage:  "list the callers (names, profiles, deny lists; never tokens)",
				Flags:  []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "machine-readable output"}},
				Action: callersList,
			},
			{
				Name:      "remove",
				Usage:     "remove a caller (its token stops working when the server restarts)",
				ArgsUsage: "NAME",
				Action:    callersRemove,
			},
			callersGrantsCommand(), // callers_oauth.go: the built-in issuer's grants
			callersRevokeCommand(),
		},
	}
}

func callersPath(p project.Project) string { return filepath.Join(p.SettingsDir(), front.CallersFile) }

// openCallers loads the project's callers.
func openCallers(projectFlag string) (project.Project, *front.Callers, error) {
	p, _, err := openProjectAt(projectFlag)
	if err != nil {
		return p, nil, err
	}
	cs, err := front.LoadCallers(callersPath(p))
	return p, cs, err
}

func oneName(c *cli.Context, verb string) (string, error) {
	if c.NArg() != 1 {
		return "", usagef("callers %s takes one NAME, got %d arguments", verb, c.NArg())
	}
	return c.Args().First(), nil
}

// addArgs reads `callers add NAME --profile P [--deny-tool T]... [--json]`
// with the flags before or after NAME (urfave/cli stops parsing at NAME).
func addArgs(c *cli.Context) (name, profile string, deny []string, asJSON bool, err error) {
	profile, deny, asJSON = c.String("profile"), c.StringSlice("deny-tool"), c.Bool("json")
	var names []string
	rest := c.Args().Slice()
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		flag, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && flag == "json" {
			if asJSON, err = strconv.ParseBool(cmp.Or(val, "true")); err != nil {
				return "", "", nil, false, usagef("callers add: %s: give --json, or --json=true or false", a)
			}
			continue
		}
		if !strings.HasPrefix(a, "-") || (flag != "profile" && flag != "deny-tool") {
			if strings.HasPrefix(a, "-") {
				return "", "", nil, false, usagef("callers add: unknown flag %s; valid: --profile, --deny-tool, --json", a)
			}
			names = append(names, a)
			continue
		}
		if !hasVal {
			if i+1 == len(rest) {
				return "", "", nil, false, usagef("callers add: %s needs a value", a)
			}
			i++
			val = rest[i]
		}
		if flag == "profile" {
			profile = val
		} else {
			deny = append(deny, val)
		}
	}
	if len(names) != 1 {
		return "", "", nil, false, usagef("callers add takes one NAME, got %d: usage: wicket callers add NAME --profile P [--deny-tool T]...", len(names))
	}
	if profile == "" {
		return "", "", nil, false, usagef("callers add %s: --profile is required (%s)", names[0], strings.Join(agent.Profiles, ", "))
	}
	return names[0], profile, deny, asJSON, nil
}

// callersOptions is what the callers subcommands work with, filled from
// their arguments and flags.
type callersOptions struct {
	project string // the --project flag
	name    string // add, remove: the caller
	profile string // add
	deny    []string
	json    bool             // add, list
	now     func() time.Time // add: the caller's added time
}

func callersAdd(c *cli.Context) error {
	name, profile, deny, asJSON, err := addArgs(c)
	if err != nil {
		return err
	}
	o := callersOptions{project: c.String("project"), name: name, profile: profile, deny: deny, json: asJSON, now: time.Now}
	return runCallersAdd(c.Context, o, c.App.Writer, c.App.ErrWriter)
}

// runCallersAdd adds a caller and prints its token, once.
func runCallersAdd(_ context.Context, o callersOptions, stdout, stderr io.Writer) error {
	name, profile := o.name, o.profile
	p, cs, err := openCallers(o.project)
	if err != nil {
		return err
	}
	added := o.now()
	token, err := cs.Add(name, profile, o.deny, added)
	if err != nil {
		var ue *agent.UsageError
		if errors.As(err, &ue) {
			return usagef("%v", err)
		}
		return err
	}
	if err := cs.Save(callersPath(p)); err != nil {
		return fmt.Errorf("save callers: %w", err)
	}
	if o.json {
		return writeJSON(stdout, callerAddedJSON{callerJSON: newCallerJSON(name, profile, o.deny, added), Token: token})
	}
	fmt.Fprintln(stdout, token)
	fmt.Fprintf(stderr, "caller %s added with profile %s. The line above is its bearer token, shown this once: "+
		"give it to the caller (Authorization: Bearer <token>); `wicket mcp-config --http ADDR` prints a client block. "+
		"Restart a running `wicket mcp --http` to admit it.\n", name, profile)
	return nil
}

// callerJSON is one caller in `wicket callers list --json` and `add --json`.
type callerJSON struct {
	Name    string    `json:"name"`
	Profile string    `json:"profile"`
	Deny    []string  `json:"deny_tool"`
	Added   time.Time `json:"added"`
}

func newCallerJSON(name, profile string, deny []string, added time.Time) callerJSON {
	if deny == nil {
		deny = []string{}
	}
	return callerJSON{Name: name, Profile: profile, Deny: deny, Added: added}
}

// callerAddedJSON is `wicket callers add --json`: the caller and its
// bearer token, printed this once.
type callerAddedJSON struct {
	callerJSON
	Token string `json:"token"`
}

func callersList(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("callers list takes no arguments, got %q", c.Args().First())
	}
	return runCallersList(c.Context, callersOptions{project: c.String("project"), json: c.Bool("json")}, c.App.Writer, c.App.ErrWriter)
}

// runCallersList lists the callers, never a token.
func runCallersList(_ context.Context, o callersOptions, stdout, stderr io.Writer) error {
	_, cs, err := openCallers(o.project)
	if err != nil {
		return err
	}
	list := cs.List()
	if o.json {
		rows := []callerJSON{}
		for _, x := range list {
			rows = append(rows, newCallerJSON(x.Name, x.Profile, x.Deny, x.Added))
		}
		return writeJSON(stdout, rows)
	}
	if len(list) == 0 {
		fmt.Fprintln(stderr, "no callers; add one with `wicket callers add NAME --profile P`")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPROFILE\tDENY-TOOL\tADDED")
	for _, x := range list {
		deny := strings.Join(x.Deny, ",")
		if deny == "" {
			deny = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", x.Name, x.Profile, deny, x.Added.UTC().Format(time.RFC3339))
	}
	return tw.Flush()
}

func callersRemove(c *cli.Context) error {
	name, err := oneName(c, "remove")
	if err != nil {
		return err
	}
	return runCallersRemove(c.Context, callersOptions{project: c.String("project"), name: name}, c.App.Writer, c.App.ErrWriter)
}

// runCallersRemove removes a caller.
func runCallersRemove(_ context.Context, o callersOptions, _, stderr io.Writer) error {
	name := o.name
	p, cs, err := openCallers(o.project)
	if err != nil {
		return err
	}
	if err := cs.Remove(name); err != nil {
		return usagef("%v", err)
	}
	if err := cs.Save(callersPath(p)); err != nil {
		return fmt.Errorf("save callers: %w", err)
	}
	fmt.Fprintf(stderr, "caller %s removed; restart a running `wicket mcp --http` for it to take effect\n", name)
	return nil
}
