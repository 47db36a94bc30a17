package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"wicket/internal/project"
	"wicket/strategy/script"
	"wicket/strategy/templates"
	"wicket/strategy/worker"
)

func strategyCommand() *cli.Command {
	jsonFlag := &cli.BoolFlag{Name: "json", Usage: "machine-readable output"}
	return &cli.Command{
		Name:  "strategy",
		Usage: "author strategies: validate, list knobs, browse templates, start a new one",
		Subcommands: []*cli.Command{
			{
				Name:      "validate",
				Usage:     "check a strategy: syntax, top level, entry points and a smoke run over synthetic bars",
				ArgsUsage: "FILE|NAME [KNOB=VALUE...]",
				Description: "FILE is a path to a .star file; NAME is strategies/NAME.star in the project. " +
					"KNOB=VALUE pairs override knobs for the smoke run. The strategy runs in a worker process " +
					"limited to research.worker_memory_mib. Exits 1 when the strategy has problems.",
				Flags:  []cli.Flag{jsonFlag},
				Action: strategyAction("validate", runStrategyValidate),
			},
			{
				Name:      "params",
				Usage:     "list a strategy's knobs: name, type, default, range, step, doc",
				ArgsUsage: "FILE|NAME",
				Flags:     []cli.Flag{jsonFlag},
				Action:    strategyAction("params", runStrategyParams),
			},
			{
				Name:      "templates",
				Usage:     "list the built-in templates, or print one's source",
				ArgsUsage: "[NAME]",
				Flags:     []cli.Flag{jsonFlag},
				Action:    templatesAction,
			},
			{
				Name:      "new",
				Usage:     "create strategies/NAME.star from a template (never overwrites)",
				ArgsUsage: "NAME --from TEMPLATE",
				Flags:     []cli.Flag{&cli.StringFlag{Name: "from", Usage: "template to copy (see wicket strategy templates)"}},
				Action:    newStrategyAction,
			},
		},
	}
}

// target is the strategy a validate or params command works on.
type target struct {
	req worker.StrategyRequest
	cfg project.Config
}

// strategyOptions is what strategy validate and params work with,
// filled from their arguments and flags.
type strategyOptions struct {
	project   string   // the --project flag
	arg       string   // FILE or NAME
	overrides []string // validate: KNOB=VALUE
	json      bool
}

// strategyAction is the action of a command that runs a strategy: it
// reads FILE|NAME (and, for validate, KNOB=VALUE overrides) into the
// options and calls run.
func strategyAction(verb string, run func(ctx context.Context, o strategyOptions, stdout, stderr io.Writer) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		args, err := trailingFlags(c)
		if err != nil {
			return err
		}
		if len(args) < 1 {
			return usagef("strategy %s needs FILE (a .star path) or NAME (strategies/NAME.star)", verb)
		}
		arg, rest := args[0], args[1:]
		if verb != "validate" && len(rest) > 0 {
			return usagef("strategy %s takes one FILE or NAME, got %d arguments", verb, len(args))
		}
		o := strategyOptions{project: c.String("project"), arg: arg, overrides: rest, json: c.Bool("json")}
		return run(c.Context, o, c.App.Writer, c.App.ErrWriter)
	}
}

// runStrategyValidate checks a strategy in a worker and prints the report;
// a strategy with problems is an error.
func runStrategyValidate(ctx context.Context, o strategyOptions, stdout, stderr io.Writer) error {
	return inWorker(o, stderr, func(t target, pool *worker.Pool) error {
		rep, err := pool.Validate(ctx, t.req)
		if err != nil {
			return err
		}
		return printReport(o, t, rep, stdout, stderr)
	})
}

// runStrategyParams lists a strategy's knobs.
func runStrategyParams(ctx context.Context, o strategyOptions, stdout, stderr io.Writer) error {
	return inWorker(o, stderr, func(t target, pool *worker.Pool) error {
		res, err := pool.Params(ctx, t.req)
		if err != nil {
			return err
		}
		if o.json {
			return writeJSON(stdout, res)
		}
		if len(res.Universe) > 0 {
			fmt.Fprintf(stdout, "%s (portfolio of %s, rebalanced %s; %s)", t.req.Name, strings.Join(res.Universe, ","), res.Rebalance, res.Style)
		} else {
			fmt.Fprintf(stdout, "%s (%s)", t.req.Name, res.Style)
		}
		if res.Summary != "" {
			fmt.Fprintf(stdout, ": %s", res.Summary)
		}
		fmt.Fprintln(stdout)
		return printKnobs(stdout, res.Knobs)
	})
}

