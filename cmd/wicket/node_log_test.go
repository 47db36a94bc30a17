package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wicket/internal/project"
)

// TestNodeServeLogFile: with --log FILE the node's log lines go to FILE,
// and stderr keeps only the line that says where it listens (and where it
// logs).
func TestNodeServeLogFile(t *testing.T) {
	t.Setenv(project.KeyObserve, "")
	t.Setenv(project.KeyControl, "")
	dir := t.TempDir()
	if _, err := project.Init(dir, rand.Reader); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "settings", "state", "node.log")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pr, pw := io.Pipe()
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"wicket", "--project", dir, "node", "serve", "--listen", "127.0.0.1:0", "--tick", "0", "--log", logPath},
			strings.NewReader(""), io.Discard, pw)
		pw.Close()
	}()
	var stderr []string
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		stderr = append(stderr, sc.Text())
		if strings.HasPrefix(sc.Text(), "wicket node: listening on ") {
			break
		}
	}
	go io.Copy(io.Discard, pr)
	cancel()
	if got := <-code; got != 0 {
		t.Fatalf("exit %d; stderr %q", got, stderr)
	}
	if len(stderr) != 2 || stderr[0] != "wicket node: logging to "+logPath {
		t.Errorf("stderr %q, want the log file named, then the listening line", stderr)
	}
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"msg=\"new journal\"", "msg=\"node ready\"", "msg=\"node stopped\""} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the log file does not hold %s:\n%s", want, data)
		}
	}
	if fi, err := os.Stat(logPath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("log file mode %v, %v; want 0600", fi.Mode(), err)
	}
}
