package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"wicket/internal/project"
	"wicket/node/nodetest"
)

// cmdDeadnode sets $DEADNODE to a loopback address where nothing listens,
// held for the rest of the script (nodetest.DeadAddr): scripts say "no
// node there" with it rather than with a fixed port that something on the
// machine may be using.
func cmdDeadnode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: deadnode")
	}
	tb, ok := ts.Value(scriptTBKey{}).(testing.TB)
	if !ok {
		ts.Fatalf("deadnode: the script has no testing.TB (Setup stores it)")
	}
	ts.Setenv("DEADNODE", nodetest.DeadAddr(tb))
}

// cmdNodeaddr points the wicket.toml in the current directory at ADDR
// (its [node] address, as `wicket init` wrote it).
func cmdNodeaddr(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: nodeaddr HOST:PORT")
	}
	path := ts.MkAbs(project.ConfigFile)
	data, err := os.ReadFile(path)
	ts.Check(err)
	from := []byte(`address = "` + project.DefaultNodeAddress + `"`)
	if !bytes.Contains(data, from) {
		ts.Fatalf("nodeaddr: %s has no %s", path, from)
	}
	data = bytes.Replace(data, from, []byte(`address = "`+args[0]+`"`), 1)
	ts.Check(os.WriteFile(path, data, 0o644))
}
