package main

import (
	"errors"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"wicket/strategy/history"
)

// dataSubcommands are the subcommands of `wicket data`, one constructor
// each; `data serve` joins this list from its own file.
var dataSubcommands = []func() *cli.Command{
	dataSeedDemoCommand,
	dataImportCommand,
	dataListCommand,
	dataDeleteCommand,
	dataServeCommand,
}

func dataCommand() *cli.Command {
	c := &cli.Command{
		Name:  "data",
		Usage: "the bar history store: seed demo series, import CSV bars, list and delete series, serve the research API",
		Description: "Series are named SYMBOL@GRANULARITY (granularity one of 1m 5m 15m 1h 4h 1d) and live in " +
			"settings/state/history.db. Backtests, sweeps and the node's --replay read them.",
	}
	for _, mk := range dataSubcommands {
		c.Subcommands = append(c.Subcommands, mk())
	}
	return c
}

func dataSeedDemoCommand() *cli.Command {
	return &cli.Command{
		Name:  "seed-demo",
		Usage: "write the deterministic demo series (1h for 2 years, 1d for 10 years) for the demo symbols; re-running rewrites the same bars",
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usagef("data seed-demo takes no arguments, got %q", c.Args().First())
			}
			p, _, err := openProject(c)
			if err != nil {
				return err
			}
			store, err := history.Open(p.HistoryPath())
			if err != nil {
				return err
			}
			defer store.Close()
			results, err := history.SeedDemo(c.Context, store)
			if err != nil {
				return fmt.Errorf("data seed-demo: %w", err)
			}
			tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "SERIES\tBARS\tSTATUS")
			for _, r := range results {
				status := "written"
				if r.Skipped {
					status = "skipped: " + r.Note
				}
				fmt.Fprintf(tw, "%s\t%d\t%s\n", r.Series, r.Bars, status)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintf(c.App.ErrWriter, "demo history (ending %s) is in %s; try `wicket data list`\n",
				history.DemoEnd.Format(time.DateOnly), p.HistoryPath())
			return nil
		},
	}
}

func dataImportCommand() *cli.Command {
	return &cli.Command{
		Name:      "import",
		Usage:     "import bars from a CSV file (header time,open,high,low,close,volume; RFC3339, date or unix-seconds times) as one series; a file with any bad row imports nothing",
		ArgsUsage: "FILE.csv --series SYMBOL@GRANULARITY",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "series", Usage: "the series to write, e.g. `BTC-USD@1h`"},
			&cli.BoolFlag{Name: "replace", Usage: "overwrite the series if it already holds bars"},
		},
		Action: func(c *cli.Context) error {
			args, err := trailingFlags(c)
			if err != nil {
				return err
			}
			if len(args) != 1 {
				return usagef("data import needs exactly one FILE.csv, got %d arguments (usage: wicket data import FILE.csv --series SYMBOL@1h)", len(args))
			}
			series := c.String("series")
			if series == "" {
				return usagef("data import needs --series SYMBOL@GRANULARITY, e.g. --series BTC-USD@1h (granularity one of 1m 5m 15m 1h 4h 1d)")
			}
			if _, _, err := history.CheckSeries(series); err != nil {
				return usageError{fmt.Errorf("--series: %w", err)}
			}
			p, _, err := openProject(c)
			if err != nil {
				return err
			}
			file := args[0]
			f, err := os.Open(file)
			if err != nil {
				return fmt.Errorf("data import: %w", err)
			}
			defer f.Close()
			bars, err := history.ParseCSV(f)
			if err != nil {
				return fmt.Errorf("data import %s: %w", file, err)
			}
			store, err := history.Open(p.HistoryPath())
			if err != nil {
				return err
			}
			defer store.Close()
			if err := store.Write(c.Context, series, bars, history.WriteOptions{Replace: c.Bool("replace"), Source: history.SourceImport}); err != nil {
				return fmt.Errorf("data import %s: %w", file, err)
			}
			fmt.Fprintf(c.App.Writer, "imported %d bars into %s (%s to %s)\n", bars.Len(), series,
				unixRFC3339(bars.Time[0]), unixRFC3339(bars.Time[bars.Len()-1]))
			return nil
		},
	}
}

func unixRFC3339(t int64) string { return time.Unix(t, 0).UTC().Format(time.RFC3339) }

// seriesJSON is one series in `wicket data list --json`.
type seriesJSON struct {
	Series      string `json:"series"`
	Symbol      string `json:"symbol"`
	Granularity string `json:"granularity"`
	Source      string `json:"source"`
	Bars        int    `json:"bars"`
	First       string `json:"first"`
	Last        string `json:"last"`
}

func dataListCommand() *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "list the stored series with their bar count and first and last bar",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "machine-readable output"}},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usagef("data list takes no arguments, got %q", c.Args().First())
			}
			p, _, err := openProject(c)
			if err != nil {
				return err
			}
			var infos []history.SeriesInfo
			store, err := history.OpenReadOnly(p.HistoryPath())
			var he *history.Error
			switch {
			case errors.As(err, &he) && he.Kind == history.NotFound:
				// No store yet: an empty list, and the hint below.
			case err != nil:
				return err
			default:
				defer store.Close()
				if infos, err = store.List(); err != nil {
					return err
				}
			}
			if c.Bool("json") {
				out := make([]seriesJSON, len(infos))
				for i, s := range infos {
					out[i] = seriesJSON{s.Name, s.Symbol, string(s.Granularity), s.Source, s.Bars,
						s.First.Format(time.RFC3339), s.Last.Format(time.RFC3339)}
				}
				return writeJSON(c.App.Writer, out)
			}
			if len(infos) == 0 {
				fmt.Fprintln(c.App.ErrWriter, "no series yet; run `wicket data seed-demo` for demo data or `wicket data import FILE.csv --series SYMBOL@1h`")
				return nil
			}
			tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "SERIES\tSOURCE\tBARS\tFIRST\tLAST")
			for _, s := range infos {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", s.Name, s.Source, s.Bars, s.First.Format(time.RFC3339), s.Last.Format(time.RFC3339))
			}
			return tw.Flush()
		},
	}
}

func dataDeleteCommand() *cli.Command {
	return &cli.Command{
		Name:      "delete",
		Usage:     "delete a series and its bars",
		ArgsUsage: "SYMBOL@GRANULARITY",
		Action: func(c *cli.Context) error {
			series, err := oneArg(c, func(int) error {
				return usagef("data delete needs exactly one series, e.g. wicket data delete BTC-USD@1h")
			})
			if err != nil {
				return err
			}
			if _, _, err := history.CheckSeries(series); err != nil {
				return usageError{err}
			}
			p, _, err := openProject(c)
			if err != nil {
				return err
			}
			store, err := history.Open(p.HistoryPath())
			if err != nil {
				return err
			}
			defer store.Close()
			if err := store.Delete(c.Context, series); err != nil {
				return err
			}
			fmt.Fprintf(c.App.Writer, "deleted %s\n", series)
			return nil
		},
	}
}
