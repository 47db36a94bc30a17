package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// The commands' run functions work without the cli: these call them with
// options and buffers, as a test of one command's logic can.

func TestRunInitAndSecretsPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "proj")
	var out, errb bytes.Buffer
	if err := runInit(context.Background(), initOptions{dir: dir}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "created wicket project in ") || errb.Len() != 0 {
		t.Fatalf("stdout %q stderr %q", out.String(), errb.String())
	}
	err := runInit(context.Background(), initOptions{dir: dir}, &out, &errb)
	if err == nil {
		t.Fatal("a second init over the same project succeeded")
	}
	out.Reset()
	if err := runSecretsPath(context.Background(), secretsOptions{project: dir}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(out.String()); !strings.HasSuffix(got, filepath.Join("settings", "secrets.env")) {
		t.Errorf("secrets path = %q", got)
	}
}

func TestRunIndicatorsAndMCPConfig(t *testing.T) {
	var out, errb bytes.Buffer
	o := indicatorsOptions{project: filepath.Join(t.TempDir(), "none"), category: "nope"}
	var ue usageError
	if err := runIndicators(context.Background(), o, &out, &errb); !errors.As(err, &ue) || !strings.Contains(err.Error(), "or user") {
		t.Fatalf("an unknown category: %v", err)
	}
	o.category, o.name = "", "sma"
	if err := runIndicators(context.Background(), o, &out, &errb); err != nil || !strings.Contains(out.String(), "sma(") {
		t.Fatalf("sma: %v\n%s", err, out.String())
	}
	out.Reset()
	c := mcpConfigOptions{http: "127.0.0.1:8765", name: "wicket", tokenEnv: "WICKET_MCP_TOKEN", set: map[string]bool{}}
	if err := runMCPConfig(context.Background(), c, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"url": "http://127.0.0.1:8765/mcp"`) || !strings.Contains(out.String(), "${WICKET_MCP_TOKEN}") {
		t.Errorf("http block:\n%s", out.String())
	}
	c.set["no-trace"] = true
	if err := runMCPConfig(context.Background(), c, &out, &errb); !errors.As(err, &ue) {
		t.Errorf("--no-trace with --http: %v", err)
	}
}

func TestRunDataCommands(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "proj")
	var out, errb bytes.Buffer
	if err := runInit(context.Background(), initOptions{dir: dir}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := runDataList(context.Background(), dataListOptions{project: dir}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if out.Len() != 0 || !strings.Contains(errb.String(), "no series yet") {
		t.Errorf("an empty store: stdout %q stderr %q", out.String(), errb.String())
	}
	var ue usageError
	o := dataImportOptions{project: dir, file: "x.csv", series: "BTC-USD@7m", format: "auto", tz: "UTC", maxSize: "1MiB"}
	if err := runDataImport(context.Background(), o, &out, &errb); !errors.As(err, &ue) || !strings.Contains(err.Error(), "--series") {
		t.Errorf("a bad granularity: %v", err)
	}
	if err := runDataDelete(context.Background(), dataDeleteOptions{project: dir, series: "nope"}, &out, &errb); !errors.As(err, &ue) {
		t.Errorf("a bad series name: %v", err)
	}
}

func TestRunStrategyCommands(t *testing.T) {
	var out, errb bytes.Buffer
	if err := runTemplates(context.Background(), templatesOptions{name: "sma_cross"}, &out, &errb); err != nil || !strings.Contains(out.String(), "def ") {
		t.Fatalf("sma_cross source: %v\n%s", err, out.String())
	}
	dir := filepath.Join(t.TempDir(), "proj")
	if err := runInit(context.Background(), initOptions{dir: dir}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	o := newStrategyOptions{project: dir, name: "mine", from: "sma_cross"}
	if err := runNewStrategy(context.Background(), o, &out, &errb); err != nil || !strings.Contains(out.String(), "created strategies/mine.star from template sma_cross") {
		t.Fatalf("new: %v\n%s", err, out.String())
	}
	if err := runNewStrategy(context.Background(), o, &out, &errb); err == nil || !strings.Contains(err.Error(), "never overwritten") {
		t.Errorf("a second new over mine: %v", err)
	}
}

// TestRunTemplatesListsPortfolios: the template list has a UNIVERSE
// column: a portfolio template's style is portfolio, with its universe
// and rebalance schedule; a single-series one has none.
func TestRunTemplatesListsPortfolios(t *testing.T) {
	var out, errb bytes.Buffer
	if err := runTemplates(context.Background(), templatesOptions{}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if f := strings.Fields(lines[0]); len(f) != 5 || f[2] != "UNIVERSE" {
		t.Fatalf("header %q", lines[0])
	}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		rows[f[0]] = f
	}
	for name, want := range map[string][]string{
		"equal_weight": {"portfolio", "*-USD@1d", "weekly"}, "pairs_zscore": {"portfolio", "BTC-USD@1d,ETH-USD@1d", "bar"},
		"sma_cross": {"signals", "-"},
	} {
		if got := rows[name]; len(got) < len(want)+1 || strings.Join(got[1:len(want)+1], " ") != strings.Join(want, " ") {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}

func TestRunMCPCheck(t *testing.T) {
	var out, errb bytes.Buffer
	o := mcpOptions{
		project: filepath.Join(t.TempDir(), "none"), profile: "read-only", deny: []string{"run_sweep"}, check: true,
		loop: mcpLoopOptions{maxWrites: 3, set: map[string]bool{"max-writes": true}},
	}
	if err := runMCP(context.Background(), o, &out, &errb); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"profile: read-only", "deny-tool: run_sweep", "approval: none", "budgets: "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--check lacks %q:\n%s", want, out.String())
		}
	}
	o.loop.maxWrites = -1
	var ue usageError
	if err := runMCP(context.Background(), o, &out, &errb); !errors.As(err, &ue) {
		t.Errorf("a negative --max-writes: %v", err)
	}
}
