package script

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync/atomic"

	"go.starlark.net/lib/math"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"wicket/internal/project"
	"wicket/strategy/ta"
)

// Options configure Load.
type Options struct {
	// Overrides are knob values by name (JSON-decoded values or strings);
	// each is checked against its knob when the knob is declared, and a
	// name that no knob declares is an error.
	Overrides map[string]any
	// Indicators is the project's indicators directory, from which
	// load("indicators/<name>", ...) reads <name>.star. Nil: no user
	// indicators. Give an fs.FS that cannot escape its root (os.Root.FS).
	Indicators fs.FS
	Limits     Limits
	// Memo caches indicator results. Share one across loads of the same
	// strategy over the same bars to compute each indicator once; nil
	// gives the strategy its own.
	Memo *ta.Memo
	// PrintLimit caps the captured print output (bytes); 0 means 64 KiB.
	PrintLimit int
	// BarKeys, when set, keys the bar columns of this strategy's runs by
	// identity (see BarKeys); nil hashes them on every run.
	BarKeys *BarKeys
	// Flags, when set, are reused for the flag columns of each run's
	// signals (see Flags); nil allocates them per run.
	Flags *Flags
	// ProofSeed seeds the lookahead proof's drawn cuts (the result names
	// it); 0 draws one at random, which is what a run should do: a seed
	// the strategy's author can choose lets him choose where the proof
	// looks. Tests and reruns of a recorded proof set it.
	ProofSeed uint64
}

// Flags are the flag columns (long, short, exit) that signals runs write,
// kept from one run to the next, so that a sweep's combinations, run one
// after another, allocate none (on the demo's hourly bars, half of what a
// chunk allocated). The Signals of a run through Flags hold until the
// next run through the same Flags: strategies loaded with one Flags must
// run one at a time, and a run's signals must not outlive the next run
// (the lookahead proof, which compares runs, never uses Flags).
type Flags struct {
	cols [][]bool
	next int
}

// reset makes every column free again, at the start of a run.
func (f *Flags) reset() {
	if f != nil {
		f.next = 0
	}
}

// take returns a column of n flags, its contents unspecified: every
// caller writes all n. A nil Flags allocates.
func (f *Flags) take(n int) []bool {
	if f == nil {
		return make([]bool, n)
	}
	if f.next == len(f.cols) {
		f.cols = append(f.cols, nil)
	}
	c := f.cols[f.next]
	if cap(c) < n {
		c = make([]bool, n)
	}
	f.cols[f.next] = c[:n]
	f.next++
	return c[:n]
}

// Strategy is a loaded strategy: its top level has run with its knob
// values, its globals are frozen, and it can run over bars any number of
// times, concurrently.
type Strategy struct {
	name    string
	summary string
	style   Style
	knobs   []Knob
	values  map[string]any
	limits  Limits
	memo    *ta.Memo
	barKeys *BarKeys
	flags   *Flags
	out     *capture
	// proofSeed seeds the lookahead proof's drawn cuts (ProofSeed).
	proofSeed uint64
	warmup    atomic.Int64

	signals, setup, onBar *starlark.Function
	chain                 bool // on_bar's lookahead proof may chain (chain.go)

	// universe and rebalance are a portfolio strategy's (universe.go).
	universe  []string
	rebalance string
}

// Style is signals or on_bar.
func (s *Strategy) Style() Style { return s.style }

// Summary is the first line of the module docstring.
func (s *Strategy) Summary() string { return s.summary }

// Knobs are the declared knobs, in declaration order.
func (s *Strategy) Knobs() []Knob { return append([]Knob{}, s.knobs...) }

// Values are the knob values this load runs with (overrides, else
// defaults), in the knobs' Go types.
func (s *Strategy) Values() map[string]any {
	out := make(map[string]any, len(s.values))
	for k, v := range s.values {
		out[k] = v
	}
	return out
}

// Output is what the strategy printed so far (top level and runs).
func (s *Strategy) Output() string { return s.out.String() }

// Warmup is the largest warm-up, in bars, of any run so far: the first bar
// at which every indicator the strategy computed has a value (lookbacks of
// chained indicators add up).
func (s *Strategy) Warmup() int { return int(s.warmup.Load()) }

func (s *Strategy) noteWarmup(w int) {
	for {
		old := s.warmup.Load()
		if int64(w) <= old || s.warmup.CompareAndSwap(old, int64(w)) {
			return
		}
	}
}

func (s *Strategy) styleError(want Style) error {
	return &Error{Kind: KindEntry, File: s.name, Bar: -1,
		Msg:  fmt.Sprintf("this strategy is %s-style, not %s-style", s.style, want),
		Hint: "check Style() before choosing Signals or Begin"}
}

// fileOptions are the Starlark dialect: while loops, top-level control
// flow, sets and global reassignment allowed; recursion not.
var fileOptions = &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true}

// testPredeclared are extra host builtins that only this package's tests
// register (hook_test.go), e.g. a deliberately leaky one the lookahead
// proof must catch. Production code never assigns it, so a strategy can
// name only ta, param, math and Starlark's own built-ins.
var testPredeclared starlark.StringDict

