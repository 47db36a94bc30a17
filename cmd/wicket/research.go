package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
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
	key, err := ledgerKey(stderr, p, verb)
	if err != nil {
		fmt.Fprintf(stderr, "%s: warning: %v; research is not recorded in the research ledger\n", verb, err)
		return nil, func() {}
	}
	l, err := ledger.Open(p.ResearchPath(), ledger.Options{Key: key, Witness: ledgerWitness(p)}) // ledger_witness.go
	if err != nil {
		fmt.Fprintf(stderr, "%s: warning: %v; research is not recorded in the research ledger\n", verb, err)
		return nil, func() {}
	}
	return l, func() { l.Close() }
}

// ledgerKey is the key of the project's research ledger chain
// (project.KeyLedger, from the environment or secrets.env). A project made
// before wicket generated that key gets one added to secrets.env, said on
// stderr; the value is never printed.
func ledgerKey(stderr io.Writer, p project.Project, verb string) ([]byte, error) {
	s, err := p.Secrets(os.LookupEnv)
	if err != nil {
		return nil, err
	}
	v, _, ok := s.Lookup(project.KeyLedger)
	if !ok {
		if err := p.AddKey(project.KeyLedger, rand.Reader); err != nil {
			return nil, fmt.Errorf("the research ledger needs its key %s, and it could not be added to %s: %w", project.KeyLedger, p.SecretsPath(), err)
		}
		fmt.Fprintf(stderr, "%s: this project had no research ledger key; a new %s was added to %s (keep it: the ledger's chain is checked with it)\n",
			verb, project.KeyLedger, p.SecretsPath())
		if s, err = p.Secrets(os.LookupEnv); err != nil {
			return nil, err
		}
		v, _, _ = s.Lookup(project.KeyLedger)
	}
	if len(v) < ledger.MinKeyBytes {
		return nil, fmt.Errorf("%s is shorter than %d characters; use a long random value (e.g. `openssl rand -hex 32`), and keep the one the ledger was made with", project.KeyLedger, ledger.MinKeyBytes)
	}
	return []byte(v), nil
}

// Ledger list bounds.
const (
	defaultLedgerLimit = 50
	maxLedgerLimit     = 10000
)

