package project

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func strategyProject(t *testing.T) Project {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "strategies"), 0o755); err != nil {
		t.Fatal(err)
	}
	return Project{Root: root}
}

func TestReadStrategy(t *testing.T) {
	p := strategyProject(t)
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(p.StrategiesDir(), name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("ok.star", "def signals(bars):\n    pass\n")
	text, size, err := p.ReadStrategy("ok")
	if err != nil || !strings.HasPrefix(text, "def signals") || size != int64(len(text)) {
		t.Fatalf("%q %d %v", text, size, err)
	}
	// A symlink that stays inside the project is followed.
	if runtime.GOOS != "windows" {
		if err := os.Symlink("ok.star", filepath.Join(p.StrategiesDir(), "alias.star")); err != nil {
			t.Fatal(err)
		}
		if text, _, err := p.ReadStrategy("alias"); err != nil || !strings.HasPrefix(text, "def signals") {
			t.Fatalf("in-project symlink: %q %v", text, err)
		}
	}
	if _, _, err := p.ReadStrategy("missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing: %v, want fs.ErrNotExist", err)
	}
	for _, bad := range []string{"../secrets", "a/b", "", "a b"} {
		if _, _, err := p.ReadStrategy(bad); err == nil || !strings.Contains(err.Error(), "invalid strategy name") {
			t.Errorf("%q: %v, want the name refused", bad, err)
		}
	}
	if _, _, err := (Project{}).ReadStrategy("ok"); !errors.Is(err, ErrNoProject) {
		t.Errorf("no project: %v", err)
	}
}

func TestReadStrategyRefusals(t *testing.T) {
	p := strategyProject(t)
	dir := p.StrategiesDir()

	// Over the size bound (sparse: the size is what counts).
	big, err := os.Create(filepath.Join(dir, "big.star"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(MaxStrategyBytes + 1); err != nil {
		t.Fatal(err)
	}
	big.Close()
	if _, size, err := p.ReadStrategy("big"); err == nil || !strings.Contains(err.Error(), "larger than 1024 KiB") || size != MaxStrategyBytes+1 {
		t.Errorf("oversize: %d %v", size, err)
	}
	// Exactly at the bound is fine.
	if err := os.Truncate(filepath.Join(dir, "big.star"), MaxStrategyBytes); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.ReadStrategy("big"); err != nil {
		t.Errorf("at the bound: %v", err)
	}

	// A directory.
	if err := os.Mkdir(filepath.Join(dir, "dir.star"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.ReadStrategy("dir"); err == nil || !strings.Contains(err.Error(), "not a regular file (a directory)") {
		t.Errorf("directory: %v", err)
	}
	if runtime.GOOS == "windows" {
		return
	}

	// A symlink out of the project, to a readable file and to a device.
	outside := filepath.Join(t.TempDir(), "outside.star")
	if err := os.WriteFile(outside, []byte("def signals(bars):\n    pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"out": outside, "dev": "/dev/zero", "up": "../../" + filepath.Base(filepath.Dir(outside))} {
		if err := os.Symlink(target, filepath.Join(dir, name+".star")); err != nil {
			t.Fatal(err)
		}
		if _, _, err := p.ReadStrategy(name); err == nil || !strings.Contains(err.Error(), "inside the project") {
			t.Errorf("symlink to %s: %v, want refused as outside the project", target, err)
		}
	}
	// The strategies directory itself a symlink out of the project.
	q := Project{Root: t.TempDir()}
	if err := os.Symlink(filepath.Dir(outside), filepath.Join(q.Root, "strategies")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := q.ReadStrategy("outside"); err == nil || !strings.Contains(err.Error(), "inside the project") {
		t.Errorf("strategies/ linked out: %v", err)
	}

	refuseFIFO(t, p)
	// The same rules for a FILE the operator names.
	if _, _, err := ReadStrategyFile("/dev/zero"); err == nil || !strings.Contains(err.Error(), "a character device") {
		t.Errorf("device by path: %v", err)
	}
	if text, _, err := ReadStrategyFile(outside); err != nil || text == "" {
		t.Errorf("a plain file by path: %v", err)
	}
}