// inWorker reads the strategy o names and hands it to do with a pool of
// one worker.
func inWorker(o strategyOptions, stderr io.Writer, do func(t target, pool *worker.Pool) error) error {
	t, err := strategyTarget(o, stderr)
	if err != nil {
		return err
	}
	pool, err := oneWorkerPool(t.cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	return do(t, pool)
}

// strategyTarget reads the strategy o names. A FILE is read from disk; a
// NAME is looked up in the project's strategies/. The project, when there
// is one, supplies the indicators directory and the worker memory limit.
func strategyTarget(o strategyOptions, stderr io.Writer) (target, error) {
	arg, rest := o.arg, o.overrides
	t := target{cfg: project.Defaults()}
	p, cfg, perr := openProjectAt(o.project)
	if perr != nil && !errors.Is(perr, project.ErrNoProject) {
		return target{}, perr
	}
	var proj *project.Project
	if perr == nil {
		t.cfg = cfg
		t.req.IndicatorsDir = p.IndicatorsDir()
		proj = &p
	}
	label, source, err := readStrategyArgTo(stderr, proj, arg)
	if err != nil {
		if perr != nil && errors.Is(err, fs.ErrNotExist) && !isFileArg(arg) {
			return target{}, fmt.Errorf("%w; %w", err, perr)
		}
		return target{}, err
	}
	t.req.Name = label
	t.req.Source = source
	if len(rest) > 0 {
		ov, err := script.ParseAssignments(rest)
		if err != nil {
			return target{}, usageError{err}
		}
		t.req.Overrides = ov
	}
	return t, nil
}

// readStrategyArgTo reads the strategy a command names, the same way for
// every command: FILE (a .star path, read by project.ReadStrategyFile) or
// NAME, resolved by templates.Resolve (strategies/NAME.star in proj, else
// the built-in template of that name, which is said on stderr). proj is nil
// outside a project. It returns the name positions are reported under.
func readStrategyArgTo(stderr io.Writer, proj *project.Project, arg string) (label, source string, err error) {
	if isFileArg(arg) {
		text, _, err := project.ReadStrategyFile(arg)
		if err != nil {
			return "", "", fmt.Errorf("read strategy: %w", err)
		}
		return filepath.Base(arg), text, nil
	}
	if err := project.ValidName("strategy", arg); err != nil {
		return "", "", usageError{err}
	}
	st, err := templates.Resolve(proj, arg)
	if err != nil {
		return "", "", err
	}
	if st.Template {
		fmt.Fprintf(stderr, "no strategies/%s.star: using the built-in template %s\n", arg, arg)
	}
	return st.Label, st.Source, nil
}

// isFileArg tells a path from a bare strategy name.
func isFileArg(arg string) bool {
	return strings.HasSuffix(arg, ".star") || strings.ContainsRune(arg, '/') || strings.ContainsRune(arg, filepath.Separator)
}

func printReport(o strategyOptions, t target, rep script.Report, w, stderr io.Writer) error {
	if o.json {
		if err := writeJSON(w, rep); err != nil {
			return err
		}
	} else {
		for _, p := range rep.Problems {
			file := p.File
			if file == "" {
				file = t.req.Name
			}
			if p.Line > 0 {
				file = fmt.Sprintf("%s:%d:%d", file, p.Line, p.Column)
			}
			fmt.Fprintf(w, "%s: %s: %s\n    hint: %s\n", file, p.Kind, p.Message, p.Hint)
		}
		if rep.Valid {
			fmt.Fprintf(w, "%s: valid, %s style", t.req.Name, rep.Style)
			if rep.Summary != "" {
				fmt.Fprintf(w, ": %s", rep.Summary)
			}
			fmt.Fprintf(w, "\nwarm-up: %d bars\n", rep.Warmup)
			if rep.LookaheadCheck != "" {
				fmt.Fprintf(w, "lookahead check: %s\n", rep.LookaheadCheck)
			}
			if sp := rep.StartPoint; sp != nil {
				fmt.Fprintf(w, "start-point check: %s\n", sp.Verdict)
			}
			if len(rep.Knobs) > 0 {
				names := make([]string, len(rep.Knobs))
				for i, k := range rep.Knobs {
					names[i] = k.Name
				}
				fmt.Fprintf(w, "knobs: %s\n", strings.Join(names, ", "))
			}
		}
		for _, warn := range rep.Warnings {
			fmt.Fprintf(stderr, "warning: %s\n", warn)
		}
		if rep.Output != "" {
			fmt.Fprintf(w, "printed:\n%s", indent(rep.Output))
		}
	}
	if !rep.Valid {
		n := len(rep.Problems)
		s := "s"
		if n == 1 {
			s = ""
		}
		return fmt.Errorf("%s has %d problem%s; fix them and validate again", t.req.Name, n, s)
	}
	return nil
}

// indent indents each line of s by four spaces.
func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return "    " + strings.Join(lines, "\n    ") + "\n"
}

