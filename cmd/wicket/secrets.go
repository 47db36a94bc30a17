package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"wicket/internal/project"
)

func secretsCommand() *cli.Command {
	return &cli.Command{
		Name:  "secrets",
		Usage: "show which node keys (and the operator key) this project holds and where they are read from (names only, never values)",
		Subcommands: []*cli.Command{
			{
				Name:  "list",
				Usage: "list key names, whether each is set and where it was found (environment or secrets.env)",
				Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "machine-readable output"}},
				Action: func(c *cli.Context) error {
					o := secretsOptions{project: c.String("project"), json: c.Bool("json")}
					return runSecretsList(c.Context, o, c.App.Writer, c.App.ErrWriter)
				},
			},
			{
				Name:  "path",
				Usage: "print the path of this project's secrets.env",
				Action: func(c *cli.Context) error {
					return runSecretsPath(c.Context, secretsOptions{project: c.String("project")}, c.App.Writer, c.App.ErrWriter)
				},
			},
		},
	}
}

// secretsOptions is what the secrets subcommands work with, filled from
// their flags.
type secretsOptions struct {
	project string // the --project flag
	json    bool
}

// runSecretsList lists the project's key names and where each is read
// from, never a value.
func runSecretsList(_ context.Context, o secretsOptions, stdout, stderr io.Writer) error {
	p, _, err := openProjectAt(o.project)
	if err != nil {
		return err
	}
	s, err := p.Secrets(os.LookupEnv)
	if err != nil {
		return err
	}
	return printSecrets(o, p, s, stdout, stderr)
}

// runSecretsPath prints the path of the project's secrets.env.
func runSecretsPath(_ context.Context, o secretsOptions, stdout, _ io.Writer) error {
	p, _, err := openProjectAt(o.project)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, p.SecretsPath())
	return nil
}

func printSecrets(o secretsOptions, p project.Project, s *project.Secrets, stdout, stderr io.Writer) error {
	keys := s.List()
	warning := ""
	if s.LooseMode() {
		warning = fmt.Sprintf("%s has mode %04o: other users can read it; run chmod 600 %s", s.Path, s.Mode, s.Path)
	}
	// The operator key: whether it is there, never read here.
	op, loose := p.OperatorKeyInfo(os.LookupEnv)
	keys = append(keys, op)
	if loose {
		if warning != "" {
			warning += "; "
		}
		warning += fmt.Sprintf("%s can be read by other users; run chmod 600 %s", p.OperatorKeyPath(), p.OperatorKeyPath())
	}
	if o.json {
		out := struct {
			Path    string            `json:"path"`
			Exists  bool              `json:"exists"`
			Keys    []project.KeyInfo `json:"keys"`
			Warning string            `json:"warning,omitempty"`
		}{s.Path, s.Exists, keys, warning}
		return writeJSON(stdout, out)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tSTATUS\tSOURCE")
	for _, k := range keys {
		status, src := "missing", "-"
		if k.Present {
			status, src = "set", string(k.Source)
			if k.Shadowed && k.Name == project.KeyOperator {
				src += " (overrides settings/operator.key)"
			} else if k.Shadowed {
				src += " (overrides secrets.env)"
			}
		}
		if !k.Known {
			status += " (not used by wicket)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", k.Name, status, src)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if !s.Exists {
		fmt.Fprintf(stderr, "note: %s does not exist; keys come only from the environment\n", s.Path)
	}
	if warning != "" {
		fmt.Fprintln(stderr, "warning: "+warning)
	}
	return nil
}
