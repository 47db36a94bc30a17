package main

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wicket/internal/project"
)

// TestBacktestOutputFiles is issue 44's item 6: `backtest --report
// settings/secrets.env` replaced the node keys. --report and --plot
// refuse an existing file unless --force, and never write under
// settings/, --force or not, through a symbolic link or not; a refusal
// comes before anything runs and loses nothing.
func TestBacktestOutputFiles(t *testing.T) {
	dir := t.TempDir()
	if _, err := project.Init(dir, rand.Reader); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := wicketIn(t, dir, "data", "seed-demo"); code != 0 {
		t.Fatalf("seed-demo: exit %d: %s", code, stderr)
	}
	secrets := filepath.Join(dir, "settings", "secrets.env")
	kept, err := os.ReadFile(secrets)
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	link := filepath.Join(outside, "into-settings")
	if err := os.Symlink(filepath.Join(dir, "settings"), link); err != nil {
		t.Fatal(err)
	}
	existing := filepath.Join(outside, "sheet.html")
	if err := os.WriteFile(existing, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := []string{"backtest", "--local", "sma_cross", "--series", "BTC-USD@1d", "--from", "2023-01-01"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--report", secrets}, "is under the project's settings/"},
		{[]string{"--report", secrets, "--force"}, "is under the project's settings/"},
		{[]string{"--plot", filepath.Join(dir, "settings", "state", "chart.png")}, "is under the project's settings/"},
		{[]string{"--plot", filepath.Join(link, "secrets.env"), "--force"}, "is under the project's settings/"},
		{[]string{"--plot", filepath.Join(link, "new.png")}, "is under the project's settings/"},
		{[]string{"--report", existing}, "already exists: choose another file, or add --force"},
	} {
		code, _, stderr := wicketIn(t, dir, append(run, tc.args...)...)
		if code == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d: %s; want a refusal %q", tc.args, code, stderr, tc.want)
		}
	}
	if b, _ := os.ReadFile(secrets); string(b) != string(kept) {
		t.Fatal("settings/secrets.env was changed")
	}
	if b, _ := os.ReadFile(existing); string(b) != "mine" {
		t.Fatal("an existing file was replaced without --force")
	}
	if _, err := os.Stat(filepath.Join(dir, "settings", "state", "chart.png")); err == nil {
		t.Fatal("a chart was written under settings/")
	}
	code, _, stderr := wicketIn(t, dir, append(run, "--report", existing, "--force")...)
	if code != 0 {
		t.Fatalf("--force: exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(existing); !strings.HasPrefix(string(b), "<!DOCTYPE html>") {
		t.Errorf("--force did not replace the file: %.60s", b)
	}
}