func researchCommand() *cli.Command {
	return &cli.Command{
		Name:  "research",
		Usage: "the research ledger: every trial, chained with the project's ledger key; verify it, export a run for audit",
		Description: "Every backtest, sweep combination, walk-forward in-sample combination and walk-forward run — from the " +
			"agent (wicket mcp) or the CLI, failed ones too — is appended to the project's research ledger, " +
			"settings/state/research.db: when, who (the MCP session and caller, or cli), the strategy's name (an inline " +
			"source's is its content hash) and source digest, params, series and range, costs, metrics and the run id. " +
			"A sweep's second deflated Sharpe ratio counts the ledger's trials on the series. Rows are chained with " +
			"HMAC-SHA256 under WICKET_LEDGER_KEY (settings/secrets.env) and each append's head is anchored in " +
			"settings/state/research.anchors, so `wicket research verify` finds an edited, removed, reordered or " +
			"re-hashed row and a cut tail; `wicket research export RUN` writes what an auditor needs to recompute a " +
			"run's statistics.",
		Subcommands: append([]*cli.Command{
			{
				Name:      "ledger",
				Usage:     "list the trials in the research ledger, newest last",
				ArgsUsage: "[--strategy NAME] [--series SYMBOL@GRANULARITY] [--since 7d] [--json]",
				Description: "Lists the ledger's rows (the newest --limit of those that match): sequence number, time, kind " +
					"(backtest, sweep, walk_forward), strategy and the start of its source digest, series, params, the " +
					"annualised Sharpe ratio, the costs it ran under (fee and slippage in bps, fill, intrabar rule, funding, " +
					"borrow rate, leverage, maintenance margin, volume cap; unknown for rows older than that record), who ran it and the run id. --json prints one JSON object per row.",
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
				Usage: "check the research ledger's keyed chain and its anchors; names the first edited, removed, reordered or re-hashed row, or a cut tail",
				Description: "Walks the chain in order and checks every row's sequence number, its link to the row before " +
					"it, its hash (HMAC-SHA256 under WICKET_LEDGER_KEY, so a chain rebuilt without the key fails) and " +
					"that it is the row anchored in settings/state/research.anchors when it was written (so a chain " +
					"rebuilt with the key fails too), then that no anchor names a row past the tip (rows cut from the " +
					"end). Exits 0 and prints the row count and the tip when it is intact, with notes (rows written " +
					"before the chain was keyed, rows not yet anchored); exits 1 naming the first bad row otherwise. " +
					"--anchors checks copies of research.anchors kept elsewhere too, which vouch for the rows they " +
					"record even if the ledger and its anchor file were cut in step. The points where the key's protection " +
					"begins (keyed_from, anchors_keyed_from) and every anchor line are keyed too; a ledger migrated from the " +
					"unkeyed chain before they were is named until you vouch for it once with --trust-migration.",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "json", Usage: "print the report as JSON"},
					&cli.BoolFlag{Name: "trust-migration", Usage: "vouch for an older migrated ledger's keyed_from, which was written before it was keyed (once, then verify)"},
					&cli.StringSliceFlag{Name: "anchors", Usage: "also check this copy of research.anchors (`FILE`, repeatable), e.g. one from a backup"},
				},
				Action: researchVerifyAction,
			},
			{
				Name:      "export",
				Usage:     "write a run's trials, their return statistics and PBO blocks, and its settings, to recompute its DSR and PBO",
				ArgsUsage: "RUN [--out FILE]",
				Description: "Writes one JSON document (format " + research.ExportFormat + ") for run RUN of the research ledger: " +
					"its settings, each trial's params, metrics, per-period Sharpe ratio, return statistics (skewness, " +
					"kurtosis, returns T) and returns in the PBO's blocks (count, sum and sum of squares per block), the " +
					"winner marked, every trial on the series the deflated Sharpe ratio over the ledger counts, and the " +
					"ledger's verify report. docs/strategies.md recomputes the DSR and PBO from it in Python.",
				Flags:  []cli.Flag{&cli.StringFlag{Name: "out", Value: "-", Usage: "write to `FILE` (- is stdout); an existing file is not overwritten"}},
				Action: researchExportAction,
			},
		}, researchPlanCommands()...), // research_plan.go
	}
}

// openExistingLedger opens the ledger of the project the --project flag
// names for reading, for the command verb; a project without one is told
// how it gets one, and one whose ledger is gone but whose anchors remain
// is told what was lost.
func openExistingLedger(stderr io.Writer, projectFlag, verb string) (*ledger.Ledger, error) {
	p, _, err := openProjectAt(projectFlag)
	if err != nil {
		return nil, err
	}
	key, err := ledgerKey(stderr, p, verb)
	if err != nil {
		return nil, err
	}
	l, err := ledger.OpenExisting(p.ResearchPath(), ledger.Options{Key: key})
	if errors.Is(err, ledger.ErrWrongKey) {
		return nil, fmt.Errorf("%w: %s in %s (or the environment) is not the key this ledger was made with; put the original back", err, project.KeyLedger, p.SecretsPath())
	}
	if errors.Is(err, ledger.ErrNotFound) {
		if anchors, _, aerr := ledger.ReadAnchors(p.ResearchPath()); aerr == nil && len(anchors) > 0 {
			last := slices.MaxFunc(anchors, func(a, b ledger.Anchor) int { return cmp.Compare(a.Seq, b.Seq) })
			return nil, fmt.Errorf("the research ledger settings/state/research.db is missing, but its anchors record rows 1 to %d (the last, run %s, at %s): every row is missing",
				last.Seq, last.RunID, last.Time)
		}
		return nil, fmt.Errorf("no research ledger in this project yet: backtests, sweeps and walk-forwards (wicket backtest, wicket sweep, the agent's run_* tools) record their trials in settings/state/research.db as they run")
	}
	return l, err
}

// noResearchArgs refuses arguments to research ledger and verify.
func noResearchArgs(c *cli.Context) error {
	if c.Args().Len() > 0 {
		return usagef("research %s takes no arguments, got %q", c.Command.Name, c.Args().First())
	}
	return nil
}

