package main

import (
	"bytes"
	"crypto/rand"
	"net"
	"strings"
	"testing"

	"wicket/internal/project"
)

// TestNodeServeBusyPort (issue 31, item 13): on a port another process
// holds, `wicket node serve` says to set wicket.toml's [node] address,
// where every command reads it, not --listen (which moves this node alone).
func TestNodeServeBusyPort(t *testing.T) {
	t.Setenv(project.KeyObserve, "")
	t.Setenv(project.KeyControl, "")
	dir := t.TempDir()
	if _, err := project.Init(dir, rand.Reader); err != nil {
		t.Fatal(err)
	}
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	var stderr bytes.Buffer
	code := run(t.Context(), []string{"wicket", "--project", dir, "node", "serve", "--listen", held.Addr().String(), "--tick", "0"},
		strings.NewReader(""), &bytes.Buffer{}, &stderr)
	msg := stderr.String()
	if code == 0 || !strings.Contains(msg, "address already in use") || !strings.Contains(msg, "wicket.toml's [node] address") || strings.Contains(msg, "--listen") {
		t.Fatalf("node serve on a held port: exit %d, stderr %q; want the [node] address advice", code, msg)
	}
}