// testTrusted are the testPredeclared names the chained proof treats as
// wicket's own reads (chain.go), so a test can plant a hole in them.
var testTrusted = map[string]bool{}

// untrusted are the names whose use outside setup keeps an on_bar
// strategy on the restarting proof (chain.go).
func untrusted(name string) bool {
	return name == "ta" || (testPredeclared.Has(name) && !testTrusted[name])
}

// predeclared names for strategies and indicators (param is added per load).
func predeclared(p *params) starlark.StringDict {
	// Sized for every name at once: growing past a small map's eight
	// entries was a fifth of this function's cost, once a combination.
	d := make(starlark.StringDict, 3+len(comparisons)+len(testPredeclared))
	d["ta"], d["math"] = taModule, math.Module
	for k, v := range comparisons {
		d[k] = v
	}
	for k, v := range testPredeclared {
		d[k] = v
	}
	if p != nil {
		d["param"] = paramModule
	}
	return d
}

func isStrategyPredeclared(name string) bool {
	return name == "ta" || name == "math" || name == "param" || comparisons.Has(name) || testPredeclared.Has(name)
}

func isIndicatorPredeclared(name string) bool { return name != "param" && isStrategyPredeclared(name) }

// compile parses, rewrites and compiles one file; it returns every error.
func compile(name, text string, isPredeclared func(string) bool) (*syntax.File, *starlark.Program, []*Error) {
	f, err := fileOptions.Parse(name, text, 0)
	if err != nil {
		return nil, nil, compileErrors(name, err)
	}
	rewriteComparisons(f)
	prog, err := starlark.FileProgram(f, isPredeclared)
	if err != nil {
		return f, nil, compileErrors(name, err)
	}
	return f, prog, nil
}

// docstring returns the module docstring of f.
func docstring(f *syntax.File) string {
	if f == nil || len(f.Stmts) == 0 {
		return ""
	}
	if es, ok := f.Stmts[0].(*syntax.ExprStmt); ok {
		if lit, ok := es.X.(*syntax.Literal); ok && lit.Token == syntax.STRING {
			return strings.TrimSpace(lit.Value.(string))
		}
	}
	return ""
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(line)
}

// Load compiles src, runs its top level with the knob overrides in opts
// and checks its entry points. A failure is an *Error with a position.
func Load(ctx context.Context, src Source, opts Options) (*Strategy, error) {
	f, prog, errs := compile(src.Name, src.Text, isStrategyPredeclared)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return load(ctx, src, opts, f, prog)
}

func load(ctx context.Context, src Source, opts Options, f *syntax.File, prog *starlark.Program) (*Strategy, error) {
	limits := opts.Limits.WithDefaults()
	memo := opts.Memo
	if memo == nil {
		memo = ta.NewMemo(0)
	}
	plimit := opts.PrintLimit
	if plimit <= 0 {
		plimit = 64 << 10
	}
	s := &Strategy{name: src.Name, summary: firstLine(docstring(f)), limits: limits, memo: memo, barKeys: opts.BarKeys, flags: opts.Flags, out: &capture{limit: plimit}, proofSeed: opts.ProofSeed}
	if s.proofSeed == 0 {
		s.proofSeed = randomSeed()
	}

	p := &params{overrides: opts.Overrides, open: true}
	r := newRun(memo, nil)
	th := newThread(r, s.out)
	ld := &loader{fsys: opts.Indicators, cache: map[string]*loaded{}}
	th.Load = ld.load
	th.SetLocal(paramsKey, p)
	stop, err := r.watch(ctx, th, limits.Wall)
	defer stop()
	if err != nil {
		return nil, err
	}
	r.enter(th, "the top level", limits.TopSteps)
	globals, err := prog.Init(th, predeclared(p))
	p.open = false
	if err != nil {
		e := evalError(src.Name, err, r)
		e.Phase = "the top level"
		return nil, e
	}
	globals.Freeze()
	s.knobs = p.knobs
	// Every override must name a declared knob.
	if _, err := CheckOverrides(p.knobs, opts.Overrides); err != nil {
		var ke *Error
		if errors.As(err, &ke) {
			ke.File = src.Name
		}
		return nil, err
	}
	s.values = map[string]any{}
	for _, k := range p.knobs {
		s.values[k.Name] = k.Default
		if raw, ok := opts.Overrides[k.Name]; ok {
			v, _ := k.Check(raw)
			s.values[k.Name] = v
		}
	}
	if err := s.entryPoints(globals); err != nil {
		return nil, err
	}
	s.chain = s.style == StyleOnBar && chainable(f, untrusted)
	if err := s.readUniverse(globals); err != nil {
		return nil, err
	}
	return s, nil
}

