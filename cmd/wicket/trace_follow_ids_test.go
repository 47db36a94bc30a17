package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"wicket/trace"
)

// TestTraceFollowTellsSessionsApart: follow cannot know which sessions will
// appear, so it shows enough of each id to tell apart two sessions started
// the same minute (time-ordered ids that share their first 8 characters).
func TestTraceFollowTellsSessionsApart(t *testing.T) {
	dir := t.TempDir()
	w, err := trace.Open(dir, trace.Options{Now: func() time.Time { return time.Date(2026, 5, 14, 9, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	const s1, s2 = "0198f0a2-7c1e-7a00-9a51-5b0c3d2e1f00", "0198f0a2-9d3f-7b00-8000-00000000beef"
	w.Write(trace.Entry{Session: s1, Seq: 1, Tool: "list_series", Profile: "full", Verdict: trace.OK, MS: 1})
	w.Write(trace.Entry{Session: s2, Seq: 1, Tool: "list_series", Profile: "full", Verdict: trace.OK, MS: 1})

	stdout := &lineWriter{lines: make(chan string, 100)}
	var stderr bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	code := make(chan int)
	go func() {
		code <- run(ctx, []string{"wicket", "trace", "follow", "--dir", dir, "--poll", "1ms", "--since", "2026-05-01"}, strings.NewReader(""), stdout, &stderr)
	}()
	header, one, two := stdout.next(t), stdout.next(t), stdout.next(t)
	cancel()
	if c := <-code; c != 0 {
		t.Fatalf("exit %d, stderr %s", c, stderr.String())
	}
	if !strings.Contains(one, s1[:13]) || !strings.Contains(two, s2[:13]) {
		t.Errorf("follow does not tell the sessions apart:\n%s\n%s\n%s", header, one, two)
	}
	if strings.Index(header, "TOOL") != strings.Index(one, "list_series") {
		t.Errorf("columns do not line up:\n%s\n%s", header, one)
	}
}
