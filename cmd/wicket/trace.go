package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"wicket/trace"
)

func traceCommand() *cli.Command {
	return &cli.Command{
		Name:  "trace",
		Usage: "review the agent transcript: every tool call, refusal, preview and confirmed write",
		Description: "Reads the monthly JSONL files that `wicket mcp --trace` writes (settings/state/agent in the " +
			"project, or --dir DIR). Filters: --since and --until take a duration back from now (90m, 2h, 7d), an " +
			"RFC3339 time or a date (2026-05-14, UTC); --tool, --verdict (ok, preview, refused, error), --session and " +
			"--token (an id or a prefix of one); --caller (a caller of `wicket mcp --http`, by name). --json prints machine output: JSON lines for list and follow, one " +
			"JSON object for show and stats.",
		Subcommands: []*cli.Command{
			{
				Name:   "list",
				Usage:  "list the entries that match the filters, newest last",
				Flags:  traceFlags(true, &cli.IntFlag{Name: "limit", Usage: "show only the newest N matching entries (0: all)"}),
				Action: traceAction(false, traceList),
			},
			{
				Name:      "show",
				Usage:     "show one entry (SEQ, with --session when several sessions have it) or one preview token's chain: preview, confirm, outcome (TOKEN or a prefix of it)",
				ArgsUsage: "SEQ|TOKEN",
				Flags:     append(traceFlags(false), traceNodeFlag()),
				Action:    traceAction(true, traceShow),
			},
			{
				Name:   "stats",
				Usage:  "count the matching entries by verdict and tool, rank refusal reasons, list sessions",
				Flags:  traceFlags(true),
				Action: traceAction(false, traceStats),
			},
			{
				Name:  "follow",
				Usage: "print entries as they are appended (with --since, the matching history first) until interrupted",
				Flags: traceFlags(true, &cli.DurationFlag{Name: "poll", Value: 500 * time.Millisecond,
					Usage: "how often to look for new entries"}),
				Action: traceAction(false, traceFollow),
			},
		},
	}
}

// traceFlags are the flags every trace subcommand takes; filters adds
// --tool, --verdict and --token (show takes its token as the argument).
func traceFlags(filters bool, extra ...cli.Flag) []cli.Flag {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "dir", Usage: "trace directory (default: the project's settings/state/agent)"},
		&cli.BoolFlag{Name: "json", Usage: "machine-readable output"},
		&cli.StringFlag{Name: "since", Usage: "entries at or after: a duration back from now (2h, 7d), RFC3339, or a date"},
		&cli.StringFlag{Name: "until", Usage: "entries before: a duration back from now, RFC3339, or a date"},
		&cli.StringFlag{Name: "session", Usage: "one session's entries: its id or a prefix of it"},
		&cli.StringFlag{Name: "caller", Usage: "one caller's entries (wicket mcp --http; see wicket callers list)"},
	}
	if filters {
		flags = append(flags,
			&cli.StringFlag{Name: "tool", Usage: "one tool's entries"},
			&cli.StringFlag{Name: "verdict", Usage: "one verdict: ok, preview, refused or error"},
			&cli.StringFlag{Name: "token", Usage: "one preview token's entries: its id or a prefix of it"},
		)
	}
	return append(flags, extra...)
}

// traceOptions is what a trace subcommand works with, filled from flags.
type traceOptions struct {
	dir    string
	filter trace.Filter
	json   bool
	limit  int
	poll   time.Duration
	stdout io.Writer
	stderr io.Writer
	// node is the seam for `--node H:P` (it arrives with the node): when
	// set, a confirmed write is joined with the node's audit record of its
	// client order id. Nil: no node is asked.
	node traceAudit
}

// traceAudit is what the trace commands need from a node: the audit record
// it holds for each client order id it knows (ids it does not know are
// absent from the map).
type traceAudit interface {
	Audit(ctx context.Context, clientOrderIDs []string) (map[string]json.RawMessage, error)
}

