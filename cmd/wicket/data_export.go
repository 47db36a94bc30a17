package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"wicket/strategy/history"
)

func dataExportCommand() *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write a series as wicket CSV (time,open,high,low,close,volume) to stdout or a file, prices on the series' tick; `wicket data import` reads it back to the same bars",
		ArgsUsage: "SYMBOL@GRANULARITY [--from T] [--to T] [--format csv] [-o FILE]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "from", Usage: "first bar's open time (RFC3339, date or unix seconds)"},
			&cli.StringFlag{Name: "to", Usage: "last bar, a `DATE` (through that day) or a time (its open time, inclusive)"},
			&cli.StringFlag{Name: "format", Value: "csv", Usage: "csv (wicket's own; the only one)"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to this file (refuses to overwrite one) instead of stdout"},
		},
		Action: func(c *cli.Context) error {
			args, err := trailingFlags(c)
			if err != nil {
				return err
			}
			if len(args) != 1 {
				return usagef("data export needs exactly one series, e.g. wicket data export BTC-USD@1h -o btc.csv")
			}
			o := dataExportOptions{project: c.String("project"), series: args[0], format: c.String("format"), from: c.String("from"), to: c.String("to"), output: c.String("output")}
			return runDataExport(c.Context, o, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// dataExportOptions is what wicket data export works with, filled from its flags.
type dataExportOptions struct {
	project string // the --project flag
	series  string
	format  string
	from    string // the --from text
	to      string // the --to text
	output  string // the file to write; empty: stdout
}

// runDataExport writes one series as wicket CSV to stdout or to o.output.
func runDataExport(ctx context.Context, o dataExportOptions, stdout, stderr io.Writer) error {
	series := o.series
	if _, _, err := history.CheckSeries(series); err != nil {
		return usageError{err}
	}
	if f := o.format; f != "csv" {
		return usagef("--format %q: data export writes csv (wicket's own format) only", f)
	}
	from, err := timeFlag("from", o.from)
	if err != nil {
		return err
	}
	to, err := toDayEnd("to", o.to)
	if err != nil {
		return err
	}
	p, _, err := openProjectAt(o.project)
	if err != nil {
		return err
	}
	store, err := history.OpenReadOnly(p.HistoryPath())
	if err != nil {
		return err
	}
	defer store.Close()
	bars, err := store.Load(series, from, to)
	if err != nil {
		return fmt.Errorf("data export: %w", err)
	}
	bars = onTick(bars)
	out := o.output
	if out == "" {
		return history.WriteCSV(stdout, bars)
	}
	// Write beside the target and rename, so a failed export leaves
	// no half file; never overwrite an existing one.
	if _, err := os.Lstat(out); err == nil {
		return fmt.Errorf("data export: %s exists; remove it or choose another -o", out)
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), ".export-*.csv")
	if err != nil {
		return fmt.Errorf("data export: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := history.WriteCSV(tmp, bars); err != nil {
		tmp.Close()
		return fmt.Errorf("data export: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("data export: %w", err)
	}
	if err := os.Link(tmp.Name(), out); err != nil {
		return fmt.Errorf("data export: %w", err)
	}
	fmt.Fprintf(stderr, "exported %d bars of %s (%s to %s) to %s\n", bars.Len(), series,
		unixRFC3339(bars.Time[0]), unixRFC3339(bars.Time[bars.Len()-1]), out)
	return nil
}
