package script

import (
	"context"
	"errors"
	"fmt"
	"math"

	"wicket/strategy"
)

// noDocstring is the warning for a strategy without a summary.
const noDocstring = `no docstring: start the file with a """one-line summary""" so listings can describe the strategy`

// SmokeLength is the number of synthetic bars validation runs over.
const SmokeLength = 1000

// Validate parses src, runs its top level, checks its entry points, and
// runs it over SmokeLength synthetic bars so runtime errors surface too,
// then proves on those bars that no decision read a later bar
// (CheckLookahead) and measures the warm-up its values need
// (CheckStartPoint).
// Every problem carries a line, a column and a hint. Validate itself only
// fails through the report.
func Validate(ctx context.Context, src Source, opts Options) Report {
	return validate(ctx, src, opts, false)
}

// validate is Validate; noProof skips the lookahead proof (benchmarks
// measure its cost with it).
func validate(ctx context.Context, src Source, opts Options, noProof bool) Report {
	rep := Report{Knobs: []Knob{}, Problems: []Problem{}}
	f, prog, errs := compile(src.Name, src.Text, isStrategyPredeclared)
	rep.Summary = firstLine(docstring(f))
	if len(errs) > 0 {
		for _, e := range errs {
			rep.Problems = append(rep.Problems, e.Problem())
		}
		return rep
	}
	s, err := load(ctx, src, opts, f, prog)
	if err != nil {
		rep.Problems = append(rep.Problems, problemOf(src.Name, err))
		return rep
	}
	rep.Style, rep.Knobs = s.style, s.Knobs()
	if s.IsPortfolio() {
		if err := validatePortfolio(ctx, s, &rep); err != nil {
			rep.Problems = append(rep.Problems, problemOf(src.Name, err))
			return rep
		}
		if s.Summary() == "" {
			rep.Warnings = append(rep.Warnings, noDocstring)
		}
		rep.Valid = true
		return rep
	}
	bars := SmokeBars(SmokeLength)
	warm, tr, err := smoke(ctx, s, bars)
	rep.Output = s.Output()
	rep.Warmup = warm
	if err != nil {
		rep.Problems = append(rep.Problems, problemOf(src.Name, err))
		return rep
	}
	if !noProof {
		check, err := s.CheckLookahead(ctx, bars, tr)
		if err != nil {
			rep.Problems = append(rep.Problems, problemOf(src.Name, err))
			return rep
		}
		rep.LookaheadCheck = check
	}
	// The start-point check judges the strategy's own warm-up: how much
	// history its values need before a deployment may trust them.
	if sp, err := s.CheckStartPoint(ctx, bars, warm); err != nil {
		rep.Warnings = append(rep.Warnings, err.Error())
	} else {
		rep.StartPoint = &sp
		if !sp.Passed && len(sp.Offsets) > 0 {
			rep.Warnings = append(rep.Warnings, "start-point check "+sp.Verdict)
		}
	}
	if warm >= SmokeLength {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("the warm-up (%d bars) is longer than the %d-bar smoke series, so the entry points never saw a complete bar; runtime errors after the warm-up can still occur", warm, SmokeLength))
	}
	if s.Summary() == "" {
		rep.Warnings = append(rep.Warnings, noDocstring)
	}
	rep.Valid = true
	return rep
}

func problemOf(file string, err error) Problem {
	var e *Error
	if errors.As(err, &e) {
		return e.Problem()
	}
	return Problem{Kind: KindRuntime, File: file, Message: err.Error(), Hint: "report this error; it is not the strategy's fault"}
}

// smoke runs s once over bars (signals, or setup and every on_bar with a
// simple account filled at the close, no costs) and returns its warm-up and
// the run's trace for CheckLookahead.
func smoke(ctx context.Context, s *Strategy, bars strategy.Bars) (int, Trace, error) {
	if s.Style() == StyleSignals {
		_, tr, err := s.SignalsTrace(ctx, bars)
		return s.Warmup(), tr, err
	}
	st, err := s.Begin(ctx, bars)
	if err != nil {
		return s.Warmup(), Trace{}, err
	}
	defer st.Close()
	st.Record()
	acct := strategy.Account{Cash: 10000, Equity: 10000}
	for i := 0; i < bars.Len(); i++ {
		px := bars.Close[i]
		acct.Equity = acct.Cash + acct.Position*px
		in, err := st.Step(i, acct)
		if err != nil {
			return st.Warmup(), Trace{}, err
		}
		switch in.Kind {
		case strategy.Target:
			q := in.Value * acct.Equity / px
			acct.Cash -= (q - acct.Position) * px
			acct.Position = q
		case strategy.Qty:
			acct.Cash -= in.Value * px
			acct.Position += in.Value
		}
		if math.IsNaN(acct.Equity) {
			acct = strategy.Account{Cash: 10000, Equity: 10000}
		}
	}
	tr, _ := st.Trace()
	return st.Warmup(), tr, nil
}
