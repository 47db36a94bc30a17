package script

import (
	"math"
	"slices"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Starlark comparisons always yield a bool, but `f > s` on two series must
// yield a series. So after parsing, every comparison x OP y is rewritten to
// a call of a hidden predeclared builtin ($lt, $gt, ...) at the operator's
// position. The builtin compares elementwise when a series is involved and
// defers to Starlark's own comparison otherwise. The names start with '$',
// which no identifier in source can, so a strategy cannot shadow or call
// them by name.

var cmpNames = map[syntax.Token]string{
	syntax.LT: "$lt", syntax.GT: "$gt", syntax.LE: "$le", syntax.GE: "$ge", syntax.EQL: "$eq", syntax.NEQ: "$ne",
}

// comparisons are the predeclared comparison builtins, each under its
// name with builtinSuffix: the file binds each to a global of its own name
// at the start of its top level (bindComparisons), because a global is
// read by index where a predeclared name is a map lookup on every use, and
// on_bar makes several comparisons at every bar.
var comparisons = func() starlark.StringDict {
	d := starlark.StringDict{}
	for op, name := range cmpNames {
		d[name+builtinSuffix] = starlark.NewBuiltin(name, compareFn(op))
	}
	return d
}()

// builtinSuffix marks the predeclared name a comparison global is bound from.
const builtinSuffix = ".builtin"

func compareFn(op syntax.Token) func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	return func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
		x, y := args[0], args[1]
		if a, ok := x.(starlark.Float); ok {
			if b, ok := y.(starlark.Float); ok && !math.IsNaN(float64(a)) && !math.IsNaN(float64(b)) {
				return starlark.Bool(compareFloats(op, float64(a), float64(b))), nil
			}
		}
		_, xs := x.(*Series)
		_, ys := y.(*Series)
		if xs || ys {
			if x == starlark.None || y == starlark.None {
				return nil, errSeriesNone
			}
			return seriesOp(op, x, y)
		}
		ok, err := starlark.Compare(op, x, y)
		if err != nil {
			return nil, err
		}
		return starlark.Bool(ok), nil
	}
}

type seriesNoneError struct{}

func (seriesNoneError) Error() string {
	return "a series compared with None: compare one bar's value instead, e.g. s[0] == None"
}

var errSeriesNone error = seriesNoneError{}

func compareFloats(op syntax.Token, a, b float64) bool {
	switch op {
	case syntax.LT:
		return a < b
	case syntax.GT:
		return a > b
	case syntax.LE:
		return a <= b
	case syntax.GE:
		return a >= b
	case syntax.EQL:
		return a == b
	default:
		return a != b
	}
}

// rewriteComparisons rewrites every comparison in f in place, and binds
// the comparison globals first.
func rewriteComparisons(f *syntax.File) {
	f.Stmts = rewriteStmts(f.Stmts)
	none := !bindsNone(f) && renameNoneTests(f)
	f.Stmts = bindComparisons(f.Path, f.Stmts, usedComparisons(f), none)
}

// usedComparisons are the comparison globals the rewritten f calls: only
// those are bound, so a file without comparisons (a vectorised strategy's
// usual top level) sets no global for them each time it loads.
func usedComparisons(f *syntax.File) map[string]bool {
	names := map[string]bool{}
	for _, name := range cmpNames {
		names[name] = false
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if id, ok := n.(*syntax.Ident); ok {
			if _, cmp := names[id.Name]; cmp {
				names[id.Name] = true
			}
		}
		return true
	})
	return names
}

// noneGlobal is the global a file's `x == None` and `x != None` read None
// from, when the file never binds the name None itself: None is otherwise
// a universal name, looked up in a map at every use, and on_bar tests its
// reads for None at every bar.
const noneGlobal = "$None"

// renameNoneTests makes every None operand of == and != read noneGlobal,
// and reports whether there was one.
func renameNoneTests(f *syntax.File) bool {
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		if b, ok := n.(*syntax.BinaryExpr); ok && (b.Op == syntax.EQL || b.Op == syntax.NEQ) {
			for _, x := range [...]syntax.Expr{b.X, b.Y} {
				if isNone(x) {
					x.(*syntax.Ident).Name = noneGlobal
					found = true
				}
			}
		}
		return true
	})
	return found
}