func printKnobs(w io.Writer, knobs []script.Knob) error {
	if len(knobs) == 0 {
		fmt.Fprintln(w, "no knobs")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KNOB\tTYPE\tDEFAULT\tALLOWED\tSTEP\tDOC")
	for _, k := range knobs {
		step := "-"
		if k.Step != nil {
			step = fmt.Sprint(*k.Step)
		}
		fmt.Fprintf(tw, "%s\t%s\t%v\t%s\t%s\t%s\n", k.Name, k.Type, k.Default, k.Range(), step, k.Doc)
	}
	return tw.Flush()
}

func templatesAction(c *cli.Context) error {
	args, err := trailingFlags(c)
	if err != nil {
		return err
	}
	if len(args) > 1 {
		return usagef("strategy templates takes at most one NAME, got %d arguments", len(args))
	}
	o := templatesOptions{json: c.Bool("json")}
	if len(args) == 1 {
		o.name = args[0]
	}
	return runTemplates(c.Context, o, c.App.Writer, c.App.ErrWriter)
}

// templatesOptions is what strategy templates works with, filled from its
// arguments and flags.
type templatesOptions struct {
	name string // one template to print; empty: list them
	json bool
}

// runTemplates lists the built-in templates, or prints one's source.
func runTemplates(_ context.Context, o templatesOptions, stdout, stderr io.Writer) error {
	w := stdout
	if o.name != "" {
		name := o.name
		tm, err := templates.Get(name)
		if err != nil {
			return usageError{err}
		}
		src, err := templates.Source(name)
		if err != nil {
			return err
		}
		if o.json {
			return writeJSON(w, struct {
				templates.Template
				Source string `json:"source"`
			}{tm, src})
		}
		_, err = io.WriteString(w, src)
		return err
	}
	list := templates.List()
	if o.json {
		return writeJSON(w, list)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TEMPLATE\tSTYLE\tUNIVERSE\tKNOBS\tSUMMARY")
	for _, tm := range list {
		names := make([]string, len(tm.Params))
		for i, k := range tm.Params {
			names[i] = k.Name
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", tm.Name, tm.Style, templateUniverse(tm), strings.Join(names, ","), tm.Summary)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(stderr, "print one with `wicket strategy templates NAME`; start from one with `wicket strategy new NAME --from TEMPLATE`")
	return nil
}

// templateUniverse is a portfolio template's universe and rebalance
// schedule ("*-USD@1d weekly"), "-" for a single-series one.
func templateUniverse(tm templates.Template) string {
	if len(tm.Universe) == 0 {
		return "-"
	}
	return strings.Join(tm.Universe, ",") + " " + tm.Rebalance
}

func newStrategyAction(c *cli.Context) error {
	args, err := trailingFlags(c)
	if err != nil {
		return err
	}
	if len(args) != 1 {
		return usagef("strategy new needs exactly one NAME, got %d arguments", len(args))
	}
	o := newStrategyOptions{project: c.String("project"), name: args[0], from: c.String("from")}
	return runNewStrategy(c.Context, o, c.App.Writer, c.App.ErrWriter)
}

// newStrategyOptions is what strategy new works with, filled from its
// arguments and flags.
type newStrategyOptions struct {
	project string // the --project flag
	name    string // the new strategy
	from    string // the template
}

// runNewStrategy writes strategies/NAME.star from a template, never over
// an existing file.
func runNewStrategy(_ context.Context, o newStrategyOptions, stdout, stderr io.Writer) error {
	from := o.from
	if from == "" {
		return usagef("strategy new needs --from TEMPLATE; templates: %s", strings.Join(templates.Names(), ", "))
	}
	src, err := templates.Source(from)
	if err != nil {
		return usageError{err}
	}
	p, _, err := openProjectAt(o.project)
	if err != nil {
		return err
	}
	name := o.name
	path, err := p.StrategyPath(name)
	if err != nil {
		return usageError{err}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%s already exists; a strategy is never overwritten (edit it, or choose another name)", path)
	}
	if err != nil {
		return fmt.Errorf("create strategy: %w", err)
	}
	if _, err := io.WriteString(f, src); err != nil {
		f.Close()
		return fmt.Errorf("write strategy: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write strategy: %w", err)
	}
	rel, _ := filepath.Rel(p.Root, path)
	fmt.Fprintf(stdout, "created %s from template %s\n", rel, from)
	fmt.Fprintf(stderr, "next: edit it, then wicket strategy validate %s\n", name)
	return nil
}
