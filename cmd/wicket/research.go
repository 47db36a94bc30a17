package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"wicket/internal/project"
	"wicket/strategy/ledger"
	"wicket/strategy/research"
)

// cliWho is how the CLI's research is recorded in the ledger.
var cliWho = ledger.Who{Surface: ledger.SurfaceCLI}

// openLedger opens (creating) the project's research ledger for a command
// that records research. It never fails the research: a ledger that
// cannot open is reported on stderr and the run goes on unrecorded.
func openLedger(stderr io.Writer, p project.Project, verb string) (research.Recorder, func()) {
	l, closeLedger := openLedgerFile(stderr, p, verb)
	if l == nil {
		return nil, closeLedger
	}
	return l, closeLedger
}

// openLedgerFile is openLedger's *ledger.Ledger, nil when it cannot open.
func openLedgerFile(stderr io.Writer, p project.Project, verb string) (*ledger.Ledger, func()) {
	l, err := ledger.Open(p.ResearchPath(), ledger.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "%s: warning: %v; research is not recorded in the research ledger\n", verb, err)
		return nil, func() {}
	}
	return l, func() { l.Close() }
}

// Ledger list bounds.
const (
	defaultLedgerLimit = 50
	maxLedgerLimit     = 10000
)

func researchCommand() *cli.Command {
	return &cli.Command{
		Name:  "research",
		Usage: "the research ledger: every backtest, sweep combination and walk-forward run, hash-chained",
		Description: "Every backtest, sweep combination and walk-forward run — from the agent (wicket mcp) or the CLI — " +
			"is appended to the project's research ledger, settings/state/research.db: when, who (the MCP session " +
			"and caller, or cli), the strategy's name and source digest, params, series and range, costs, metrics and " +
			"the run id. run_sweep's second deflated Sharpe ratio counts its trials. Rows are hash-chained, so " +
			"`wicket research verify` finds an edited, removed or reordered row.",
		Subcommands: []*cli.Command{
			{
				Name:      "ledger",
				Usage:     "list the trials in the research ledger, newest last",
				ArgsUsage: "[--strategy NAME] [--series SYMBOL@GRANULARITY] [--since 7d] [--json]",
				Description: "Lists the ledger's rows (the newest --limit of those that match): sequence number, time, kind " +
					"(backtest, sweep, walk_forward), strategy and the start of its source digest, series, params, the " +
					"annualised Sharpe ratio, who ran it and the run id. --json prints one JSON object per row.",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "strategy", Usage: "only this strategy `NAME` (any source version)"},
					&cli.StringFlag{Name: "series", Usage: "only this `SERIES`, e.g. BTC-USD@1h"},
					&cli.StringFlag{Name: "kind", Usage: "only this `KIND`: " + strings.Join(ledger.Kinds, ", ")},
					&cli.StringFlag{Name: "run", Usage: "only the rows of this run `ID`"},
					&cli.StringFlag{Name: "since", Usage: "rows at or after `WHEN`: a duration back from now (2h, 7d), RFC3339, or a date"},
					&cli.IntFlag{Name: "limit", Value: defaultLedgerLimit, Usage: fmt.Sprintf("show the newest `N` matching rows (at most %d)", maxLedgerLimit)},
					&cli.BoolFlag{Name: "json", Usage: "print one JSON object per row"},
				},
				Action: researchLedgerAction,
			},
			{
				Name:  "verify",
				Usage: "check the research ledger's hash chain; names the first edited, removed or reordered row",
				Description: "Walks the chain in order and checks every row's sequence number, its link to the row before " +
					"it and its hash. Exits 0 and prints the row count and the tip hash when the chain is intact (record " +
					"the tip: rows cut from the end leave a shorter valid chain, which only a recorded tip reveals); " +
					"exits 1 naming the first bad row otherwise.",
				Flags:  []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the report as JSON"}},
				Action: researchVerifyAction,
			},
		},
	}
}

// existingLedger opens the ledger for reading; a project without one is
// told how it gets one.
func existingLedger(c *cli.Context) (*ledger.Ledger, error) {
	if c.Args().Len() > 0 {
		return nil, usagef("research %s takes no arguments, got %q", c.Command.Name, c.Args().First())
	}
	p, _, err := openProject(c)
	if err != nil {
		return nil, err
	}
	l, err := ledger.OpenExisting(p.ResearchPath(), ledger.Options{})
	if errors.Is(err, ledger.ErrNotFound) {
		return nil, fmt.Errorf("no research ledger in this project yet: backtests, sweeps and walk-forwards (wicket backtest, wicket sweep, the agent's run_* tools) record their trials in settings/state/research.db as they run")
	}
	return l, err
}