// traceAction reads the flags into traceOptions and runs do.
func traceAction(takesArg bool, do func(ctx context.Context, o *traceOptions, args []string) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		name := "wicket trace " + c.Command.Name
		if !takesArg && c.NArg() > 0 {
			return usagef("%s takes no arguments, got %q; filter with --since, --until, --tool, --verdict, --session, --token, --caller", name, c.Args().First())
		}
		var args []string
		if takesArg {
			arg, err := oneArg(c, func(n int) error { return usagef("%s takes one SEQ or TOKEN, got %d arguments", name, n) })
			if err != nil {
				return err
			}
			args = []string{arg}
		}
		o := &traceOptions{
			dir: c.String("dir"), json: c.Bool("json"), limit: c.Int("limit"), poll: c.Duration("poll"),
			stdout: c.App.Writer, stderr: c.App.ErrWriter,
		}
		if o.limit < 0 {
			return usagef("--limit must be 0 (all) or more, got %d", o.limit)
		}
		now := time.Now()
		var err error
		if o.filter.Since, err = traceWhen("since", c.String("since"), now); err != nil {
			return err
		}
		if o.filter.Until, err = traceWhen("until", c.String("until"), now); err != nil {
			return err
		}
		if !o.filter.Since.IsZero() && !o.filter.Until.IsZero() && !o.filter.Since.Before(o.filter.Until) {
			return usagef("--since %s is not before --until %s", c.String("since"), c.String("until"))
		}
		if v := c.String("verdict"); v != "" {
			if o.filter.Verdict, err = trace.ParseVerdict(v); err != nil {
				return usagef("--verdict: unknown verdict %q; valid: ok, preview, refused, error", v)
			}
		}
		o.filter.Tool, o.filter.Session, o.filter.Token = c.String("tool"), c.String("session"), c.String("token")
		o.filter.Caller = c.String("caller")
		if addr := c.String("node"); addr != "" {
			if o.node, err = traceNodeAudit(c, addr); err != nil {
				return err
			}
		}
		if o.dir == "" {
			p, _, err := openProject(c)
			if err != nil {
				return fmt.Errorf("%w (or read a trace directory with --dir DIR)", err)
			}
			o.dir = p.TraceDir()
		}
		return do(c.Context, o, args)
	}
}

var traceDaysRE = regexp.MustCompile(`^(\d+)d(.*)$`)

// traceWhen reads a --since/--until value: a duration back from now (Go
// syntax plus a leading Nd for days), an RFC3339 time, or a date (UTC).
func traceWhen(flag, s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	var d time.Duration
	rest := s
	if m := traceDaysRE.FindStringSubmatch(s); m != nil {
		days, err := strconv.Atoi(m[1])
		if err == nil && days <= 100000 {
			d, rest = time.Duration(days)*24*time.Hour, m[2]
		}
	}
	if rest != "" {
		more, err := time.ParseDuration(rest)
		if err != nil || more < 0 {
			return time.Time{}, usagef("--%s %q: want a duration back from now (90m, 2h, 7d, 1d12h), an RFC3339 time (2026-05-14T09:30:00Z) or a date (2026-05-14)", flag, s)
		}
		d += more
	}
	return now.Add(-d).UTC(), nil
}

// read returns the matching entries, reporting skipped lines on stderr.
func (o *traceOptions) read(f trace.Filter) ([]trace.Entry, error) {
	return o.reader().Read(f)
}

func (o *traceOptions) reader() *trace.Reader {
	return &trace.Reader{Dir: o.dir, Poll: o.poll, Skipped: func(err error) {
		fmt.Fprintln(o.stderr, "warning: "+err.Error())
	}}
}

// noEntries is the note for an empty result.
func (o *traceOptions) noEntries() {
	fmt.Fprintf(o.stderr, "no entries in %s match\n", o.dir)
}

func traceList(_ context.Context, o *traceOptions, _ []string) error {
	entries, err := o.read(o.filter)
	if err != nil {
		return err
	}
	if o.limit > 0 && len(entries) > o.limit {
		fmt.Fprintf(o.stderr, "showing the newest %d of %d matching entries\n", o.limit, len(entries))
		entries = entries[len(entries)-o.limit:]
	}
	if o.json {
		return traceJSONLines(o.stdout, entries)
	}
	if len(entries) == 0 {
		o.noEntries()
		return nil
	}
	short := traceShortener(entries)
	tw := traceTable(o.stdout)
	callers := false
	for _, e := range entries {
		callers = callers || e.Caller != ""
	}
	if callers { // entries of an HTTP server: say whose session each was
		fmt.Fprintln(tw, "TIME\tSESSION\tCALLER\tSEQ\tTOOL\tVERDICT\tMS\tDETAIL")
	} else {
		fmt.Fprintln(tw, "TIME\tSESSION\tSEQ\tTOOL\tVERDICT\tMS\tDETAIL")
	}
	for _, e := range entries {
		who := ""
		if callers {
			who = traceDash(e.Caller) + "\t"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s%d\t%s\t%s\t%s\t%s\n", traceStamp(e.TS), short.session(e.Session), who, e.Seq, traceDash(e.Tool),
			e.Verdict, traceMS(e.MS), traceDetail(e, short))
	}
	return tw.Flush()
}

