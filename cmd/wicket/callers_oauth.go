package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"wicket/agent/authserver"
)

// callersGrantsCommand lists the OAuth grants of the built-in issuer.
func callersGrantsCommand() *cli.Command {
	return &cli.Command{
		Name:  "grants",
		Usage: "list the OAuth grants of the built-in issuer ([agent.oauth] issuer = \"builtin\"): caller name, client, scope, state; never a token",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "machine-readable output"}},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("callers grants takes no arguments, got %q", c.Args().First())
			}
			return runCallersGrants(c.String("project"), c.Bool("json"), time.Now(), c.App.Writer, c.App.ErrWriter)
		},
	}
}

// callersRevokeCommand ends an OAuth grant at once.
func callersRevokeCommand() *cli.Command {
	return &cli.Command{
		Name:      "revoke",
		Usage:     "revoke an OAuth grant of the built-in issuer at once: its refresh token stops working and its access tokens are refused at the next request",
		ArgsUsage: "NAME",
		Description: "NAME is the grant's caller name as `wicket callers grants` and the trace show it (e.g. claude-ab3d9f). " +
			"A running `wicket mcp --http` sees the revocation at the next request; no restart is needed. " +
			"A bearer caller (wicket callers add) is removed with `wicket callers remove` instead.",
		Action: func(c *cli.Context) error {
			name, err := oneName(c, "revoke")
			if err != nil {
				return err
			}
			return runCallersRevoke(c.String("project"), name, time.Now(), c.App.ErrWriter)
		},
	}
}

func runCallersGrants(projectFlag string, asJSON bool, now time.Time, stdout, stderr io.Writer) error {
	p, _, err := openProjectAt(projectFlag)
	if err != nil {
		return err
	}
	list, err := authserver.OpenStore(p.SettingsDir()).Grants()
	if err != nil {
		return err
	}
	state := func(g authserver.Grant) string {
		switch {
		case !g.Revoked.IsZero():
			return "revoked " + g.Revoked.UTC().Format(time.RFC3339) + " (" + g.RevokedWhy + ")"
		case !g.Live(now):
			return "expired"
		}
		return "live"
	}
	if asJSON {
		type row struct {
			Name     string    `json:"name"`
			Client   string    `json:"client"`
			ClientID string    `json:"client_id"`
			Scope    string    `json:"scope"`
			Created  time.Time `json:"created"`
			LastUsed time.Time `json:"last_used"`
			State    string    `json:"state"`
		}
		rows := []row{}
		for _, g := range list {
			rows = append(rows, row{g.Name, g.ClientName, g.ClientID, g.Scope, g.Created, g.LastUsed, state(g)})
		}
		return writeJSON(stdout, rows)
	}
	if len(list) == 0 {
		fmt.Fprintln(stderr, "no OAuth grants; a client gets one when the operator grants its request (wicket approve --oauth)")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tCLIENT\tSCOPE\tCREATED\tLAST-USED\tSTATE")
	for _, g := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", g.Name, g.ClientName, g.Scope, g.Created.UTC().Format(time.RFC3339),
			g.LastUsed.UTC().Format(time.RFC3339), state(g))
	}
	return tw.Flush()
}

func runCallersRevoke(projectFlag, name string, now time.Time, stderr io.Writer) error {
	p, _, err := openProjectAt(projectFlag)
	if err != nil {
		return err
	}
	g, err := authserver.OpenStore(p.SettingsDir()).Revoke(now, name, "revoked by the operator")
	if err != nil {
		return usagef("%v", err)
	}
	fmt.Fprintf(stderr, "grant %s (%s, %s) revoked: its refresh token is refused and its access tokens stop working at the next request\n",
		g.Name, g.ClientName, g.Scope)
	return nil
}