func researchLedgerAction(c *cli.Context) error {
	f := ledger.Filter{Strategy: c.String("strategy"), Series: c.String("series"), Kind: c.String("kind"), RunID: c.String("run"), Limit: c.Int("limit")}
	if f.Kind != "" && !slices.Contains(ledger.Kinds, f.Kind) {
		return usagef("--kind %q is not one of %s", f.Kind, strings.Join(ledger.Kinds, ", "))
	}
	if f.Limit < 1 || f.Limit > maxLedgerLimit {
		return usagef("--limit %d: give 1 to %d", f.Limit, maxLedgerLimit)
	}
	var err error
	if f.Since, err = traceWhen("since", c.String("since"), time.Now()); err != nil {
		return err
	}
	l, err := existingLedger(c)
	if err != nil {
		return err
	}
	defer l.Close()
	rows, total, err := l.Query(c.Context, f)
	if err != nil {
		return err
	}
	w := c.App.Writer
	if c.Bool("json") {
		return writeJSONLines(w, rows)
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "no trials match")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "seq\ttime\tkind\tstrategy\tdigest\tseries\tparams\tsharpe\twho\trun")
	for _, r := range rows {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Seq, shortTime(r.Time), r.Kind, r.Strategy, prefix(r.Digest, 8), r.Series,
			ledgerParams(r), ledgerSharpe(r), r.Who, r.RunID)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if total > len(rows) {
		fmt.Fprintf(w, "(the newest %d of %d matching rows; raise --limit or narrow with --strategy, --series, --since)\n", len(rows), total)
	}
	return nil
}

func shortTime(s string) string {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC().Format(time.RFC3339)
	}
	return s
}

func prefix(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// ledgerParams shows a row's params compactly ("fast=5 slow=20"); a
// walk-forward's are its grid.
func ledgerParams(r ledger.Row) string {
	var m map[string]any
	if json.Unmarshal(r.Params, &m) != nil {
		return string(r.Params)
	}
	if g, ok := m["grid"]; ok && r.Kind == ledger.KindWalkForward {
		b, _ := json.Marshal(g)
		return "grid " + string(b)
	}
	return fmtKnobs(m, nil)
}

// ledgerSharpe is the row's annualised Sharpe ratio from its metrics, or
// "-" (a failed run, no variance).
func ledgerSharpe(r ledger.Row) string {
	var m struct {
		Sharpe      *float64                   `json:"sharpe"`
		Error       string                     `json:"error"`
		OutOfSample *struct{ Sharpe *float64 } `json:"out_of_sample"`
	}
	if json.Unmarshal(r.Metrics, &m) != nil {
		return "-"
	}
	switch {
	case m.Error != "":
		return "failed"
	case m.Sharpe != nil:
		return fmt.Sprintf("%.3f", *m.Sharpe)
	case m.OutOfSample != nil && m.OutOfSample.Sharpe != nil:
		return fmt.Sprintf("%.3f oos", *m.OutOfSample.Sharpe)
	}
	return "-"
}

func researchVerifyAction(c *cli.Context) error {
	l, err := existingLedger(c)
	if err != nil {
		return err
	}
	defer l.Close()
	rep, err := l.Verify(c.Context)
	if err != nil {
		return err
	}
	w := c.App.Writer
	if c.Bool("json") {
		b, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintf(w, "%s\n", b)
	} else if rep.OK() {
		fmt.Fprintf(w, "research ledger intact: %d rows, tip %s (row %d)\n", rep.Rows, rep.Tip, rep.TipSeq)
	}
	if !rep.OK() {
		return fmt.Errorf("research ledger broken at row %d: %s (%d rows before it are intact, ending at %s)", rep.Bad.Seq, rep.Bad.Reason, rep.Rows, prefix(rep.Tip, 16))
	}
	return nil
}

// printLedgerFigures prints a sweep's deflated Sharpe ratio over the
// research ledger and its probability of backtest overfitting.
func printLedgerFigures(w io.Writer, r research.SweepResult) {
	if d := r.LedgerDeflatedSharpe; d != nil {
		if d.DSR != nil {
			fmt.Fprintf(w, "deflated sharpe ratio %.4f over all %d ledger trials of %s on %s (this sweep: %d)\n", *d.DSR, d.Trials, r.Strategy, r.Series, r.DeflatedSharpe.Trials)
		} else {
			fmt.Fprintf(w, "deflated sharpe ratio over the ledger undefined: %s\n", d.Note)
		}
	}
	if o := r.Overfitting; o != nil {
		if o.PBO != nil {
			fmt.Fprintf(w, "probability of backtest overfitting %.4f (CSCV: %d blocks, %d splits, %d combinations)\n", *o.PBO, o.Blocks, o.Splits, o.Combinations)
		} else {
			fmt.Fprintf(w, "probability of backtest overfitting %s\n", o.Note)
		}
	}
	if r.RunID != "" {
		fmt.Fprintf(w, "recorded in the research ledger as run %s\n", r.RunID)
	}
}

// recordBacktest appends a CLI backtest to the project's research ledger
// and says so on stderr; a ledger failure is a warning, never the
// backtest's failure.
func recordBacktest(c *cli.Context, p project.Project, name, source, series string, report json.RawMessage) {
	rec, closeLedger := openLedger(c.App.ErrWriter, p, "backtest")
	defer closeLedger()
	if rec == nil {
		return
	}
	id, err := research.RecordBacktest(ledger.WithWho(c.Context, cliWho), rec, name, source, series, report)
	if err != nil {
		fmt.Fprintf(c.App.ErrWriter, "backtest: warning: the research ledger did not record this run: %v\n", err)
		return
	}
	fmt.Fprintf(c.App.ErrWriter, "recorded in the research ledger as run %s\n", id)
}