func traceShow(ctx context.Context, o *traceOptions, args []string) error {
	arg := args[0]
	if seq, err := strconv.ParseInt(arg, 10, 64); err == nil {
		return traceShowSeq(o, seq)
	}
	return traceShowToken(ctx, o, arg)
}

func traceShowSeq(o *traceOptions, seq int64) error {
	all, err := o.read(o.filter)
	if err != nil {
		return err
	}
	var hits []trace.Entry
	sessions := map[string]bool{}
	for _, e := range all {
		if e.Seq == seq {
			hits = append(hits, e)
			sessions[e.Session] = true
		}
	}
	switch {
	case len(hits) == 0:
		return fmt.Errorf("no entry with seq %d in %s%s; list entries with `wicket trace list` (a token prefix of digits only reads as a seq: give more of the token)", seq, o.dir, o.scope())
	case len(sessions) > 1:
		var list []string
		for _, e := range hits {
			list = append(list, e.Session)
		}
		return usagef("seq %d appears in %d sessions (%s); pick one with --session ID", seq, len(sessions), strings.Join(list, ", "))
	}
	if o.json {
		return traceJSON(o.stdout, hits[0])
	}
	for i, e := range hits {
		if i > 0 {
			fmt.Fprintln(o.stdout)
		}
		if err := tracePrintEntry(o.stdout, e); err != nil {
			return err
		}
	}
	return nil
}

// scope describes the filters show applied, for its not-found message.
func (o *traceOptions) scope() string {
	var s []string
	if o.filter.Session != "" {
		s = append(s, "session "+o.filter.Session)
	}
	if !o.filter.Since.IsZero() {
		s = append(s, "since "+traceStamp(o.filter.Since))
	}
	if !o.filter.Until.IsZero() {
		s = append(s, "until "+traceStamp(o.filter.Until))
	}
	if len(s) == 0 {
		return ""
	}
	return " (" + strings.Join(s, ", ") + ")"
}

// tracePrintEntry prints one entry field by field, its arguments indented.
func tracePrintEntry(w io.Writer, e trace.Entry) error {
	tw := traceTable(w)
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "%s\t%s\n", k, v)
		}
	}
	row("ts", traceStamp(e.TS))
	row("session", e.Session)
	row("caller", e.Caller)
	row("seq", strconv.FormatInt(e.Seq, 10))
	tool := traceDash(e.Tool)
	if e.Write {
		tool += " (write)"
	}
	row("tool", tool)
	row("profile", e.Profile)
	row("denied", strings.Join(e.Denied, ", "))
	row("verdict", e.Verdict.String())
	row("token", e.Token)
	row("client_order_id", e.ClientOrderID)
	row("ticket", e.Ticket)
	row("outcome", e.Outcome)
	row("approval", e.Approval)      // --approval (agent/loop.go)
	row("approved_by", e.ApprovedBy) // operator approval
	row("error", e.Error)
	row("ms", traceMS(e.MS))
	switch {
	case e.ArgsDropped:
		row("args", "(dropped: the entry was over 64 KiB)")
	case len(e.Args) == 0:
		row("args", "(none)")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(e.Args) > 0 {
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, e.Args, "  ", "  "); err != nil {
			pretty.Reset()
			pretty.Write(e.Args)
		}
		fmt.Fprintf(w, "args:\n  %s\n", pretty.String())
	}
	if e.Token != "" {
		fmt.Fprintf(w, "token chain: wicket trace show %s\n", e.Token)
	}
	return nil
}

// traceChainView is a token's chain as show prints it, with the node's audit
// record when a node was asked.
type traceChainView struct {
	trace.Chain
	Node json.RawMessage `json:"node,omitempty"`
}