// entryPoints finds signals, or setup and on_bar, and checks their shape.
func (s *Strategy) entryPoints(g starlark.StringDict) error {
	fn := func(name string) (*starlark.Function, error) {
		v, ok := g[name]
		if !ok {
			return nil, nil
		}
		f, ok := v.(*starlark.Function)
		if !ok {
			return nil, &Error{Kind: KindEntry, File: s.name, Bar: -1, Msg: fmt.Sprintf("%s is a %s, not a function", name, v.Type()), Hint: hintFor(&Error{Kind: KindEntry})}
		}
		if f.NumParams() != 1 || f.HasVarargs() || f.HasKwargs() {
			return nil, newError(KindEntry, s.name, f.Position(), fmt.Sprintf("%s must take exactly one argument (%s), not %d", name, map[string]string{"signals": "bars", "setup": "ctx", "on_bar": "ctx"}[name], f.NumParams()))
		}
		return f, nil
	}
	var err error
	if s.signals, err = fn("signals"); err != nil {
		return err
	}
	if s.setup, err = fn("setup"); err != nil {
		return err
	}
	if s.onBar, err = fn("on_bar"); err != nil {
		return err
	}
	switch {
	case s.signals != nil && (s.setup != nil || s.onBar != nil):
		other := s.setup
		if other == nil {
			other = s.onBar
		}
		return newError(KindEntry, s.name, other.Position(), "defines both signals(bars) and setup/on_bar; a strategy uses one style")
	case s.signals != nil:
		s.style = StyleSignals
	case s.setup != nil && s.onBar != nil:
		s.style = StyleOnBar
	case s.setup != nil:
		return newError(KindEntry, s.name, s.setup.Position(), "defines setup(ctx) but no on_bar(ctx)")
	case s.onBar != nil:
		return newError(KindEntry, s.name, s.onBar.Position(), "defines on_bar(ctx) but no setup(ctx); add def setup(ctx): pass if there is nothing to prepare")
	default:
		return &Error{Kind: KindEntry, File: s.name, Line: 1, Column: 1, Bar: -1, Msg: "no entry point: define signals(bars), or setup(ctx) and on_bar(ctx)", Hint: hintFor(&Error{Kind: KindEntry})}
	}
	return nil
}

// loader serves load("indicators/<name>", ...) from the indicators fs.FS.
type loader struct {
	fsys  fs.FS
	cache map[string]*loaded
}

type loaded struct {
	globals starlark.StringDict
	err     error
	busy    bool
}

type loadError struct{ msg string }

func (e loadError) Error() string { return e.msg }

func (l *loader) load(th *starlark.Thread, module string) (starlark.StringDict, error) {
	name, ok := strings.CutPrefix(module, "indicators/")
	if !ok {
		return nil, loadError{fmt.Sprintf("load(%q) is not allowed: only load(\"indicators/<name>\", ...) of the project's user indicators; ta, param and math are predeclared", module)}
	}
	name = strings.TrimSuffix(name, ".star")
	if err := project.ValidName("indicator", name); err != nil {
		return nil, loadError{err.Error()}
	}
	if c, ok := l.cache[name]; ok {
		if c.busy {
			return nil, loadError{fmt.Sprintf("indicator %q loads itself (a load cycle)", name)}
		}
		return c.globals, c.err
	}
	if l.fsys == nil {
		return nil, loadError{fmt.Sprintf("indicator %q: no indicators directory is available here", name)}
	}
	text, err := readIndicator(l.fsys, name+".star")
	if err != nil {
		msg := fmt.Sprintf("indicator %q: %v", name, err)
		if errors.Is(err, fs.ErrNotExist) {
			msg = fmt.Sprintf("no indicator %q: indicators/%s.star does not exist", name, name)
		}
		return nil, loadError{msg}
	}
	c := &loaded{busy: true}
	l.cache[name] = c
	file := "indicators/" + name + ".star"
	_, prog, errs := compile(file, string(text), isIndicatorPredeclared)
	if len(errs) > 0 {
		c.err = errs[0]
	} else {
		c.globals, c.err = prog.Init(th, predeclared(nil))
		c.globals.Freeze()
		if c.err != nil {
			c.err = evalError(file, c.err, runOf(th))
		}
	}
	c.busy = false
	return c.globals, c.err
}

// readIndicator reads an indicator under the rules of the project's one
// strategy reader (project.ReadStrategy): a regular file (never a FIFO,
// whose open would block the run past its wall-clock limit, nor a device)
// of at most project.MaxStrategyBytes. The fs.FS (an os.Root's) keeps it
// inside the indicators directory.
func readIndicator(fsys fs.FS, file string) ([]byte, error) {
	fi, err := fs.Stat(fsys, file)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("indicators/%s is not a regular file (%s); an indicator is a plain .star file", file, fi.Mode().Type())
	}
	if fi.Size() > project.MaxStrategyBytes {
		return nil, fmt.Errorf("indicators/%s is larger than %d KiB; an indicator is one short file", file, project.MaxStrategyBytes>>10)
	}
	f, err := fsys.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("indicators/%s is not a regular file (%s); an indicator is a plain .star file", file, fi.Mode().Type())
	}
	b, err := io.ReadAll(io.LimitReader(f, project.MaxStrategyBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > project.MaxStrategyBytes {
		return nil, fmt.Errorf("indicators/%s grew past %d KiB while it was read; an indicator is one short file", file, project.MaxStrategyBytes>>10)
	}
	return b, nil
}
