package trade

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"wicket/internal/project"
	"wicket/node/command"
)

// maxTradeLine bounds one typed line.
const maxTradeLine = 64 << 10

// tradeMaxHistory bounds the session's history.
const tradeMaxHistory = 1000

// tradeREPL is one interactive trade session. With a terminal it prompts; from
// a pipe it echoes each line it reads, so its output reads as a transcript,
// and it fails (exit 1) when any line failed.
type tradeREPL struct {
	tr       *tradeClient
	cfg      project.Config
	addr     string
	in       lineSource
	out      io.Writer // the conversation
	errw     io.Writer // errors and notes
	terminal bool

	history []string
	lines   int // command lines run
	failed  int // of which failed: a bad line, an unreachable node, a command not accepted
}

// run reads lines until quit, end of input or ctx ends.
func (r *tradeREPL) run(ctx context.Context) error {
	defer r.in.stop()
	r.banner(ctx)
	for {
		prompt := ""
		if r.terminal {
			prompt = "wicket> "
		}
		line, err := r.in.next(ctx, prompt)
		if err != nil {
			return r.end(err)
		}
		if !r.terminal {
			fmt.Fprintf(r.out, "wicket> %s\n", line)
		}
		if quit := r.exec(ctx, line); quit {
			return r.end(io.EOF)
		}
	}
}

func (r *tradeREPL) banner(ctx context.Context) {
	state := ""
	if snap, err := r.tr.node.Snapshot(ctx, "", 0); err != nil {
		fmt.Fprintf(r.errw, "warning: %v\n", err)
	} else {
		state = ", trading state " + string(snap.TradingState)
	}
	fmt.Fprintf(r.errw, "wicket trade: node %s%s; venues: %s. Type help for the verbs, quit to leave. Every write is previewed and asks send? [y/N].\n",
		r.addr, state, strings.Join(r.cfg.VenueNames(), ", "))
}

// end closes the session: at end of input or quit, a piped session with
// failed lines is an error; an interrupt just ends.
func (r *tradeREPL) end(err error) error {
	if r.terminal {
		fmt.Fprintln(r.out)
	}
	switch {
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(r.errw, "interrupted")
		return nil
	case errors.Is(err, io.EOF):
	default:
		return fmt.Errorf("reading commands: %w", err)
	}
	if !r.terminal && r.failed > 0 {
		return fmt.Errorf("%d of %d command lines failed or were not accepted (see above)", r.failed, r.lines)
	}
	return nil
}

// fail reports a failed line.
func (r *tradeREPL) fail(err error) {
	r.failed++
	fmt.Fprintf(r.errw, "error: %v\n", err)
}

// exec runs one line; it reports whether the session should end.
func (r *tradeREPL) exec(ctx context.Context, line string) bool {
	line = strings.TrimSpace(line)
	if line == "" || strings.HasPrefix(line, "#") {
		return false
	}
	if strings.HasPrefix(line, "!") {
		expanded, err := r.expand(line)
		if err != nil {
			r.lines++
			r.fail(err)
			return false
		}
		fmt.Fprintf(r.out, "(%s) %s\n", line, expanded)
		line = expanded
	}
	r.lines++
	words, err := splitTradeLine(line)
	if err != nil {
		r.fail(err)
		return false
	}
	if len(words) == 0 {
		return false
	}
	if name := words[0]; name != "history" {
		r.history = append(r.history, line)
		r.in.remember(line)
		if len(r.history) > tradeMaxHistory {
			r.history = r.history[1:]
		}
	}
	args := words[1:]
	switch words[0] {
	case "quit", "exit":
		r.lines--
		return true
	case "help", "?":
		r.help(args)
	case "snapshot":
		r.snapshot(ctx, args)
	case "ticket":
		r.ticket(ctx, args)
	case "history":
		r.lines--
		for i, h := range r.history {
			fmt.Fprintf(r.out, "%4d  %s\n", i+1, h)
		}
	default:
		verb, ok := lookupTradeVerb(words[0])
		if !ok {
			r.fail(fmt.Errorf("unknown command %q; verbs: %s; commands: snapshot, ticket, history, help, quit",
				words[0], strings.Join(tradeVerbNames(), ", ")))
			return false
		}
		r.write(ctx, verb, args)
	}
	return false
}

// expand resolves !! and !N against the history.
func (r *tradeREPL) expand(line string) (string, error) {
	if len(r.history) == 0 {
		return "", errors.New("the history is empty")
	}
	if line == "!!" {
		return r.history[len(r.history)-1], nil
	}
	n, err := strconv.Atoi(line[1:])
	if err != nil || n < 1 || n > len(r.history) {
		return "", fmt.Errorf("%s: no such history line; use !! or !N with N from 1 to %d (see history)", line, len(r.history))
	}
	return r.history[n-1], nil
}

