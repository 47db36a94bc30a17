// Command crosscheck type-checks every package of the module, tests
// included, for each GOOS/GOARCH it is given, from source and without
// generating code or linking, so `make test` catches a Linux-only call in
// shared code in seconds rather than compiling the whole dependency graph
// five more times.
//
// It only reads: it never writes a file, never runs a build, and never
// reaches the network (modules come from the local module cache).
//
// Usage: go run ./internal/crosscheck [-p PATTERN] GOOS/GOARCH...
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"sort"
	"strings"
	"time"

	"golang.org/x/tools/go/packages"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "crosscheck:", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

var errUsage = errors.New("usage: crosscheck [-p PATTERN] GOOS/GOARCH [GOOS/GOARCH]")

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("crosscheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	pattern := fs.String("p", "./...", "the packages to check")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() == 0 {
		return errUsage
	}
	failed := 0
	for _, target := range fs.Args() {
		goos, goarch, ok := strings.Cut(target, "/")
		if !ok || goos == "" || goarch == "" {
			return fmt.Errorf("%q is not GOOS/GOARCH (say linux/arm64): %w", target, errUsage)
		}
		start := time.Now()
		problems, n, err := check(ctx, *pattern, goos, goarch)
		if err != nil {
			return fmt.Errorf("%s: %w", target, err)
		}
		for _, p := range problems {
			fmt.Fprintf(stdout, "%s: %s\n", target, p)
		}
		fmt.Fprintf(stdout, "type-checked %d packages for %s in %.1fs: %d problems\n", n, target, time.Since(start).Seconds(), len(problems))
		failed += len(problems)
		runtime.GC()
	}
	if failed > 0 {
		return fmt.Errorf("%d problems", failed)
	}
	return nil
}

// check loads the pattern's packages and their tests for one target from
// source and returns every error found, sorted, and how many of the
// module's packages it checked.
func check(ctx context.Context, pattern, goos, goarch string) ([]string, int, error) {
	cfg := &packages.Config{
		Context: ctx,
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedImports | packages.NeedDeps |
			packages.NeedTypes | packages.NeedSyntax | packages.NeedTypesInfo,
		Tests: true,
		Env:   append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0"),
	}
	roots, err := packages.Load(cfg, pattern)
	if err != nil {
		return nil, 0, err
	}
	seen := map[string]bool{}
	var problems []string
	packages.Visit(roots, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			msg := e.Error()
			if !seen[msg] {
				seen[msg] = true
				problems = append(problems, msg)
			}
		}
	})
	sort.Strings(problems)
	return problems, len(roots), nil
}
