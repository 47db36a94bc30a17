package main

import (
	"bytes"
	"encoding/json"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

type goPackage struct {
	ImportPath string
	Dir        string
	Name       string
	GoFiles    []string
	Imports    []string
}

// modulePackages lists every package of the module with `go list`.
func modulePackages(t *testing.T) []goPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "wicket/...")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v: %s", err, errb.String())
	}
	var pkgs []goPackage
	dec := json.NewDecoder(&out)
	for {
		var p goPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		t.Fatal("go list found no packages")
	}
	return pkgs
}

// area is the top-level folder a package belongs to.
func area(importPath string) string {
	rest := strings.TrimPrefix(importPath, "wicket/")
	first, _, _ := strings.Cut(rest, "/")
	return first
}

// TestDependencyDirection enforces the spec's layering:
// cmd → agent → {gate, trace, node, strategy}; cmd → deploy → {node,
// strategy}; gate, trace, node and strategy never import agent, deploy or
// cmd; deploy never imports agent or cmd; node and strategy never import
// each other; internal packages import no domain package.
func TestDependencyDirection(t *testing.T) {
	forbidden := map[string][]string{
		"gate":     {"agent", "cmd", "deploy", "node", "strategy", "trace"},
		"trace":    {"agent", "cmd", "deploy", "node", "strategy", "gate"},
		"node":     {"agent", "cmd", "deploy", "strategy"},
		"strategy": {"agent", "cmd", "deploy", "node"},
		"deploy":   {"agent", "cmd"},
		"agent":    {"cmd"},
		"internal": {"agent", "cmd", "deploy", "gate", "trace", "node", "strategy"},
	}
	for _, p := range modulePackages(t) {
		from := area(p.ImportPath)
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, "wicket/") {
				continue
			}
			to := area(imp)
			for _, f := range forbidden[from] {
				if to == f {
					t.Errorf("%s imports %s: %s must never import %s", p.ImportPath, imp, from, to)
				}
			}
		}
	}
}

// TestTestkitOnlyInTests: internal/testkit fails tests through
// testing.TB and makes keys up; only _test.go files may import it, never
// the binary's own code (go list's Imports leave test files out).
func TestTestkitOnlyInTests(t *testing.T) {
	const testkit = "wicket/internal/testkit"
	for _, p := range modulePackages(t) {
		if p.ImportPath == testkit {
			continue
		}
		for _, imp := range p.Imports {
			if imp == testkit {
				t.Errorf("%s imports %s outside its _test.go files: the test helpers are for tests only", p.ImportPath, imp)
			}
		}
	}
}

// TestEveryPackageHasDoc requires a package comment that says what the
// package is for and what it must never do.
func TestEveryPackageHasDoc(t *testing.T) {
	for _, p := range modulePackages(t) {
		doc := strings.ToLower(packageDoc(t, p))
		if strings.TrimSpace(doc) == "" {
			t.Errorf("package %s has no doc comment", p.ImportPath)
			continue
		}
		if p.Name != "main" && !strings.Contains(doc, "never") && !strings.Contains(doc, "must not") {
			t.Errorf("package %s doc does not say what it must never do", p.ImportPath)
		}
	}
}

// packageDoc returns the package comments of p's files, joined.
func packageDoc(t *testing.T, p goPackage) string {
	t.Helper()
	var b strings.Builder
	fset := token.NewFileSet()
	for _, f := range p.GoFiles {
		file, err := parser.ParseFile(fset, filepath.Join(p.Dir, f), nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if file.Doc != nil {
			b.WriteString(file.Doc.Text())
		}
	}
	return b.String()
}
