package trade

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/chzyer/readline"

	"wicket/internal/project"
	"wicket/node"
	"wicket/node/command"
)

// editedSession runs a REPL whose lines are edited by readline from keys
// (raw bytes, as a terminal sends them) and returns what it wrote.
func editedSession(t *testing.T, f *fakeNode, keys string) (string, string, error) {
	t.Helper()
	var out, errw bytes.Buffer
	stdin := readline.NewCancelableStdin(strings.NewReader(keys))
	ed, err := newLineEditor(stdin, &readline.Config{
		Stdin: stdin, Stdout: io.Discard,
		FuncMakeRaw: func() error { return nil }, FuncExitRaw: func() error { return nil },
		FuncGetWidth: func() int { return 80 }, FuncOnWidthChanged: func(func()) {},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &tradeREPL{tr: fakeTrader(f), cfg: project.Defaults(), addr: "127.0.0.1:1", in: ed, out: &out, errw: &errw, terminal: true}
	err = r.run(context.Background())
	return out.String(), errw.String(), err
}

// TestLineEditorRecallsCommandLines: the up arrow recalls the last command
// line (not the answer to send? [y/N]), which is previewed again; answers
// are read through the editor too, and only y sends.
func TestLineEditorRecallsCommandLines(t *testing.T) {
	f := &fakeNode{snap: testSnapshot(), verdict: node.Verdict{WouldAccept: true, TradingState: command.Active}, ticket: "tk-1",
		outcome: node.Outcome{Status: node.Accepted, Detail: "trading state halted"}}
	const up = "\x1b[A"
	out, errw, err := editedSession(t, f, "state halted --reason drill\rn\r"+up+"\ry\rhistory\rquit\r")
	if err != nil {
		t.Fatalf("session: %v\n%s\n%s", err, out, errw)
	}
	if len(f.dryRuns) != 2 || f.dryRuns[1].Command.Verb != command.SetTradingState || f.dryRuns[1].Reason != "drill" {
		t.Fatalf("dry runs = %v, want the recalled line previewed again\n%s\n%s", f.dryRuns, out, errw)
	}
	if len(f.submitted) != 1 || !strings.Contains(out, "not sent\n") || !strings.Contains(out, "accepted (ticket tk-1): trading state halted") {
		t.Errorf("submitted = %v\n%s", f.submitted, out)
	}
	if !strings.Contains(out, "   1  state halted --reason drill\n   2  state halted --reason drill\n") || strings.Contains(out, "   3  ") {
		t.Errorf("history:\n%s", out)
	}
}

// TestLineEditorCtrlC: Ctrl-C at send? [y/N] sends nothing and ends the
// session as an interrupt; Ctrl-D ends the input.
func TestLineEditorCtrlC(t *testing.T) {
	f := &fakeNode{snap: testSnapshot(), verdict: node.Verdict{WouldAccept: true}}
	out, errw, err := editedSession(t, f, "state halted\r\x03state active\r")
	if err != nil || len(f.submitted) != 0 || len(f.dryRuns) != 1 || !strings.Contains(out, "not sent: no answer") || !strings.Contains(errw, "interrupted") {
		t.Errorf("Ctrl-C: %v, submitted %v\n%s\n%s", err, f.submitted, out, errw)
	}
	f = &fakeNode{snap: testSnapshot()}
	out, errw, err = editedSession(t, f, "\x04state halted\r")
	if err != nil || len(f.dryRuns) != 0 || strings.Contains(errw, "interrupted") {
		t.Errorf("Ctrl-D: %v, dry runs %v\n%s\n%s", err, f.dryRuns, out, errw)
	}
}
