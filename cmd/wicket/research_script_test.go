package main

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdJSONDrop is the script command `jsondrop SRC DST KEY...`: it writes
// the JSON object in SRC ("stdout": the last command's) to DST without the
// top-level KEYs, so two runs that differ only in them (a run id, the
// research ledger's growing count) compare equal with cmp.
func cmdJSONDrop(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: jsondrop SRC DST KEY...")
	}
	var m map[string]json.RawMessage
	ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[0])), &m))
	for _, k := range args[2:] {
		if _, ok := m[k]; !ok {
			ts.Fatalf("jsondrop: %s has no key %q", args[0], k)
		}
		delete(m, k)
	}
	b, err := json.Marshal(m)
	ts.Check(err)
	// Each run draws its own lookahead proof seed, which its verdicts name.
	b = regexp.MustCompile(`seed [0-9a-f]{16}`).ReplaceAll(b, []byte("seed S"))
	var out bytes.Buffer
	ts.Check(json.Indent(&out, b, "", "  "))
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), append(out.Bytes(), '\n'), 0o644))
}
