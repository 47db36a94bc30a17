package script

import (
	"context"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Program is a compiled strategy: Load runs its top level with other knob
// values without parsing and compiling the text again, so a sweep compiles
// a strategy once per chunk of combinations.
type Program struct {
	src  Source
	f    *syntax.File
	prog *starlark.Program
}

// Compile parses and compiles src. A failure is the first *Error.
func Compile(src Source) (*Program, error) {
	f, prog, errs := compile(src.Name, src.Text, isStrategyPredeclared)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return &Program{src: src, f: f, prog: prog}, nil
}

// Load is Load(ctx, src, opts) for the compiled src.
func (p *Program) Load(ctx context.Context, opts Options) (*Strategy, error) {
	return load(ctx, p.src, opts, p.f, p.prog)
}
