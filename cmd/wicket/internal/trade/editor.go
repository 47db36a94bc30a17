package trade

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/chzyer/readline"
	"golang.org/x/term"
)

// lineEditor reads lines at a terminal through readline: the arrow keys
// move in the line and recall the session's command lines (never the
// answers to send? [y/N]), with the usual Emacs keys. Ctrl-C ends the
// session as an interrupt does; Ctrl-D on an empty line ends the input.
//
// readline runs on its own goroutine, one line per request, so that an
// interrupted session never waits on a blocked read; stop restores the
// terminal before it returns.
type lineEditor struct {
	rl       *readline.Instance
	stdin    io.Closer // closed first on stop: readline's own Close leaves it blocked in a read
	reqs     chan string
	res      chan editedLine
	done     chan struct{}
	inflight bool  // a request has no answer yet
	pending  error // an error met while reading an answer, returned next
}

type editedLine struct {
	s   string
	err error
}

// newTerminalEditor edits lines on the terminal f, drawing on out, when
// both are terminals; otherwise it returns nil and the session reads plain
// lines.
func newTerminalEditor(f *os.File, out io.Writer) (*lineEditor, error) {
	of, ok := out.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) || !term.IsTerminal(int(of.Fd())) {
		return nil, nil
	}
	if f == os.Stdin && of == os.Stdout {
		// readline's own terminal handling, made for these two on every
		// platform (on Windows its console reader turns keys into the
		// sequences it reads).
		stdin := readline.NewCancelableStdin(readline.Stdin)
		return newLineEditor(stdin, &readline.Config{Stdin: stdin, Stdout: out})
	}
	fd, ofd := int(f.Fd()), int(of.Fd())
	var saved *term.State
	stdin := readline.NewCancelableStdin(f)
	return newLineEditor(stdin, &readline.Config{
		Stdin:  stdin,
		Stdout: out,
		FuncMakeRaw: func() error {
			st, err := term.MakeRaw(fd)
			if err == nil {
				saved = st
			}
			return err
		},
		FuncExitRaw: func() error {
			if saved == nil {
				return nil
			}
			err := term.Restore(fd, saved)
			saved = nil
			return err
		},
		FuncGetWidth: func() int {
			if w, _, err := term.GetSize(ofd); err == nil {
				return w
			}
			return 80
		},
	})
}

// newLineEditor starts readline on cfg; a test gives it a pipe and no
// terminal modes.
func newLineEditor(stdin io.Closer, cfg *readline.Config) (*lineEditor, error) {
	cfg.HistoryLimit = tradeMaxHistory
	cfg.DisableAutoSaveHistory = true // command lines only: remember adds them
	cfg.FuncIsTerminal = func() bool { return true }
	rl, err := readline.NewEx(cfg)
	if err != nil {
		return nil, fmt.Errorf("line editing: %w", err)
	}
	e := &lineEditor{rl: rl, stdin: stdin, reqs: make(chan string), res: make(chan editedLine, 1), done: make(chan struct{})}
	go e.loop()
	return e, nil
}

func (e *lineEditor) loop() {
	defer close(e.done)
	for prompt := range e.reqs {
		e.rl.SetPrompt(prompt)
		s, err := e.rl.Readline()
		e.res <- editedLine{s, err}
	}
}

func (e *lineEditor) next(ctx context.Context, prompt string) (string, error) {
	if err := e.pending; err != nil {
		e.pending = nil
		return "", err
	}
	if !e.inflight {
		select {
		case e.reqs <- prompt:
			e.inflight = true
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	select {
	case r := <-e.res:
		e.inflight = false
		switch {
		case errors.Is(r.err, readline.ErrInterrupt):
			return "", context.Canceled // Ctrl-C: the terminal is raw, so no signal came
		case r.err != nil:
			return "", r.err
		case len(r.s) > maxTradeLine:
			return "", fmt.Errorf("a line is longer than %d bytes", maxTradeLine)
		}
		return r.s, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (e *lineEditor) remember(line string) { _ = e.rl.SaveHistory(line) }

func (e *lineEditor) pushErr(err error) { e.pending = err }

// stop ends a read in progress and waits (briefly) until readline has
// given the terminal back its modes.
func (e *lineEditor) stop() {
	_ = e.stdin.Close()
	closed := make(chan struct{})
	go func() {
		_ = e.rl.Close()
		close(closed)
	}()
	close(e.reqs)
	deadline := time.After(time.Second)
	for _, ch := range []chan struct{}{e.done, closed} {
		select {
		case <-ch:
		case <-deadline:
			return
		}
	}
}
