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

// testHelpers are the module's test-helper packages, besides the venue
// fakes (every package whose name ends in "fake"). They fail tests through
// testing.TB, make keys up and run fake venues; they may import one
// another, and only _test.go files may import them.
var testHelpers = map[string]bool{
	"wicket/internal/testkit":               true,
	"wicket/internal/testcert":              true,
	"wicket/node/venuerig":                  true,
	"wicket/node/nodetest":                  true,
	"wicket/node/venuetest":                 true,
	"wicket/strategy/clustertest":           true,
	"wicket/strategy/history/historytest":   true,
	"wicket/strategy/provider/providertest": true,
}

// testSupport says whether a package is one of the module's test helpers.
func testSupport(importPath string) bool {
	return testHelpers[importPath] || (strings.HasPrefix(importPath, "wicket/") && strings.HasSuffix(importPath, "fake"))
}

// testSupportLeaks lists each import of a test helper by code that is not
// itself a test helper (go list's Imports leave _test.go files out).
func testSupportLeaks(pkgs []goPackage) []string {
	var leaks []string
	for _, p := range pkgs {
		if testSupport(p.ImportPath) {
			continue
		}
		for _, imp := range p.Imports {
			if testSupport(imp) {
				leaks = append(leaks, p.ImportPath+" imports "+imp)
			}
		}
	}
	return leaks
}

// TestTestSupportOnlyInTests: the binary's own code never imports the
// test kit, the venue rig or any other test helper.
func TestTestSupportOnlyInTests(t *testing.T) {
	pkgs := modulePackages(t)
	have := map[string]bool{}
	for _, p := range pkgs {
		have[p.ImportPath] = true
	}
	for h := range testHelpers {
		if !have[h] {
			t.Errorf("test helper %s is not a package of the module: drop it from testHelpers", h)
		}
	}
	for _, leak := range testSupportLeaks(pkgs) {
		t.Errorf("%s outside its _test.go files: the test helpers are for tests only", leak)
	}
	// The check itself: a command importing the rig is caught, a rig
	// importing the kit is not.
	planted := []goPackage{
		{ImportPath: "wicket/node/server", Imports: []string{"wicket/node/venuerig"}},
		{ImportPath: "wicket/node/venuerig", Imports: []string{"wicket/internal/testkit"}},
	}
	if got := testSupportLeaks(planted); len(got) != 1 || got[0] != "wicket/node/server imports wicket/node/venuerig" {
		t.Errorf("the check found %q in a planted tree", got)
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
