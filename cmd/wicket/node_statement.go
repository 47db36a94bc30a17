package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"wicket/node"
	"wicket/node/server"
)

// exitMismatch is wicket node statement's exit code when the venue's
// history and the node's disagree, so a script notices.
const exitMismatch = 3

func nodeStatementCommand() *cli.Command {
	return &cli.Command{
		Name:  "statement",
		Usage: "reconcile one UTC day's fills, fees and funding of the node with each venue's own trade history, naming every mismatch",
		Description: "Compares, order by order, the node's fills of the day with the venue's own record of it: Binance's account trade list " +
			"(myTrades), Alpaca's account activities (fills and fees). Every difference is named with both figures: a fill missing on " +
			"either side, a quantity, average price or fee that differs, fees charged apart from trades. A paper venue has no record " +
			"but the node's own, and says so. The node also runs it for each real venue after each UTC day and alerts on a mismatch. " +
			"Exits 3 when there is a mismatch.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "day", Usage: "the UTC day, `YYYY-MM-DD` (default: yesterday)"},
			&cli.StringFlag{Name: "venue", Usage: "one venue (default: every venue)"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
			nodeAddrFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("node statement takes no arguments, got %q; give the day with --day YYYY-MM-DD", c.Args().First())
			}
			day := c.String("day")
			if day == "" {
				day = time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)
			}
			if _, err := server.ParseDay(day); err != nil {
				return usageError{fmt.Errorf("--day: %w", err)}
			}
			client, _, err := armClientAt(c.String("project"), c.String("addr"))
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(c.Context, nodeCallTimeout)
			defer cancel()
			sts, err := client.Statement(ctx, day, c.String("venue"))
			if err != nil {
				return err
			}
			return printStatements(c.App.Writer, sts, c.Bool("json"))
		},
	}
}

// printStatements writes the statements, and fails with exitMismatch
// when any names a mismatch.
func printStatements(w io.Writer, sts []node.Statement, asJSON bool) error {
	mismatches := 0
	for _, st := range sts {
		mismatches += len(st.Mismatches)
	}
	if asJSON {
		if err := writeJSON(w, map[string]any{"statements": sts}); err != nil {
			return err
		}
	} else {
		for _, st := range sts {
			fmt.Fprintf(w, "%s %s (%s): node %d fill(s), fees %s; ", st.Day, st.Venue, st.Kind, st.NodeFills, st.NodeFees)
			if !st.Independent {
				fmt.Fprintf(w, "not compared\n  %s\n", st.Note)
				continue
			}
			fmt.Fprintf(w, "venue %d trade(s), fees %s; funding: %s\n", st.VenueFills, st.VenueFees, st.Funding)
			if st.Note != "" {
				fmt.Fprintf(w, "  note: %s\n", st.Note)
			}
			if len(st.Mismatches) == 0 {
				fmt.Fprintf(w, "  matches the venue's history\n")
			}
			for _, m := range st.Mismatches {
				fmt.Fprintf(w, "  MISMATCH %s: %s (node %s, venue %s)\n", m.What, m.Text, orNone(m.Node), orNone(m.Venue))
			}
		}
	}
	if mismatches > 0 {
		return cli.Exit("", exitMismatch)
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
