package main

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"wicket/internal/project"
)

// TestRotateOperatorKeyCommand is issue 44's item 3 through the command:
// a node pins the operator key at its first start; with a new pair in
// settings/ it refuses to start, `wicket node rotate-operator-key`
// refuses a pipe without --old-key, and with the old key signs the
// change, after which the node starts.
func TestRotateOperatorKeyCommand(t *testing.T) {
	dir := t.TempDir()
	p, err := project.Init(dir, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	node, _ := startNode(t, dir) // pins the key
	_ = node.Process.Signal(syscall.SIGTERM)
	_ = node.Wait()

	old := filepath.Join(t.TempDir(), "old-operator.key")
	b, err := os.ReadFile(p.OperatorKeyPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(old, b, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{p.OperatorKeyPath(), p.OperatorPublicPath()} {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := project.InitOperatorKey(p, rand.Reader); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := wicketIn(t, dir, "node", "serve", "--listen", "127.0.0.1:0"); code == 0 || !strings.Contains(stderr, "is not the operator key this node's journal pinned") {
		t.Fatalf("node serve with a new operator.pub: exit %d: %s", code, stderr)
	}
	if code, _, stderr := wicketIn(t, dir, "node", "rotate-operator-key"); code == 0 || !strings.Contains(stderr, "needs an interactive terminal") {
		t.Errorf("rotate-operator-key from a pipe: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := wicketIn(t, dir, "node", "rotate-operator-key", "--old-key", old)
	if code != 0 || !strings.Contains(stdout, "the node's operator key is now") {
		t.Fatalf("rotate-operator-key --old-key: exit %d: %s %s", code, stdout, stderr)
	}
	startNode(t, dir) // fails the test unless it listens
}