func traceShowToken(ctx context.Context, o *traceOptions, token string) error {
	f := o.filter
	f.Token = token
	entries, err := o.read(f)
	if err != nil {
		return err
	}
	chains := trace.Chains(entries)
	switch {
	case len(chains) == 0:
		return fmt.Errorf("no entry carries a preview token %q in %s%s; tokens appear in `wicket trace list --verdict preview`", token, o.dir, o.scope())
	case len(chains) > 1:
		var list []string
		for _, c := range chains {
			list = append(list, c.Token)
		}
		return usagef("%q is a prefix of %d tokens (%s); give more of it", token, len(chains), strings.Join(list, ", "))
	}
	v := traceChainView{Chain: chains[0]}
	if o.node != nil && v.State == "confirmed" && v.ClientOrderID != "" {
		recs, err := o.node.Audit(ctx, []string{v.ClientOrderID})
		if err != nil {
			return fmt.Errorf("node audit for %s: %w", v.ClientOrderID, err)
		}
		v.Node = recs[v.ClientOrderID]
	}
	if o.json {
		return traceJSON(o.stdout, v)
	}
	tw := traceTable(o.stdout)
	fmt.Fprintf(tw, "token\t%s\n", v.Token)
	fmt.Fprintf(tw, "tool\t%s\n", traceDash(v.Tool))
	if v.ClientOrderID != "" {
		fmt.Fprintf(tw, "client_order_id\t%s\n", v.ClientOrderID)
	}
	fmt.Fprintf(tw, "state\t%s\n", traceChainState(v.Chain))
	var printAudit func(io.Writer) error // the node's entries, below the chain
	if o.node != nil {
		row := "no audit record for this client order id"
		if v.State != "confirmed" {
			row = "not asked: nothing was sent"
		} else if len(v.Node) > 0 {
			row, printAudit = traceNodeSummary(v.Node, v.ClientOrderID)
		}
		fmt.Fprintf(tw, "node\t%s\n", row)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(o.stdout)
	short := traceShortener(v.Entries)
	tw = traceTable(o.stdout)
	fmt.Fprintln(tw, "STEP\tTIME\tSESSION\tSEQ\tVERDICT\tMS\tDETAIL")
	for _, e := range v.Entries {
		d := traceDetail(e, short)
		if e.Verdict == trace.Preview {
			d = traceArgs(e) // the preview's command is what the chain is about
		}
		// The whole session id: a chain shows one or two, and a prefix of a
		// time-ordered id is shared by every session of the same minute.
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", trace.Step(e), traceStamp(e.TS), traceDash(e.Session), e.Seq,
			e.Verdict, traceMS(e.MS), d)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if printAudit == nil {
		return nil
	}
	fmt.Fprintln(o.stdout)
	return printAudit(o.stdout)
}

// traceChainState says in words what became of a token.
func traceChainState(c trace.Chain) string {
	switch c.State {
	case "confirmed":
		s := "confirmed"
		if c.Outcome != "" {
			s += ": " + c.Outcome
		}
		if c.Ticket != "" {
			s += " (ticket " + c.Ticket + ")"
		}
		return s
	case "previewed":
		return "previewed, never confirmed: nothing was sent"
	case "refused":
		return "confirm refused: nothing was sent"
	case "error":
		return "confirm failed (see the error below)"
	}
	return c.State
}

func traceStats(_ context.Context, o *traceOptions, _ []string) error {
	entries, err := o.read(o.filter)
	if err != nil {
		return err
	}
	s := trace.Summarize(entries)
	if o.json {
		return traceJSON(o.stdout, s)
	}
	if len(entries) == 0 {
		o.noEntries()
		return nil
	}
	w := o.stdout
	fmt.Fprintf(w, "%d entries from %s to %s\n\n", s.Total, traceStamp(s.First), traceStamp(s.Last))

	tw := traceTable(w)
	fmt.Fprintln(tw, "TOOL\tOK\tPREVIEW\tREFUSED\tERROR\tTOTAL")
	for _, t := range s.Tools {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\n", traceDash(t.Tool), t.OK, t.Preview, t.Refused, t.Error, t.Total)
	}
	fmt.Fprintf(tw, "(all)\t%d\t%d\t%d\t%d\t%d\n", s.OK, s.Preview, s.Refused, s.Error, s.Total)
	if err := tw.Flush(); err != nil {
		return err
	}

	if len(s.Refusals) > 0 {
		const top = 10
		fmt.Fprintln(w)
		tw = traceTable(w)
		fmt.Fprintln(tw, "REFUSED\tREASON\tTOOLS")
		for i, r := range s.Refusals {
			if i == top {
				break
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\n", r.Count, r.Reason, strings.Join(r.Tools, ", "))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if n := len(s.Refusals) - top; n > 0 {
			fmt.Fprintf(w, "... and %d more reasons (--json lists all)\n", n)
		}
	}

	fmt.Fprintln(w)
	tw = traceTable(w)
	callers := false
	for _, ss := range s.Sessions {
		callers = callers || ss.Caller != ""
	}
	if callers { // an HTTP server's sessions: say whose each one was
		fmt.Fprintln(tw, "SESSION\tCALLER\tPROFILE\tFIRST\tLAST\tCALLS\tOK\tPREVIEW\tREFUSED\tERROR")
	} else {
		fmt.Fprintln(tw, "SESSION\tPROFILE\tFIRST\tLAST\tCALLS\tOK\tPREVIEW\tREFUSED\tERROR")
	}
	for _, ss := range s.Sessions {
		who := ""
		if callers {
			who = traceDash(ss.Caller) + "\t"
		}
		fmt.Fprintf(tw, "%s\t%s%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\n", traceDash(ss.Session), who, traceDash(ss.Profile), traceStamp(ss.First), traceStamp(ss.Last),
			ss.Total, ss.OK, ss.Preview, ss.Refused, ss.Error)
	}
	return tw.Flush()
}

func traceFollow(ctx context.Context, o *traceOptions, _ []string) error {
	r := o.reader()
	if o.filter.Since.IsZero() {
		fmt.Fprintf(o.stderr, "following %s from now (interrupt to stop; --since shows history first)\n", o.dir)
	} else {
		fmt.Fprintf(o.stderr, "following %s since %s (interrupt to stop)\n", o.dir, traceStamp(o.filter.Since))
	}
	var print func(trace.Entry) error
	if o.json {
		print = func(e trace.Entry) error { return traceJSONLines(o.stdout, []trace.Entry{e}) }
	} else {
		const row = "%-24s  %-13s  %5s  %-17s  %-7s  %8s  %s\n"
		if _, err := fmt.Fprintf(o.stdout, row, "TIME", "SESSION", "SEQ", "TOOL", "VERDICT", "MS", "DETAIL"); err != nil {
			return err
		}
		var short traceIDs // the full set is not known ahead: ids cut to traceIDFloor characters
		print = func(e trace.Entry) error {
			_, err := fmt.Fprintf(o.stdout, row, traceStamp(e.TS), short.session(e.Session), strconv.FormatInt(e.Seq, 10),
				traceDash(e.Tool), e.Verdict, traceMS(e.MS), traceDetail(e, short))
			return err
		}
	}
	err := r.Follow(ctx, o.filter, print)
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil // interrupted: the normal end of follow
	}
	return err
}

// traceIDs shortens session ids and tokens for tables: each to the shortest
// prefix of at least 8 characters that is unique among the ids shown.
type traceIDs map[string]string

func traceShortener(entries []trace.Entry) traceIDs {
	var all []string
	seen := map[string]bool{}
	for _, e := range entries {
		for _, id := range []string{e.Session, e.Token} {
			if id != "" && !seen[id] {
				seen[id] = true
				all = append(all, id)
			}
		}
	}
	sort.Strings(all)
	short := traceIDs{}
	for i, id := range all {
		n := 8
		for _, other := range []int{i - 1, i + 1} {
			if other >= 0 && other < len(all) {
				n = max(n, traceCommonPrefix(id, all[other])+1)
			}
		}
		short[id] = id[:min(n, len(id))]
	}
	return short
}

func traceCommonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func (s traceIDs) session(id string) string {
	if id == "" {
		return "-"
	}
	if v, ok := s[id]; ok {
		return v
	}
	return id[:min(traceIDFloor, len(id))]
}

// traceIDFloor is how much of an id a table shows when it cannot know the
// others (follow): the first 13 characters of a session id are its whole
// millisecond timestamp (UUIDv7), where 8 are shared by every session
// started in the same minute or so.
const traceIDFloor = 13

// traceDetail is the DETAIL column: what a reviewer needs first about an entry.
func traceDetail(e trace.Entry, short traceIDs) string {
	var parts []string
	if e.Outcome != "" {
		parts = append(parts, "outcome "+e.Outcome)
	}
	if e.Approval != "" {
		parts = append(parts, "approval "+e.Approval)
	}
	if e.Ticket != "" {
		parts = append(parts, "ticket "+e.Ticket)
	}
	if e.Token != "" {
		parts = append(parts, "token "+short.session(e.Token))
	}
	if e.ClientOrderID != "" {
		parts = append(parts, "client_order_id "+e.ClientOrderID)
	}
	if e.Error != "" {
		parts = append(parts, traceClip(traceOneLine(e.Error), 100))
	}
	if len(parts) == 0 {
		return traceArgs(e)
	}
	return strings.Join(parts, ", ")
}

// traceArgs is an entry's arguments on one line, clipped.
func traceArgs(e trace.Entry) string {
	switch {
	case e.ArgsDropped:
		return "(args dropped: over 64 KiB)"
	case len(e.Args) == 0:
		return ""
	}
	return traceClip(traceOneLine(string(e.Args)), 100)
}

func traceOneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func traceClip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

func traceStamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func traceMS(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func traceDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func traceTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0) }

// traceJSONLines writes entries as trace lines (the files' own format).
func traceJSONLines(w io.Writer, entries []trace.Entry) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, e := range entries {
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	return nil
}

// traceJSON writes one indented JSON document.
func traceJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