func researchLedgerAction(c *cli.Context) error {
	if err := noResearchArgs(c); err != nil {
		return err
	}
	o := researchLedgerOptions{
		project: c.String("project"), since: c.String("since"), json: c.Bool("json"), now: time.Now,
		filter: ledger.Filter{Strategy: c.String("strategy"), Series: c.String("series"), Kind: c.String("kind"), RunID: c.String("run"), Limit: c.Int("limit")},
	}
	return runResearchLedger(c.Context, o, c.App.Writer, c.App.ErrWriter)
}

// researchLedgerOptions is what wicket research ledger works with, filled
// from its flags.
type researchLedgerOptions struct {
	project string        // the --project flag
	filter  ledger.Filter // all but Since, which since gives
	since   string        // --since: a duration back from now, RFC3339 or a date
	json    bool
	now     func() time.Time // the clock --since counts back from
}

// runResearchLedger lists the research ledger's rows that match.
func runResearchLedger(ctx context.Context, o researchLedgerOptions, stdout, stderr io.Writer) error {
	f := o.filter
	if f.Kind != "" && !slices.Contains(ledger.Kinds, f.Kind) {
		return usagef("--kind %q is not one of %s", f.Kind, strings.Join(ledger.Kinds, ", "))
	}
	if f.Limit < 1 || f.Limit > maxLedgerLimit {
		return usagef("--limit %d: give 1 to %d", f.Limit, maxLedgerLimit)
	}
	var err error
	if f.Since, err = traceWhen("since", o.since, o.now()); err != nil {
		return err
	}
	l, err := openExistingLedger(stderr, o.project, "research ledger")
	if err != nil {
		return err
	}
	defer l.Close()
	rows, total, err := l.Query(ctx, f)
	if err != nil {
		return err
	}
	w := stdout
	if o.json {
		return writeJSONLines(w, rows)
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "no trials match")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "seq\ttime\tkind\tstrategy\tdigest\tseries\tparams\tsharpe\tcosts\twho\trun")
	for _, r := range rows {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Seq, shortTime(r.Time), r.Kind, r.Strategy, prefix(r.Digest, 8), r.Series,
			ledgerParams(r), ledgerSharpe(r), research.ReadLedgerCosts(r.Costs), r.Who, r.RunID)
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
// walk-forward's are its grid, an in-sample combination's its window's
// number and values ("window 2: fast=5 slow=20").
func ledgerParams(r ledger.Row) string {
	var m map[string]any
	if json.Unmarshal(r.Params, &m) != nil {
		return string(r.Params)
	}
	if g, ok := m["grid"]; ok && r.Kind == ledger.KindWalkForward {
		b, _ := json.Marshal(g)
		return "grid " + string(b)
	}
	if v, ok := m["values"].(map[string]any); ok && r.Kind == ledger.KindInSample {
		return fmt.Sprintf("window %v: %s", m["window"], fmtKnobs(v, nil))
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
	if err := noResearchArgs(c); err != nil {
		return err
	}
	o := researchVerifyOptions{project: c.String("project"), anchors: c.StringSlice("anchors"), json: c.Bool("json"), trust: c.Bool("trust-migration")}
	return runResearchVerify(c.Context, o, c.App.Writer, c.App.ErrWriter)
}

// researchVerifyOptions is what wicket research verify works with, filled
// from its flags.
type researchVerifyOptions struct {
	project string   // the --project flag
	anchors []string // --anchors: copies of research.anchors to check too
	json    bool
	trust   bool // --trust-migration
}

// runResearchVerify checks the research ledger's chain and anchors; a
// broken chain is its error.
func runResearchVerify(ctx context.Context, o researchVerifyOptions, stdout, stderr io.Writer) error {
	l, err := openExistingLedger(stderr, o.project, "research verify")
	if err != nil {
		return err
	}
	defer l.Close()
	if o.trust {
		if err := l.TrustMigration(ctx); err != nil {
			return err
		}
	}
	p, _, err := openProjectAt(o.project)
	if err != nil {
		return err
	}
	rep, err := l.VerifyHeld(ctx, ledgerHeld(ctx, p), o.anchors...) // ledger_witness.go: the node's copy
	if err != nil {
		return err
	}
	w := stdout
	if o.json {
		b, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintf(w, "%s\n", b)
	} else if rep.OK() {
		fmt.Fprintf(w, "research ledger intact: %d rows, tip %s (row %d); %d anchors, the last at row %d\n", rep.Rows, rep.Tip, rep.TipSeq, rep.Anchors, rep.AnchoredSeq)
		if rep.Held > 0 {
			fmt.Fprintf(w, "%d of the anchors are held by the node, the last at row %d\n", rep.Held, rep.HeldSeq)
		}
		for _, n := range rep.Notes {
			fmt.Fprintf(w, "note: %s\n", n)
		}
	}
	if !rep.OK() {
		return fmt.Errorf("research ledger broken at row %d: %s (%d rows before it are intact, ending at %s)", rep.Bad.Seq, rep.Bad.Reason, rep.Rows, prefix(rep.Tip, 16))
	}
	return nil
}

func researchExportAction(c *cli.Context) error {
	args, err := trailingFlags(c) // `research export RUN --out FILE` too
	if err != nil {
		return err
	}
	if len(args) != 1 {
		return usagef("research export takes one RUN id (the run column of `wicket research ledger`), got %d arguments", len(args))
	}
	o := researchExportOptions{project: c.String("project"), run: args[0], out: c.String("out")}
	return runResearchExport(c.Context, o, c.App.Writer, c.App.ErrWriter)
}

// researchExportOptions is what wicket research export works with, filled
// from its argument and flags.
type researchExportOptions struct {
	project string // the --project flag
	run     string // the run id
	out     string // --out FILE, - for stdout
}

// runResearchExport writes one run of the research ledger for audit.
func runResearchExport(ctx context.Context, o researchExportOptions, stdout, stderr io.Writer) error {
	out := o.out
	if out == "" {
		return usagef("--out is empty: give a FILE, or - for stdout")
	}
	l, err := openExistingLedger(stderr, o.project, "research export")
	if err != nil {
		return err
	}
	defer l.Close()
	x, err := research.Export(ctx, l, o.run)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(x, "", " ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if !x.Verify.OK() {
		fmt.Fprintf(stderr, "research export: warning: the research ledger is broken at row %d (%s); the export is of what it holds\n", x.Verify.Bad.Seq, x.Verify.Bad.Reason)
	}
	if out == "-" {
		_, err := stdout.Write(b)
		return err
	}
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("research export: %w (choose another --out; an existing file is never overwritten)", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("research export: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("research export: %w", err)
	}
	fmt.Fprintf(stderr, "exported run %s: %d trials, %d ledger trials on %s, to %s\n", x.RunID, len(x.Trials), len(x.Ledger.Trials), x.Series, out)
	return nil
}

// printLedgerFigures prints a sweep's deflated Sharpe ratio over the
// research ledger and its probability of backtest overfitting.
func printLedgerFigures(w io.Writer, r research.SweepResult) {
	if d := r.LedgerDeflatedSharpe; d != nil {
		if d.DSR != nil {
			whose := fmt.Sprintf("all %d ledger trials on %s, every strategy's (%d of them this strategy's)", d.Trials, r.Series, d.StrategyTrials)
			if d.Scope == ledger.ScopeStrategy {
				whose = fmt.Sprintf("only this strategy's %d ledger trials on %s (--deflate-by strategy; %d on the series, over which it is %s)", d.Trials, r.Series, d.SeriesTrials, fmtPlacesOr(d.SeriesDSR, 4, "undefined"))
			}
			fmt.Fprintf(w, "deflated sharpe ratio %.4f over %s (this sweep: %d)\n", *d.DSR, whose, r.DeflatedSharpe.Trials)
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

// fmtPlacesOr is x with places decimals, or or when it is nil.
func fmtPlacesOr(x *float64, places int, or string) string {
	if x == nil {
		return or
	}
	return fmtPlaces(x, places)
}

// recordBacktest appends a CLI backtest to the project's research ledger
// and says so on stderr; a ledger failure is a warning, never the
// backtest's failure.
func recordBacktest(ctx context.Context, stderr io.Writer, p project.Project, name, source, series string, report json.RawMessage) {
	rec, closeLedger := openLedger(stderr, p, "backtest")
	defer closeLedger()
	if rec == nil {
		return
	}
	id, err := research.RecordBacktest(ledger.WithWho(ctx, cliWho), rec, name, source, series, report)
	if err != nil {
		fmt.Fprintf(stderr, "backtest: warning: the research ledger did not record this run: %v\n", err)
		return
	}
	fmt.Fprintf(stderr, "recorded in the research ledger as run %s\n", id)
}