// bindsNone reports whether f binds the name None anywhere (an
// assignment, a def or its parameters, a loop variable, a load): then
// None is the file's own, and its tests stay as written.
func bindsNone(f *syntax.File) bool {
	var bound func(e syntax.Expr) bool
	bound = func(e syntax.Expr) bool {
		switch e := e.(type) {
		case *syntax.Ident:
			return e.Name == "None"
		case *syntax.ParenExpr:
			return bound(e.X)
		case *syntax.TupleExpr:
			return slices.ContainsFunc(e.List, bound)
		case *syntax.ListExpr:
			return slices.ContainsFunc(e.List, bound)
		}
		return false
	}
	param := func(p syntax.Expr) bool {
		switch p := p.(type) {
		case *syntax.BinaryExpr: // name=default
			return bound(p.X)
		case *syntax.UnaryExpr: // *args, **kwargs, or a bare *
			return p.X != nil && bound(p.X)
		}
		return bound(p)
	}
	binds := false
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.AssignStmt:
			binds = binds || bound(n.LHS)
		case *syntax.DefStmt:
			binds = binds || n.Name.Name == "None" || slices.ContainsFunc(n.Params, param)
		case *syntax.LambdaExpr:
			binds = binds || slices.ContainsFunc(n.Params, param)
		case *syntax.ForStmt:
			binds = binds || bound(n.Vars)
		case *syntax.ForClause:
			binds = binds || bound(n.Vars)
		case *syntax.LoadStmt:
			binds = binds || slices.ContainsFunc(n.To, func(id *syntax.Ident) bool { return id.Name == "None" })
		}
		return !binds
	})
	return binds
}

// bindComparisons puts `$lt = $lt.builtin` (and the others used, and
// `$None = None` when none is set) at the start of stmts, after the
// docstring: no statement of the file can run before them, and none can
// rebind them (no identifier in source starts with '$').
func bindComparisons(file string, stmts []syntax.Stmt, used map[string]bool, none bool) []syntax.Stmt {
	at := 0
	if len(stmts) > 0 {
		if es, ok := stmts[0].(*syntax.ExprStmt); ok {
			if lit, ok := es.X.(*syntax.Literal); ok && lit.Token == syntax.STRING {
				at = 1
			}
		}
	}
	names := make([]string, 0, len(cmpNames))
	for _, name := range cmpNames {
		if used[name] {
			names = append(names, name)
		}
	}
	slices.Sort(names) // one order every time
	// At the position of the first statement they precede: the compiler's
	// line table wants valid positions in order.
	pos := syntax.MakePosition(&file, 1, 1)
	if at < len(stmts) {
		pos, _ = stmts[at].Span()
	} else if at > 0 {
		_, pos = stmts[0].Span()
	}
	binds := make([]syntax.Stmt, 0, len(names))
	for _, name := range names {
		binds = append(binds, &syntax.AssignStmt{OpPos: pos, Op: syntax.EQ, LHS: &syntax.Ident{NamePos: pos, Name: name}, RHS: &syntax.Ident{NamePos: pos, Name: name + builtinSuffix}})
	}
	if none {
		binds = append(binds, &syntax.AssignStmt{OpPos: pos, Op: syntax.EQ, LHS: &syntax.Ident{NamePos: pos, Name: noneGlobal}, RHS: &syntax.Ident{NamePos: pos, Name: "None"}})
	}
	return slices.Concat(stmts[:at], binds, stmts[at:])
}

func rewriteStmts(stmts []syntax.Stmt) []syntax.Stmt {
	for _, s := range stmts {
		rewriteStmt(s)
	}
	return stmts
}

