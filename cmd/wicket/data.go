package main

import (
	"context"
	"fmt"
	"io"
	"strings"
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
	dataFetchCommand,
	dataExportCommand,
	dataRecordCommand,
	dataServeCommand,
}

func dataCommand() *cli.Command {
	c := &cli.Command{
		Name:  "data",
		Usage: "the bar history store: seed demo series, fetch bars from providers, import and export CSV bars, record a live tape, list and delete series, serve the research API",
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
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "machine-readable output"}},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usagef("data seed-demo takes no arguments, got %q", c.Args().First())
			}
			o := dataSeedDemoOptions{project: c.String("project"), json: c.Bool("json")}
			return runDataSeedDemo(c.Context, o, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// dataSeedDemoOptions is what wicket data seed-demo works with, filled from its flags.
type dataSeedDemoOptions struct {
	project string // the --project flag
	json    bool
}

// seededJSON is one series in `wicket data seed-demo --json`.
type seededJSON struct {
	Series  string `json:"series"`
	Bars    int    `json:"bars"`
	Written bool   `json:"written"`
	Note    string `json:"note,omitempty"` // why it was skipped
}

// runDataSeedDemo writes the demo series into the project's history store.
func runDataSeedDemo(ctx context.Context, o dataSeedDemoOptions, stdout, stderr io.Writer) error {
	p, _, err := openProjectAt(o.project)
	if err != nil {
		return err
	}
	store, err := history.Open(p.HistoryPath())
	if err != nil {
		return err
	}
	defer store.Close()
	results, err := history.SeedDemo(ctx, store)
	if err != nil {
		return fmt.Errorf("data seed-demo: %w", err)
	}
	if o.json {
		out := make([]seededJSON, len(results))
		for i, r := range results {
			out[i] = seededJSON{Series: r.Series, Bars: r.Bars, Written: !r.Skipped, Note: r.Note}
		}
		return writeJSON(stdout, out)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
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
	fmt.Fprintf(stderr, "demo history (ending %s) is in %s; try `wicket data list`\n",
		history.DemoEnd.Format(time.DateOnly), p.HistoryPath())
	return nil
}

func dataImportCommand() *cli.Command {
	var formats strings.Builder
	for _, f := range history.Formats {
		fmt.Fprintf(&formats, "\n  %-12s %s", f.Format, f.Shape)
	}
	return &cli.Command{
		Name:      "import",
		Usage:     "import bars from a CSV file (wicket, Yahoo, Binance, TradingView or Alpaca layout) as one series; a file with any bad row imports nothing",
		ArgsUsage: "FILE.csv --series SYMBOL@GRANULARITY [--format auto|wicket|yahoo|binance|tradingview|alpaca] [--tz ZONE] [--adjusted] [--max-size 2GiB]",
		Description: "--format auto (the default) recognises the layout by its header, or a Binance kline dump by its " +
			"headerless 12-column shape, and says which it chose. The layouts:" + formats.String() + "\n\n" +
			"A UTF-8 BOM, CRLF line endings, quoted fields and blank lines are accepted. Times without a zone are read in " +
			"--tz (default UTC); a bare date is that calendar day at 00:00 UTC. Every bar must sit on the series' " +
			"granularity grid (a 1h bar opens on the hour, a 1d bar at 00:00 UTC); gaps are allowed and reported. " +
			"Unsorted, duplicate, off-grid, non-finite or inconsistent rows are refused with their row numbers, and " +
			"then nothing is imported. FILE must be a regular file (a symlink counts as what it leads to; a FIFO or a " +
			"device such as /dev/zero is refused at once) of at most --max-size.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "series", Usage: "the series to write, e.g. `BTC-USD@1h`"},
			&cli.BoolFlag{Name: "replace", Usage: "overwrite the series if it already holds bars"},
			&cli.StringFlag{Name: "format", Value: "auto", Usage: "the file's layout: " + strings.Join(history.FormatNames(), ", ")},
			&cli.StringFlag{Name: "tz", Value: "UTC", Usage: "IANA zone of times written without one, e.g. America/New_York"},
			&cli.BoolFlag{Name: "adjusted", Usage: "Yahoo files: scale open, high, low and close by Adj Close / Close"},
			&cli.StringFlag{Name: "max-size", Value: sizeFlag(history.DefaultMaxImportBytes), Usage: "the largest FILE read: bytes, or with KiB/MiB/GiB (at most " + sizeText(maxImportCeiling) + ")"},
			&cli.BoolFlag{Name: "json", Usage: "machine-readable output"},
		},
		Action: func(c *cli.Context) error {
			args, err := trailingFlags(c)
			if err != nil {
				return err
			}
			if len(args) != 1 {
				return usagef("data import needs exactly one FILE.csv, got %d arguments (usage: wicket data import FILE.csv --series SYMBOL@1h)", len(args))
			}
			o := dataImportOptions{project: c.String("project"), file: args[0], series: c.String("series"), format: c.String("format"), tz: c.String("tz"), maxSize: c.String("max-size"), adjusted: c.Bool("adjusted"), replace: c.Bool("replace"), json: c.Bool("json")}
			return runDataImport(c.Context, o, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// dataImportOptions is what wicket data import works with, filled from its flags.
type dataImportOptions struct {
	project  string // the --project flag
	file     string // the CSV file
	series   string
	format   string
	tz       string // the zone of times written without one
	maxSize  string // the --max-size text
	adjusted bool
	replace  bool
	json     bool
}

// importedJSON is the answer of `wicket data import --json`.
type importedJSON struct {
	Series   string   `json:"series"`
	Bars     int      `json:"bars"`
	First    string   `json:"first"`
	Last     string   `json:"last"`
	Format   string   `json:"format"`
	Detected bool     `json:"detected"`            // chosen by --format auto
	TimeUnit string   `json:"time_unit,omitempty"` // Binance dumps: ms or µs
	NoVolume bool     `json:"no_volume,omitempty"` // volume stored as 0
	Ignored  []string `json:"ignored_columns,omitempty"`
	Gaps     int      `json:"gaps"`
	// LargestGap is the largest hole (a Go duration) and where it starts.
	LargestGap   string `json:"largest_gap,omitempty"`
	LargestGapAt string `json:"largest_gap_at,omitempty"`
}

// runDataImport checks the flags, reads o.file and writes its bars as one series.
func runDataImport(ctx context.Context, o dataImportOptions, stdout, stderr io.Writer) error {
	series := o.series
	if series == "" {
		return usagef("data import needs --series SYMBOL@GRANULARITY, e.g. --series BTC-USD@1h (granularity one of 1m 5m 15m 1h 4h 1d)")
	}
	_, g, err := history.CheckSeries(series)
	if err != nil {
		return usageError{fmt.Errorf("--series: %w", err)}
	}
	format, err := history.ParseFormat(o.format)
	if err != nil {
		return usageError{fmt.Errorf("--format: %w", err)}
	}
	tz, err := time.LoadLocation(o.tz)
	if err != nil || o.tz == "" || strings.EqualFold(o.tz, "local") {
		return usagef("--tz %q is not an IANA time zone such as UTC, America/New_York or Europe/London", o.tz)
	}
	maxSize, err := parseSizeUpTo(o.maxSize, maxImportCeiling)
	if err != nil {
		return usageError{fmt.Errorf("--max-size: %w", err)}
	}
	p, _, err := openProjectAt(o.project)
	if err != nil {
		return err
	}
	file := o.file
	f, err := history.ImportFile(file, maxSize)
	if err != nil {
		return fmt.Errorf("data import: %w", err)
	}
	defer f.Close()
	bars, rep, err := history.Import(f, history.ImportOptions{Format: format, TZ: tz, Adjusted: o.adjusted, Granularity: g})
	if err != nil {
		return fmt.Errorf("data import %s: %w", file, err)
	}
	store, err := history.Open(p.HistoryPath())
	if err != nil {
		return err
	}
	defer store.Close()
	if err := store.Write(ctx, series, bars, history.WriteOptions{Replace: o.replace, Source: history.SourceImport}); err != nil {
		return fmt.Errorf("data import %s: %w", file, err)
	}
	if o.json {
		out := importedJSON{Series: series, Bars: bars.Len(), First: unixRFC3339(bars.Time[0]), Last: unixRFC3339(bars.Time[bars.Len()-1]),
			Format: string(rep.Format), Detected: rep.Detected, TimeUnit: rep.TimeUnit, NoVolume: rep.NoVolume, Ignored: rep.Ignored, Gaps: rep.Gaps.Count}
		if rep.Gaps.Count > 0 {
			out.LargestGap, out.LargestGapAt = rep.Gaps.Largest.String(), rep.Gaps.At.UTC().Format(time.RFC3339)
		}
		return writeJSON(stdout, out)
	}
	fmt.Fprintf(stdout, "imported %d bars into %s (%s to %s) from %s CSV%s; %s\n", bars.Len(), series,
		unixRFC3339(bars.Time[0]), unixRFC3339(bars.Time[bars.Len()-1]), rep.Format, importNotes(rep), rep.Gaps)
	return nil
}

// maxImportCeiling is the largest --max-size of data import.
const maxImportCeiling = 64 << 30

// importNotes says how a file was read, beyond its bars.
func importNotes(r history.ImportReport) string {
	var notes []string
	if r.Detected {
		notes = append(notes, "detected by its header")
	}
	if r.TimeUnit != "" {
		notes = append(notes, "open times in "+r.TimeUnit)
	}
	if r.NoVolume {
		notes = append(notes, "no volume column, volume stored as 0")
	}
	if len(r.Ignored) > 0 {
		notes = append(notes, "ignored columns: "+strings.Join(r.Ignored, ", "))
	}
	if len(notes) == 0 {
		return ""
	}
	return " (" + strings.Join(notes, "; ") + ")"
}

func unixRFC3339(t int64) string { return time.Unix(t, 0).UTC().Format(time.RFC3339) }

// seriesJSON is one series in `wicket data list --json`.
type seriesJSON struct {
	Series      string `json:"series"`
	Symbol      string `json:"symbol"`
	Granularity string `json:"granularity"`
	Source      string `json:"source"`
	// ProviderSymbol and FetchedAt: for a series a provider filled.
	ProviderSymbol string `json:"provider_symbol,omitempty"`
	FetchedAt      string `json:"fetched_at,omitempty"`
	Bars           int    `json:"bars"`
	First          string `json:"first"`
	Last           string `json:"last"`
}

func dataListCommand() *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "list the stored series with their source (demo, import, or provider:SYMBOL for fetched bars), bar count and first and last bar",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "machine-readable output"}},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usagef("data list takes no arguments, got %q", c.Args().First())
			}
			o := dataListOptions{project: c.String("project"), json: c.Bool("json")}
			return runDataList(c.Context, o, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// dataListOptions is what wicket data list works with, filled from its flags.
type dataListOptions struct {
	project string // the --project flag
	json    bool
}

// runDataList lists the stored series.
func runDataList(ctx context.Context, o dataListOptions, stdout, stderr io.Writer) error {
	p, _, err := openProjectAt(o.project)
	if err != nil {
		return err
	}
	var infos []history.SeriesInfo
	store, err := history.OpenReadOnly(p.HistoryPath())
	switch {
	case history.IsNotFound(err):
		// No store yet: an empty list, and the hint below.
	case err != nil:
		return err
	default:
		defer store.Close()
		if infos, err = store.List(); err != nil {
			return err
		}
	}
	if o.json {
		out := make([]seriesJSON, len(infos))
		for i, s := range infos {
			out[i] = seriesJSON{Series: s.Name, Symbol: s.Symbol, Granularity: string(s.Granularity), Source: s.Source,
				ProviderSymbol: s.ProviderSymbol, Bars: s.Bars, First: s.First.Format(time.RFC3339), Last: s.Last.Format(time.RFC3339)}
			if !s.FetchedAt.IsZero() {
				out[i].FetchedAt = s.FetchedAt.Format(time.RFC3339)
			}
		}
		return writeJSON(stdout, out)
	}
	if len(infos) == 0 {
		fmt.Fprintln(stderr, "no series yet; run `wicket data seed-demo` for demo data or `wicket data import FILE.csv --series SYMBOL@1h`")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SERIES\tSOURCE\tBARS\tFIRST\tLAST")
	for _, s := range infos {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", s.Name, sourceLabel(s), s.Bars, s.First.Format(time.RFC3339), s.Last.Format(time.RFC3339))
	}
	return tw.Flush()
}

// sourceLabel is a series' source as `data list` shows it: demo, import, or
// provider:SYMBOL (binance:BTCUSDT) for fetched bars.
func sourceLabel(s history.SeriesInfo) string {
	if s.ProviderSymbol != "" {
		return s.Source + ":" + s.ProviderSymbol
	}
	return s.Source
}

func dataDeleteCommand() *cli.Command {
	return &cli.Command{
		Name:      "delete",
		Usage:     "delete a series and its bars (asks first at a terminal; --yes from a pipe or script)",
		ArgsUsage: "SYMBOL@GRANULARITY [--yes]",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "yes", Usage: "delete without asking (required when stdin or stdout is not a terminal)"},
			&cli.BoolFlag{Name: "json", Usage: "machine-readable output"},
		},
		Action: func(c *cli.Context) error {
			args, err := trailingFlags(c)
			if err != nil {
				return err
			}
			if len(args) != 1 {
				return usagef("data delete needs exactly one series, e.g. wicket data delete BTC-USD@1h")
			}
			o := dataDeleteOptions{project: c.String("project"), series: args[0], yes: c.Bool("yes"), json: c.Bool("json"), stdin: c.App.Reader}
			return runDataDelete(c.Context, o, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// dataDeleteOptions is what wicket data delete works with, filled from its arguments.
type dataDeleteOptions struct {
	project string // the --project flag
	series  string
	yes     bool      // delete without asking
	json    bool      //
	stdin   io.Reader // where the answer is read at a terminal
}

// dataDeleted is the answer of wicket data delete --json.
type dataDeleted struct {
	Series  string `json:"series"`
	Bars    int    `json:"bars"`
	Deleted bool   `json:"deleted"`
}

// runDataDelete deletes one series and its bars: with o.yes, or once the
// person at the terminal answers y; from a pipe without --yes it deletes
// nothing and says how.
func runDataDelete(ctx context.Context, o dataDeleteOptions, stdout, stderr io.Writer) error {
	if _, _, err := history.CheckSeries(o.series); err != nil {
		return usageError{err}
	}
	p, _, err := openProjectAt(o.project)
	if err != nil {
		return err
	}
	store, err := history.Open(p.HistoryPath())
	if err != nil {
		return err
	}
	defer store.Close()
	info, err := store.Info(o.series)
	if err != nil {
		return err
	}
	done := func(deleted bool) error {
		if o.json {
			return writeJSON(stdout, dataDeleted{Series: o.series, Bars: info.Bars, Deleted: deleted})
		}
		if deleted {
			fmt.Fprintf(stdout, "deleted %s (%d bars)\n", o.series, info.Bars)
		} else {
			fmt.Fprintf(stdout, "nothing was deleted\n")
		}
		return nil
	}
	if !o.yes {
		if !atTerminal(o.stdin, stdout) {
			return usagef("data delete %s would delete %d bars: run it again with --yes to delete them (no terminal to ask at)", o.series, info.Bars)
		}
		prompt := stdout
		if o.json {
			prompt = stderr // stdout stays one JSON document
		}
		if !askYes(o.stdin, prompt, fmt.Sprintf("delete %d bars of %s?", info.Bars, o.series)) {
			return done(false)
		}
	}
	if err := store.Delete(ctx, o.series); err != nil {
		return err
	}
	return done(true)
}