func (r *tradeREPL) help(args []string) {
	switch len(args) {
	case 0:
		printTradeHelp(r.out)
	case 1:
		verb, ok := lookupTradeVerb(args[0])
		if !ok {
			r.fail(fmt.Errorf("help: unknown verb %q; verbs: %s", args[0], strings.Join(tradeVerbNames(), ", ")))
			return
		}
		printTradeVerbHelp(r.out, verb, r.cfg, false)
	default:
		r.fail(errors.New("help takes at most one verb: help VERB"))
	}
}

func (r *tradeREPL) snapshot(ctx context.Context, args []string) {
	venue := ""
	switch len(args) {
	case 0:
	case 1:
		venue = args[0]
		if err := project.ValidName("venue", venue); err != nil {
			r.fail(err)
			return
		}
	default:
		r.fail(errors.New("snapshot takes at most one venue: snapshot [VENUE]"))
		return
	}
	snap, err := r.tr.node.Snapshot(ctx, venue, 0)
	if err != nil {
		r.fail(fmt.Errorf("cannot read the node: %w", err))
		return
	}
	_ = printTradeSnapshot(r.out, snap)
}

func (r *tradeREPL) ticket(ctx context.Context, args []string) {
	if len(args) != 1 {
		r.fail(errors.New("ticket takes one ticket id: ticket TICKET"))
		return
	}
	res, err := r.tr.node.Ticket(ctx, args[0], 0)
	if err != nil {
		r.fail(fmt.Errorf("cannot read ticket %s: %w", args[0], err))
		return
	}
	printTradeOutcome(r.out, tradeTicketOutcome(args[0], res))
}

// write previews one command and sends it only on y or yes.
func (r *tradeREPL) write(ctx context.Context, verb command.Verb, words []string) {
	ln, err := parseTradeWords(verb, words, tradeREPLLine)
	if err != nil {
		r.fail(err)
		return
	}
	cmd, err := buildTradeCommand(r.cfg, ln)
	if err != nil {
		r.fail(err)
		return
	}
	p := r.tr.preview(ctx, cmd, ln.reason)
	printTradePreview(r.out, p)
	answer, err := r.in.next(ctx, "send? [y/N] ")
	if err != nil {
		fmt.Fprintln(r.out)
		fmt.Fprintln(r.out, "not sent: no answer")
		if errors.Is(err, io.EOF) {
			return
		}
		r.in.pushErr(err)
		return
	}
	if !r.terminal {
		fmt.Fprintln(r.out, answer)
	}
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
	default:
		fmt.Fprintln(r.out, "not sent")
		return
	}
	o := r.tr.send(ctx, p)
	printTradeOutcome(r.out, o)
	if o.Status != "accepted" {
		r.failed++
	}
}

// lineSource is where a session's lines come from: plain lines from a pipe
// or a file (tradeLineReader), or lines edited at a terminal (lineEditor).
type lineSource interface {
	// next shows prompt, when not empty, and returns the next line, io.EOF
	// at the end of input, or ctx's error.
	next(ctx context.Context, prompt string) (string, error)
	// remember adds a command line to what the arrow keys recall.
	remember(line string)
	// pushErr makes the next call to next return err.
	pushErr(err error)
	stop()
}

// tradeLineReader reads lines on its own goroutine so that a blocked read never
// keeps an interrupted session alive.
type tradeLineReader struct {
	prompts io.Writer // where prompts are printed
	lines   chan string
	done    chan struct{}
	err     error // set before lines closes
	pending error // an error met while reading an answer, returned next
}

func newTradeLineReader(r io.Reader, prompts io.Writer) *tradeLineReader {
	l := &tradeLineReader{prompts: prompts, lines: make(chan string), done: make(chan struct{})}
	go func() {
		defer close(l.lines)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 4096), maxTradeLine)
		for sc.Scan() {
			select {
			case l.lines <- sc.Text():
			case <-l.done:
				return
			}
		}
		l.err = sc.Err()
		if errors.Is(l.err, bufio.ErrTooLong) {
			l.err = fmt.Errorf("a line is longer than %d bytes", maxTradeLine)
		}
	}()
	return l
}

func (l *tradeLineReader) next(ctx context.Context, prompt string) (string, error) {
	if prompt != "" {
		fmt.Fprint(l.prompts, prompt)
	}
	if err := l.pending; err != nil {
		l.pending = nil
		return "", err
	}
	select {
	case s, ok := <-l.lines:
		if !ok {
			if l.err != nil {
				return "", l.err
			}
			return "", io.EOF
		}
		return s, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (l *tradeLineReader) pushErr(err error) { l.pending = err }

// remember does nothing: a pipe has no arrow keys.
func (l *tradeLineReader) remember(string) {}

func (l *tradeLineReader) stop() {
	select {
	case <-l.done:
	default:
		close(l.done)
	}
}
