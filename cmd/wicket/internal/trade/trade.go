// Package trade is the hand-trading surface of `wicket trade`: the line
// grammar a person types (the same verbs and fields as the agent's write
// tools), the preview and send through node.NewPreview and node.Send, the
// text that shows previews, outcomes and snapshots, and the REPL that reads
// lines (with line editing and history at a terminal, plain lines from a
// pipe).
//
// It never sends a command that was not previewed and answered y or yes
// (or given --yes by the one-shot command), never resends a pending one,
// and knows nothing of flags, projects or keys: cmd/wicket wires those and
// hands it a connected client.
package trade

import (
	"context"
	"io"
	"os"

	"wicket/internal/project"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/guardrail"
)

// The package's working names (tradeClient, tradeOutcome, ...) came with
// the files from cmd/wicket; the exported names below are the surface
// cmd/wicket uses.

// Client previews and sends commands for a person.
type Client = tradeClient

// NewClient is a client of conn whose guardrail checks cfg's limits; it
// mints client order ids with command.NewID and awaits a sent command's
// ticket for node.TicketWait.
func NewClient(conn node.Conn, cfg project.Config) *Client {
	return &tradeClient{node: conn, guard: guardrail.New(cfg), newID: command.NewID, wait: tradeTicketWait}
}

// Node is the connection the client reads and sends through.
func (t *tradeClient) Node() node.Conn { return t.node }

// Preview resolves cmd and checks it. Nothing is sent.
func (t *tradeClient) Preview(ctx context.Context, cmd command.Command, reason string) Preview {
	return t.preview(ctx, cmd, reason)
}

// Send submits the previewed command and awaits its own ticket.
func (t *tradeClient) Send(ctx context.Context, p Preview) Outcome { return t.send(ctx, p) }

// Preview is what a person sees before answering send? [y/N].
type Preview = tradePreview

// Outcome is what came of sending a preview, or of reading a ticket.
type Outcome = tradeOutcome

// SendFailed is the outcome status of a submit that failed: the node may
// or may not have the command.
const SendFailed = tradeSendFailed

// TicketOutcome reads ticket id's outcome as the trade surface tells it
// (node.SendResult's shape, the pending advice in its one wording).
func TicketOutcome(id string, res node.Outcome) Outcome { return tradeTicketOutcome(id, res) }

// Err is nil for an accepted outcome and one line saying what happened
// otherwise; the caller prints the outcome first.
func (o tradeOutcome) Err() error { return o.err() }

// Line is one parsed one-shot line: `wicket trade VERB ...`.
type Line = tradeLine

// ParseOneShot reads the words after a one-shot verb: fields, --reason,
// --yes, --json, --node and --help.
func ParseOneShot(verb command.Verb, words []string) (Line, error) {
	return parseTradeWords(verb, words, tradeOneShotLine)
}

// Node is the line's --node, or empty.
func (ln tradeLine) Node() string { return ln.node }

// Help reports --help.
func (ln tradeLine) Help() bool { return ln.help }

// Yes reports --yes: send after the preview.
func (ln tradeLine) Yes() bool { return ln.yes }

// JSON reports --json.
func (ln tradeLine) JSON() bool { return ln.json }

// Reason is the line's reason, or empty.
func (ln tradeLine) Reason() string { return ln.reason }

// Field is the text given for a field, or empty.
func (ln tradeLine) Field(name string) string { return ln.fields[name] }

// Build makes the line's command; cfg's only venue fills a required venue
// the line leaves out.
func (ln tradeLine) Build(cfg project.Config) (command.Command, error) {
	return buildTradeCommand(cfg, ln)
}

// ShortName is a verb's short name in the REPL and the one-shot commands
// (submit for submit_order), or empty.
func ShortName(verb command.Verb) string { return tradeVerbs[verb].short }

// PositionalUsage is a verb's positional words as help shows them:
// "SIDE QUANTITY SYMBOL TYPE [PRICE]".
func PositionalUsage(verb command.Verb) string { return tradePositionalUsage(verb) }

// PrintVerbHelp writes one verb's usage, fields and rules; oneShot adds
// the one-shot command's options.
func PrintVerbHelp(w io.Writer, verb command.Verb, cfg project.Config, oneShot bool) {
	printTradeVerbHelp(w, verb, cfg, oneShot)
}

// PrintPreview writes a preview: the resolved command, the guardrail's
// checks with their numbers, and the node's dry-run verdict.
func PrintPreview(w io.Writer, p Preview) { printTradePreview(w, p) }

// PrintOutcome writes what came of a send.
func PrintOutcome(w io.Writer, o Outcome) { printTradeOutcome(w, o) }

// PrintSnapshot writes the node's state as tables.
func PrintSnapshot(w io.Writer, s *node.Snapshot) error { return printTradeSnapshot(w, s) }

// CommandValues lists a command's set fields in the verb's display order,
// with the values exactly as they travel.
func CommandValues(c command.Command) [][2]string { return tradeCommandValues(c) }

// CodeSuffix is " [code]" after a reason, or empty without a code.
func CodeSuffix(code string) string { return tradeCodeSuffix(code) }

// Session is what a REPL session needs.
type Session struct {
	Client *Client
	Config project.Config // venues (for help and the default venue) and limits
	Addr   string         // the node's address, for the banner
	In     io.Reader      // the lines
	Out    io.Writer      // the conversation
	Err    io.Writer      // errors and notes
	// Terminal: In is interactive, so the session prompts instead of
	// echoing each line, and failed lines do not fail the session.
	Terminal bool
}

// RunREPL runs a session until quit, end of input or ctx ends. When In and
// Out are both terminals the lines are edited with readline (arrow keys,
// history of the session's command lines); otherwise they are read as
// plain lines, exactly as a pipe gives them. A piped session in which a
// line failed returns an error.
func RunREPL(ctx context.Context, s Session) error {
	r := &tradeREPL{tr: s.Client, cfg: s.Config, addr: s.Addr, out: s.Out, errw: s.Err, terminal: s.Terminal}
	if f, ok := s.In.(*os.File); ok && s.Terminal {
		ed, err := newTerminalEditor(f, s.Out)
		if err != nil {
			return err
		}
		if ed != nil {
			r.in = ed
		}
	}
	if r.in == nil {
		r.in = newTradeLineReader(s.In, s.Out)
	}
	return r.run(ctx)
}

// SplitWords splits a typed line into words as the REPL does: blanks
// separate words, quotes keep blanks, a backslash escapes.
func SplitWords(line string) ([]string, error) { return splitTradeLine(line) }
