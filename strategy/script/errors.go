package script

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"wicket/strategy/scriptapi"
)

func newError(kind Kind, file string, pos syntax.Position, msg string) *Error {
	e := &Error{Kind: kind, File: file, Msg: msg, Bar: -1}
	if pos.IsValid() {
		e.Line, e.Column = int(pos.Line), int(pos.Col)
		if f := pos.Filename(); f != "" {
			e.File = f
		}
	}
	e.Hint = hintFor(e)
	e.Msg = clip(e.Msg)
	return e
}

// MaxMessageBytes bounds an error's message: a strategy writes some of it
// (fail("..."), a value in a knob's error), and a message travels into
// tool results, traces and one research-ledger row per failed sweep
// combination.
const MaxMessageBytes = 2048

// clip cuts msg to MaxMessageBytes at a rune boundary, saying how much
// was cut.
func clip(msg string) string {
	if len(msg) <= MaxMessageBytes {
		return msg
	}
	cut := MaxMessageBytes
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d more bytes of this message cut)", msg[:cut], len(msg)-cut)
}

// compileErrors converts parse and resolve errors.
func compileErrors(file string, err error) []*Error {
	var se syntax.Error
	var el resolve.ErrorList
	switch {
	case errors.As(err, &se):
		return []*Error{newError(KindSyntax, file, se.Pos, se.Msg)}
	case errors.As(err, &el):
		out := make([]*Error, 0, len(el))
		for _, re := range el {
			out = append(out, newError(KindSyntax, file, re.Pos, re.Msg))
		}
		return out
	}
	return []*Error{newError(KindSyntax, file, syntax.Position{}, err.Error())}
}

// evalError converts an error from running Starlark code. The position is
// the innermost frame in a source file (not a builtin).
func evalError(file string, err error, r *run) *Error {
	var se *Error
	if errors.As(err, &se) && se.Line > 0 {
		return se
	}
	var ee *starlark.EvalError
	var pos syntax.Position
	msg := err.Error()
	if errors.As(err, &ee) {
		msg = ee.Msg
		skip := 0
		if strings.Contains(msg, "called recursively") {
			skip = 1 // the innermost frame is the refused call's callee; point at the call
		}
		for i := len(ee.CallStack) - 1; i >= 0; i-- {
			p := ee.CallStack[i].Pos
			if p.IsValid() && p.Filename() != "<builtin>" {
				if skip > 0 {
					skip--
					continue
				}
				pos = p
				break
			}
		}
	}
	kind := KindRuntime
	var la *LookaheadError
	var rf *refusal
	var le loadError
	switch {
	case r != nil && r.stopKind() != "":
		kind, msg = r.stopKind(), r.stopReason()
		if kind == KindLimit && r.limitPos.IsValid() {
			pos = r.limitPos
		}
		if p := r.stopPos(); p.IsValid() {
			pos = p
		}
	case errors.As(err, &la):
		kind = KindLookahead
		msg = la.Error()
	case errors.As(err, &rf):
		kind = KindLookahead
		msg = rf.msg
	case se != nil:
		kind, msg = se.Kind, se.Msg
	case errors.As(err, &le):
		kind, msg = KindLoad, le.msg
	}
	msg = strings.TrimPrefix(msg, "Starlark computation cancelled: ")
	e := newError(kind, file, pos, msg)
	e.Cause = err
	return e
}

// HintSignals is the advice for a lookahead refused in signals(bars).
const HintSignals = "in signals(), combine whole series; for bar-by-bar logic use setup/on_bar"

// hintFor is the one-line advice for an error.
func hintFor(e *Error) string {
	m := e.Msg
	switch e.Kind {
	case KindSyntax:
		switch {
		case strings.Contains(m, "undefined:"):
			return "define the name before using it; predeclared are ta, param, math and Starlark's built-ins"
		case strings.Contains(m, "not supported"), strings.Contains(m, "not allowed"):
			return "Starlark is a Python dialect without classes, try/except, import, global or recursion"
		}
		return "fix the syntax here; Starlark is a Python dialect (no classes, try/except, import or f-strings)"
	case KindLimit:
		if strings.Contains(m, "wall-clock") {
			return "the run took too long; do less work per bar, or run over fewer bars"
		}
		return "a loop that never ends or does too much; compute over whole series with ta.* and series arithmetic instead of Python loops"
	case KindCanceled:
		return "the caller cancelled the run; run it again if that was not intended"
	case KindLookahead:
		switch {
		case strings.Contains(m, "lookahead proof"):
			return "something the strategy calls reads bars after the current one; build decisions from ta.* functions, series arithmetic and ta.shift(s, k) with k >= 0"
		case strings.Contains(m, "in signals(bars)"), e.Phase == "signals":
			return HintSignals
		}
		return "use s[0] for the current bar and s[k] for k bars ago; a strategy can never read the future"
	case KindLoad:
		return `only load("indicators/<name>", "fn", ...) is allowed, from the project's indicators/; ta, param and math are predeclared`
	case KindKnob:
		return scriptapi.KnobHint
	case KindEntry:
		return "define signals(bars), or setup(ctx) and on_bar(ctx), each taking exactly one argument"
	case KindResult:
		return `signals(bars) returns {"long": ..., "exit": ..., "short"?: ..., "size"?: ...} with bool series; on_bar calls ctx.target/flat/buy/sell`
	}
	switch {
	case strings.Contains(m, "called recursively"):
		return "Starlark forbids recursion; rewrite it as a loop"
	case strings.Contains(m, "NoneType"):
		return "a value is None (an indicator's warm-up, or before the first bar); test x == None first or use ta.nz(s)"
	case strings.Contains(m, "series compared with None"):
		return "index the series first: s[0] is the current bar's value"
	case strings.Contains(m, "has no ."):
		return "check the attribute name; ctx has open, high, low, close, volume, time, bar, index, position, equity, cash, target, flat, buy, sell"
	case strings.Contains(m, "frozen"):
		return "module-level values are frozen after the top level runs; keep per-run state on ctx (ctx.name = value)"
	}
	return "fix the code at this line; print() output is captured and shown with the result"
}
