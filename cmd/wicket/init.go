package main

import (
	"crypto/rand"
	"fmt"

	"github.com/urfave/cli/v2"

	"wicket/internal/project"
)

func initCommand() *cli.Command {
	return &cli.Command{
		Name:      "init",
		Usage:     "create a project: wicket.toml, strategies/, indicators/, settings/ with fresh node keys",
		ArgsUsage: "[DIR]",
		Description: "Creates a wicket project in DIR (default: the current directory). It refuses to " +
			"overwrite an existing wicket.toml. settings/secrets.env is written with mode 0600 and new random " +
			"observe and control keys, a data-service token and the research ledger's key.",
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return usagef("init takes at most one DIR, got %d arguments", c.NArg())
			}
			dir := c.Args().First()
			if dir == "" {
				dir = "."
			}
			p, err := project.Init(dir, rand.Reader)
			if err != nil {
				return err
			}
			w := c.App.Writer
			fmt.Fprintf(w, "created wicket project in %s\n", p.Root)
			fmt.Fprintf(w, "  wicket.toml            node address, venues, guardrail limits, research defaults\n")
			fmt.Fprintf(w, "  strategies/            your strategies (wicket strategy new NAME --from TEMPLATE)\n")
			fmt.Fprintf(w, "  indicators/            user indicators\n")
			fmt.Fprintf(w, "  settings/secrets.env   node keys and the research ledger key (mode 0600; never commit it)\n")
			fmt.Fprintf(w, "next: wicket data seed-demo, then wicket node serve\n")
			return nil
		},
	}
}
