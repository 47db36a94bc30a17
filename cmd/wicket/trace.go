package main

import (
	"context"
	"encoding/json"
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
				Action: traceAction(false, runTraceList),
			},
			{
				Name:      "show",
				Usage:     "show one entry (SEQ, with --session when several sessions have it), one preview token's chain: preview, confirm, outcome (TOKEN or a prefix of it), or a deployment's orders with the node's audit of each and the calls that named it (DEPLOYMENT, with --node)",
				ArgsUsage: "SEQ|TOKEN|DEPLOYMENT",
				Flags:     append(traceFlags(false), traceNodeFlag()),
				Action:    traceAction(true, runTraceShow),
			},
			{
				Name:   "stats",
				Usage:  "count the matching entries by verdict and tool, rank refusal reasons, list sessions",
				Flags:  traceFlags(true),
				Action: traceAction(false, runTraceStats),
			},
			{
				Name:  "follow",
				Usage: "print entries as they are appended (with --since, the matching history first) until interrupted",
				Flags: traceFlags(true, &cli.DurationFlag{Name: "poll", Value: 500 * time.Millisecond,
					Usage: "how often to look for new entries"}),
				Action: traceAction(false, runTraceFollow),
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

// traceAction reads the argument and flags into traceCommandOptions and
// calls run.
func traceAction(takesArg bool, run func(ctx context.Context, o traceCommandOptions, stdout, stderr io.Writer) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		name := "wicket trace " + c.Command.Name
		if !takesArg && c.NArg() > 0 {
			return usagef("%s takes no arguments, got %q; filter with --since, --until, --tool, --verdict, --session, --token, --caller", name, c.Args().First())
		}
		var arg string
		if takesArg { // before the flags: oneArg reads those that follow the argument
			var err error
			if arg, err = oneArg(c, func(n int) error { return usagef("%s takes one SEQ or TOKEN, got %d arguments", name, n) }); err != nil {
				return err
			}
		}
		o := traceCommandOptions{
			project: c.String("project"), dir: c.String("dir"), json: c.Bool("json"), limit: c.Int("limit"), poll: c.Duration("poll"),
			since: c.String("since"), until: c.String("until"), verdict: c.String("verdict"),
			tool: c.String("tool"), session: c.String("session"), token: c.String("token"), caller: c.String("caller"),
			node: c.String("node"), arg: arg, now: time.Now,
		}
		return run(c.Context, o, c.App.Writer, c.App.ErrWriter)
	}
}

// traceCommandOptions is what a trace subcommand works with, filled from
// its argument and flags; each run function reads it into the
// traceOptions its verb works with.
type traceCommandOptions struct {
	project string // the --project flag
	dir     string // --dir; empty: the project's trace directory
	json    bool
	limit   int           // list: the newest N (0: all)
	poll    time.Duration // follow: how often to look
	since   string
	until   string
	verdict string
	tool    string
	session string
	token   string
	caller  string
	node    string           // --node H:P: join the node's audit
	arg     string           // show: SEQ, TOKEN or DEPLOYMENT
	now     func() time.Time // the clock --since and --until count back from
}

// runTraceList lists the matching entries.
func runTraceList(ctx context.Context, o traceCommandOptions, stdout, stderr io.Writer) error {
	return runTraceVerb(ctx, o, traceList, nil, stdout, stderr)
}

// runTraceShow shows one entry, one token's chain or one deployment.
func runTraceShow(ctx context.Context, o traceCommandOptions, stdout, stderr io.Writer) error {
	return runTraceVerb(ctx, o, traceShow, []string{o.arg}, stdout, stderr)
}

// runTraceStats counts the matching entries.
func runTraceStats(ctx context.Context, o traceCommandOptions, stdout, stderr io.Writer) error {
	return runTraceVerb(ctx, o, traceStats, nil, stdout, stderr)
}

// runTraceFollow prints entries as they are appended until ctx ends.
func runTraceFollow(ctx context.Context, o traceCommandOptions, stdout, stderr io.Writer) error {
	return runTraceVerb(ctx, o, traceFollow, nil, stdout, stderr)
}

// runTraceVerb checks the filters, finds the trace directory and the node
// when one is named, and runs do with args.
func runTraceVerb(ctx context.Context, c traceCommandOptions, do func(ctx context.Context, o *traceOptions, args []string) error, args []string, stdout, stderr io.Writer) error {
	o := &traceOptions{dir: c.dir, json: c.json, limit: c.limit, poll: c.poll, stdout: stdout, stderr: stderr}
	if o.limit < 0 {
		return usagef("--limit must be 0 (all) or more, got %d", o.limit)
	}
	now := c.now()
	var err error
	if o.filter.Since, err = traceWhen("since", c.since, now); err != nil {
		return err
	}
	if o.filter.Until, err = traceWhen("until", c.until, now); err != nil {
		return err
	}
	if !o.filter.Since.IsZero() && !o.filter.Until.IsZero() && !o.filter.Since.Before(o.filter.Until) {
		return usagef("--since %s is not before --until %s", c.since, c.until)
	}
	if v := c.verdict; v != "" {
		if o.filter.Verdict, err = trace.ParseVerdict(v); err != nil {
			return usagef("--verdict: unknown verdict %q; valid: ok, preview, refused, error", v)
		}
	}
	o.filter.Tool, o.filter.Session, o.filter.Token = c.tool, c.session, c.token
	o.filter.Caller = c.caller
	if addr := c.node; addr != "" {
		if o.node, err = traceNodeAudit(c.project, addr); err != nil {
			return err
		}
	}
	if o.dir == "" {
		p, _, err := openProjectAt(c.project)
		if err != nil {
			return fmt.Errorf("%w (or read a trace directory with --dir DIR)", err)
		}
		o.dir = p.TraceDir()
	}
	return do(ctx, o, args)
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