func rewriteStmt(s syntax.Stmt) {
	switch s := s.(type) {
	case *syntax.AssignStmt:
		s.LHS = rewriteExpr(s.LHS)
		s.RHS = rewriteExpr(s.RHS)
	case *syntax.DefStmt:
		s.Params = rewriteExprs(s.Params)
		rewriteStmts(s.Body)
	case *syntax.ExprStmt:
		s.X = rewriteExpr(s.X)
	case *syntax.ForStmt:
		s.Vars = rewriteExpr(s.Vars)
		s.X = rewriteExpr(s.X)
		rewriteStmts(s.Body)
	case *syntax.WhileStmt:
		s.Cond = rewriteExpr(s.Cond)
		rewriteStmts(s.Body)
	case *syntax.IfStmt:
		s.Cond = rewriteExpr(s.Cond)
		rewriteStmts(s.True)
		rewriteStmts(s.False)
	case *syntax.ReturnStmt:
		if s.Result != nil {
			s.Result = rewriteExpr(s.Result)
		}
	case *syntax.LoadStmt, *syntax.BranchStmt:
	}
}

func isNone(e syntax.Expr) bool {
	id, ok := e.(*syntax.Ident)
	return ok && id.Name == "None"
}

func rewriteExprs(xs []syntax.Expr) []syntax.Expr {
	for i, x := range xs {
		xs[i] = rewriteExpr(x)
	}
	return xs
}

func rewriteExpr(e syntax.Expr) syntax.Expr {
	switch e := e.(type) {
	case nil:
		return nil
	case *syntax.BinaryExpr:
		e.X = rewriteExpr(e.X)
		e.Y = rewriteExpr(e.Y)
		if (e.Op == syntax.EQL || e.Op == syntax.NEQ) && (isNone(e.X) || isNone(e.Y)) {
			// x == None stays native: a series is never None, and on_bar
			// code tests values for None on every bar.
			return e
		}
		if name, ok := cmpNames[e.Op]; ok {
			return &syntax.CallExpr{
				Fn:     &syntax.Ident{NamePos: e.OpPos, Name: name},
				Lparen: e.OpPos,
				Args:   []syntax.Expr{e.X, e.Y},
				Rparen: syntax.End(e.Y),
			}
		}
		return e
	case *syntax.CallExpr:
		e.Fn = rewriteExpr(e.Fn)
		for i, a := range e.Args {
			// Keyword arguments are BinaryExpr{Op: EQ}; keep the name, rewrite the value.
			if b, ok := a.(*syntax.BinaryExpr); ok && b.Op == syntax.EQ {
				b.Y = rewriteExpr(b.Y)
				continue
			}
			e.Args[i] = rewriteExpr(a)
		}
		return e
	case *syntax.Comprehension:
		e.Body = rewriteExpr(e.Body)
		for _, c := range e.Clauses {
			switch c := c.(type) {
			case *syntax.ForClause:
				c.Vars = rewriteExpr(c.Vars)
				c.X = rewriteExpr(c.X)
			case *syntax.IfClause:
				c.Cond = rewriteExpr(c.Cond)
			}
		}
		return e
	case *syntax.CondExpr:
		e.Cond = rewriteExpr(e.Cond)
		e.True = rewriteExpr(e.True)
		e.False = rewriteExpr(e.False)
		return e
	case *syntax.DictEntry:
		e.Key = rewriteExpr(e.Key)
		e.Value = rewriteExpr(e.Value)
		return e
	case *syntax.DictExpr:
		e.List = rewriteExprs(e.List)
		return e
	case *syntax.DotExpr:
		e.X = rewriteExpr(e.X)
		return e
	case *syntax.IndexExpr:
		e.X = rewriteExpr(e.X)
		e.Y = rewriteExpr(e.Y)
		return e
	case *syntax.LambdaExpr:
		e.Params = rewriteExprs(e.Params)
		e.Body = rewriteExpr(e.Body)
		return e
	case *syntax.ListExpr:
		e.List = rewriteExprs(e.List)
		return e
	case *syntax.ParenExpr:
		e.X = rewriteExpr(e.X)
		return e
	case *syntax.SliceExpr:
		e.X = rewriteExpr(e.X)
		e.Lo = rewriteExpr(e.Lo)
		e.Hi = rewriteExpr(e.Hi)
		e.Step = rewriteExpr(e.Step)
		return e
	case *syntax.TupleExpr:
		e.List = rewriteExprs(e.List)
		return e
	case *syntax.UnaryExpr:
		e.X = rewriteExpr(e.X)
		return e
	}
	return e
}
