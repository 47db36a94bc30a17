package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"wicket/internal/project"
)

func initCommand() *cli.Command {
	return &cli.Command{
		Name:      "init",
		Usage:     "create a project: wicket.toml, strategies/, indicators/, settings/ with fresh node keys and an operator key",
		ArgsUsage: "[DIR]",
		Description: "Creates a wicket project in DIR (default: the current directory). It refuses to " +
			"overwrite an existing wicket.toml. settings/secrets.env is written with mode 0600 and new random " +
			"observe and control keys, a data-service token and the research ledger's key; settings/operator.key (mode 0600) and settings/operator.pub hold a new operator " +
			"key pair, with which `wicket node arm` and `wicket approve` sign (wicket mcp never reads the private key).\n\n" +
			"With --operator-key it only adds the operator key pair to the existing project at DIR (one made before " +
			"there was an operator key); it never replaces one.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "operator-key", Usage: "add an operator key pair to the existing project at DIR (never replaces one)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return usagef("init takes at most one DIR, got %d arguments", c.NArg())
			}
			o := initOptions{dir: c.Args().First(), operatorKey: c.Bool("operator-key")}
			return runInit(c.Context, o, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// initOptions is what wicket init works with, filled from its flags.
type initOptions struct {
	dir         string // the project directory; empty: the current one
	operatorKey bool   // only add an operator key pair to an existing project
}

// runInit creates the project at o.dir, or adds its operator key pair.
func runInit(_ context.Context, o initOptions, stdout, _ io.Writer) error {
	dir := o.dir
	if dir == "" {
		dir = "."
	}
	w := stdout
	if o.operatorKey {
		p, err := project.Find("", "", dir)
		if err != nil {
			return err
		}
		if err := project.InitOperatorKey(p, rand.Reader); err != nil {
			return err
		}
		fmt.Fprintf(w, "made the operator key of %s\n", p.Root)
		fmt.Fprintf(w, "  settings/operator.key  the private key (mode 0600; never commit it, never give it to wicket mcp)\n")
		fmt.Fprintf(w, "  settings/operator.pub  the public key the node and wicket mcp verify with\n")
		fmt.Fprintf(w, "next: add settings/operator.key to .gitignore if it is not there, and restart wicket node serve and wicket mcp\n")
		return nil
	}
	p, err := project.Init(dir, rand.Reader)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "created wicket project in %s\n", p.Root)
	fmt.Fprintf(w, "  wicket.toml            node address, venues, guardrail limits, research defaults\n")
	fmt.Fprintf(w, "  strategies/            your strategies (wicket strategy new NAME --from TEMPLATE)\n")
	fmt.Fprintf(w, "  indicators/            user indicators\n")
	fmt.Fprintf(w, "  settings/secrets.env   node keys and the research ledger key (mode 0600; never commit it)\n")
	fmt.Fprintf(w, "  settings/operator.key  the operator key: arms venues and approves writes (mode 0600; never commit it)\n")
	fmt.Fprintf(w, "next: wicket data seed-demo, then wicket node serve\n")
	return nil
}
