package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// wicket runs the CLI in-process and returns exit code, stdout and stderr.
func wicket(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append([]string{"wicket"}, args...), strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestExitCodes(t *testing.T) {
	t.Setenv("WICKET_PROJECT", "")
	t.Chdir(t.TempDir())
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"help", []string{"--help"}, exitOK, ""},
		{"no args shows help", nil, exitOK, ""},
		{"version", []string{"--version"}, exitOK, ""},
		{"unknown command", []string{"frobnicate"}, exitUsage, "wicket: unknown command \"frobnicate\"; valid: approve, backtest, "},
		{"unknown command in a group", []string{"trace", "tail"}, exitUsage, "wicket trace: unknown command \"tail\"; valid: "},
		{"unknown flag", []string{"--frob"}, exitUsage, "flag provided but not defined"},
		{"unknown subcommand", []string{"secrets", "show"}, exitUsage, `valid: list, path`},
		{"missing subcommand", []string{"secrets"}, exitUsage, "needs a subcommand: list, path"},
		{"subcommand flag", []string{"secrets", "list", "--nope"}, exitUsage, "flag provided but not defined: -nope"},
		{"init too many args", []string{"init", "a", "b"}, exitUsage, "at most one DIR"},
		{"no project", []string{"secrets", "list"}, exitFailure, "create one with `wicket init`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := wicket(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tt.code, stderr)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr %q does not contain %q", stderr, tt.stderr)
			}
			if strings.Contains(stderr, "wicket: wicket") {
				t.Errorf("stderr names wicket twice: %q", stderr)
			}
			if tt.code != exitOK && strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("stderr is not one line: %q", stderr)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	code, stdout, _ := wicket(t, "--version")
	if code != 0 || !strings.HasPrefix(stdout, "wicket version ") {
		t.Fatalf("--version: code %d, stdout %q", code, stdout)
	}
}

// TestEveryCommandHasHelp walks the whole command tree.
func TestEveryCommandHasHelp(t *testing.T) {
	app := newApp(nil, &bytes.Buffer{}, &bytes.Buffer{})
	var walk func(path []string, cmds []*cli.Command)
	walk = func(path []string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Hidden {
				continue
			}
			p := append(append([]string{}, path...), c.Name)
			if c.Usage == "" {
				t.Errorf("wicket %s has no usage line", strings.Join(p, " "))
			}
			code, stdout, stderr := wicket(t, append(p, "--help")...)
			if code != 0 || !strings.Contains(stdout, c.Name) {
				t.Errorf("wicket %s --help: code %d, stdout %q, stderr %q", strings.Join(p, " "), code, stdout, stderr)
			}
			walk(p, c.Subcommands)
		}
	}
	walk(nil, app.Commands)
}

func TestInitAndSecretsNeverPrintValues(t *testing.T) {
	t.Setenv("WICKET_PROJECT", "")
	t.Setenv("WICKET_NODE_OBSERVE_KEY", "")
	t.Setenv("WICKET_NODE_CONTROL_KEY", "")
	t.Setenv("WICKET_DATA_TOKEN", "")
	dir := filepath.Join(t.TempDir(), "proj")
	if code, _, stderr := wicket(t, "init", dir); code != 0 {
		t.Fatalf("init: %d %s", code, stderr)
	}
	fi, err := os.Stat(filepath.Join(dir, "settings", "secrets.env"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("secrets.env mode %04o, want 0600", fi.Mode().Perm())
	}
	secrets, err := os.ReadFile(filepath.Join(dir, "settings", "secrets.env"))
	if err != nil {
		t.Fatal(err)
	}
	var values []string
	for _, line := range strings.Split(string(secrets), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(k, "#") {
			values = append(values, v)
		}
	}
	if len(values) < 2 {
		t.Fatalf("secrets.env holds %d keys", len(values))
	}
	for _, args := range [][]string{
		{"--project", dir, "secrets", "list"},
		{"--project", dir, "secrets", "list", "--json"},
		{"--project", dir, "secrets", "path"},
	} {
		code, stdout, stderr := wicket(t, args...)
		if code != 0 {
			t.Fatalf("%v: code %d: %s", args, code, stderr)
		}
		for _, v := range values {
			if strings.Contains(stdout+stderr, v) {
				t.Errorf("%v printed a secret value", args)
			}
		}
	}
	// A second init into the same folder is refused and changes nothing.
	code, _, stderr := wicket(t, "init", dir)
	if code != exitFailure || !strings.Contains(stderr, "already exists") {
		t.Errorf("second init: code %d, stderr %q", code, stderr)
	}
	again, _ := os.ReadFile(filepath.Join(dir, "settings", "secrets.env"))
	if !bytes.Equal(again, secrets) {
		t.Error("second init changed secrets.env")
	}
}
