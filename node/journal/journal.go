// Package journal is the node's durable log: an SQLite database (a
// rollback journal, synchronous=FULL) holding every command the node took
// with its outcome (the audit trail), every state-changing event in order,
// and the latest marks. Each step of the node is one batch, written whole
// in one transaction with the other batches appended while the commit
// before it was in flight (group commit, commit.go), and in the database
// file itself before its caller is told it is done, so after a crash the
// journal holds every step whose ticket was resolved and nothing of a step
// that was not, and no other file is needed to read it. An anchor file
// beside it (anchor.go) records how far it has committed, so a journal that
// lost committed rows is refused rather than replayed; its line carries an
// HMAC under the journal's anchor key.
//
// The node rebuilds its state by replaying the events; the journal itself
// knows nothing of the rules that produced them.
//
// It never deletes or rewrites a committed row, never commits part of a
// step, and holds no key but its anchor's (anchor.go), which it never
// writes anywhere but its own file.
package journal

import (
	"crypto/ed25519"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"modernc.org/sqlite" // also the database/sql driver "sqlite"

	"wicket/node"
)

// schemaVersion is stored in the meta table; a journal written by another
// version is refused rather than misread.
const schemaVersion = "1"

const schema = `
CREATE TABLE IF NOT EXISTS meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS commands (
	seq             INTEGER PRIMARY KEY AUTOINCREMENT,
	ticket          TEXT NOT NULL UNIQUE,
	time            TEXT NOT NULL,
	key_id          TEXT NOT NULL,
	verb            TEXT NOT NULL,
	command         TEXT NOT NULL,
	reason          TEXT NOT NULL,
	client_order_id TEXT NOT NULL,
	status          TEXT NOT NULL,
	outcome         TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS commands_time ON commands(time);
CREATE INDEX IF NOT EXISTS commands_client_order_id ON commands(client_order_id);
CREATE TABLE IF NOT EXISTS events (
	seq         INTEGER PRIMARY KEY,
	command_seq INTEGER REFERENCES commands(seq),
	time        TEXT NOT NULL,
	kind        TEXT NOT NULL,
	data        TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS settlements (
	ticket  TEXT PRIMARY KEY REFERENCES commands(ticket),
	time    TEXT NOT NULL,
	outcome TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS marks (
	venue  TEXT NOT NULL,
	symbol TEXT NOT NULL,
	price  TEXT NOT NULL,
	PRIMARY KEY (venue, symbol)
);
`

// Journal is an open journal. Its writes (Append, Commit) go through one
// committer that writes whatever is waiting as one transaction (commit.go);
// they may be called from any goroutine, and rows are written in the
// order they were appended. The read methods are safe alongside them.
type Journal struct {
	path   string
	lock   *os.File // held while open: one node per journal
	w      *sql.DB  // the single writing connection
	r      *sql.DB  // readers: SQLite's file locks let a commit wait for a read in progress
	anchor *anchor  // nil when opened without one (benchmarks)
	at     level    // how far the journal has committed; the committer's once it runs (read under c.mu)
	start  Start
	c      *committer
}

// durability is how a journal makes a commit durable before Commit
// returns: SQLite's journal_mode, and whether an anchor is kept.
type durability struct {
	journalMode string
	anchor      bool
}

// durable is the journal's choice. A rollback journal (DELETE) with
// synchronous=FULL has each commit in node.db itself before Commit returns,
// so losing any other file loses nothing acknowledged; in WAL mode the
// commits since the last checkpoint live only in node.db-wal. Measured by
// BenchmarkAppend (docs/node.md has the figures): it costs about 3.5 times
// WAL's per-commit time, as much as WAL with a checkpoint before every
// acknowledgement, without the window between the commit and the
// checkpoint; the anchor adds one small fsync (about 5% on an idle disk).
var durable = durability{journalMode: "DELETE", anchor: true}

// Start is what Open found at path: a new journal (no file, or an empty
// one), or an existing one with the commands it holds.
type Start struct {
	New      bool
	Commands int64
	Last     time.Time // when the last command was taken; zero with none
}

// String is the start as the node logs it: "new journal", or "recovered 3
// commands, last at 2025-03-04T05:08:07Z".
func (s Start) String() string {
	if s.New {
		return "new journal"
	}
	if s.Commands == 0 {
		return "recovered 0 commands"
	}
	noun := "commands"
	if s.Commands == 1 {
		noun = "command"
	}
	return fmt.Sprintf("recovered %d %s, last at %s", s.Commands, noun, s.Last.UTC().Format(time.RFC3339))
}

// Start says what Open found.
func (j *Journal) Start() Start { return j.start }

// Open opens or creates the journal at path. A journal written in WAL
// mode by an earlier wicket is folded into its file and kept in rollback
// mode from then on.
func Open(path string) (*Journal, error) { return openWith(path, durable) }

func openWith(path string, d durability) (*Journal, error) {
	if strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("journal path %q contains '?'; choose a path without it", path)
	}
	lk, err := lock(path)
	if err != nil {
		return nil, err
	}
	j := &Journal{path: path, lock: lk}
	fail := func(err error) (*Journal, error) {
		j.closeAll() //nolint:errcheck // the open failed already
		return nil, err
	}
	if d.anchor {
		if j.anchor, err = openAnchor(path); err != nil {
			return fail(err)
		}
	}
	if j.w, err = sql.Open("sqlite", path+"?_journal_mode="+d.journalMode+"&_synchronous=FULL&_busy_timeout=10000&_txlock=immediate"); err != nil {
		return fail(fmt.Errorf("open journal %s: %w", path, err))
	}
	j.w.SetMaxOpenConns(1)
	if err := j.init(d.journalMode); err != nil {
		return fail(fmt.Errorf("open journal %s: %w", path, err))
	}
	if j.r, err = sql.Open("sqlite", path+"?_busy_timeout=10000&_query_only=1"); err != nil {
		return fail(fmt.Errorf("open journal %s: %w", path, err))
	}
	j.r.SetMaxOpenConns(4)
	j.startCommitter()
	return j, nil
}

func (j *Journal) init(journalMode string) error {
	var mode string
	if err := j.w.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
		if damaged(err) {
			return fmt.Errorf("SQLite cannot read it (%w): %s", err, damagedAdvice)
		}
		return err // permissions, a missing directory: the error says which
	}
	if !strings.EqualFold(mode, journalMode) {
		return fmt.Errorf("journal_mode is %s, not %s; SQLite could not change it (is another program holding the file open?)", mode, journalMode)
	}
	if err := j.check(); err != nil {
		return err
	}
	if err := j.level(); err != nil {
		return err
	}
	if err := j.checkAnchor(); err != nil {
		return err
	}
	if _, err := j.w.Exec(schema); err != nil {
		return err
	}
	var v string
	err := j.w.QueryRow(`SELECT value FROM meta WHERE key = 'schema'`).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		j.start = Start{New: true}
		_, err = j.w.Exec(`INSERT INTO meta(key, value) VALUES ('schema', ?), ('tick', '0')`, schemaVersion)
		return err
	case err != nil:
		return err
	case v != schemaVersion:
		return fmt.Errorf("journal schema %s is not the %s this wicket reads; use the wicket that wrote it, or move the file aside to start afresh", v, schemaVersion)
	}
	var last sql.NullString
	if err := j.w.QueryRow(`SELECT COUNT(*), MAX(time) FROM commands WHERE verb NOT LIKE 'arming:%'`).Scan(&j.start.Commands, &last); err != nil {
		return err
	}
	if last.Valid {
		if j.start.Last, err = time.Parse(time.RFC3339Nano, last.String); err != nil {
			return fmt.Errorf("the last command's time %q: %w", last.String, err)
		}
	}
	return nil
}

// level reads how far the journal has committed (zero for a new one).
func (j *Journal) level() error {
	var tables int
	if err := j.w.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN ('commands', 'events')`).Scan(&tables); err != nil {
		return err
	}
	if tables < 2 {
		return nil
	}
	return j.w.QueryRow(`SELECT (SELECT COALESCE(MAX(seq), 0) FROM commands), (SELECT COALESCE(MAX(seq), 0) FROM events)`).
		Scan(&j.at.commands, &j.at.events)
}

// checkAnchor refuses a journal behind its anchor, and brings an anchor
// behind the journal (the node died between a commit and its anchor, or
// this is the journal's first start with one) up to it.
func (j *Journal) checkAnchor() error {
	a := j.anchor
	if a == nil {
		return nil
	}
	name := j.path + anchorSuffix
	if j.at.behind(a.at) {
		if j.at == (level{}) {
			return fmt.Errorf("it is new or empty, but its anchor %s says it had committed commands up to %d and events up to %d: "+
				"the journal was moved, deleted or emptied. Put it back; or, to start a new journal and forget the node's orders and audit trail "+
				"(check each venue's orders and positions by hand first), move %s aside too", name, a.at.commands, a.at.events, name)
		}
		return fmt.Errorf("it is behind its anchor %s: the anchor says it had committed commands up to %d and events up to %d, "+
			"but it holds commands up to %d and events up to %d, so acknowledged orders are missing from it (an older copy was put in its place, "+
			"or it lost a file it needed). Restore the newest copy of the journal; or, to run on this one and forget what is missing "+
			"(check each venue's orders and positions by hand first), move %s aside",
			name, a.at.commands, a.at.events, j.at.commands, j.at.events, name)
	}
	if j.at != a.at {
		if err := a.write(j.at); err != nil {
			return fmt.Errorf("write its anchor %s: %w", name, err)
		}
	}
	return nil
}

// damagedAdvice is what to do with a journal SQLite cannot read whole.
const damagedAdvice = "the file is damaged or not a journal; restore it from a backup, or move it aside, with its .anchor file, to start a new journal (the node then forgets its orders and audit trail)"

// damaged reports whether err is SQLite saying the file is not a database
// or is corrupt (SQLITE_NOTADB, SQLITE_CORRUPT).
func damaged(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && (se.Code()&0xff == 26 || se.Code()&0xff == 11)
}

// check runs SQLite's quick_check (every page and index readable, without
// the full cross-check of integrity_check: a start-up cost in proportion to
// the file) and refuses a journal that fails it, with the first problems
// SQLite names.
func (j *Journal) check() error {
	rows, err := j.w.Query(`PRAGMA quick_check(5)`)
	if err != nil {
		return fmt.Errorf("SQLite's quick_check could not read it (%w): %s", err, damagedAdvice)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return err
		}
		if line != "ok" {
			problems = append(problems, strings.ReplaceAll(line, "\n", "; "))
		}
	}
	if err := rows.Err(); err != nil {
		problems = append(problems, err.Error())
	}
	if len(problems) > 0 {
		return fmt.Errorf("it fails SQLite's quick_check (%s): %s", strings.Join(problems, "; "), damagedAdvice)
	}
	return nil
}

// Path is the journal's file.
func (j *Journal) Path() string { return j.path }

// Close closes the journal. It reports an anchor that could not be
// written since (the commits themselves are durable).
func (j *Journal) Close() error { return j.closeAll() }

func (j *Journal) closeAll() error {
	var errs []error
	if j.c != nil {
		j.stopCommitter() // what was appended is written first
	}
	if j.r != nil {
		errs = append(errs, j.r.Close())
	}
	if j.w != nil {
		errs = append(errs, j.w.Close())
	}
	if j.anchor != nil {
		if err := j.anchor.close(); err != nil {
			errs = append(errs, fmt.Errorf("journal anchor %s: %w", j.path+anchorSuffix, err))
		}
	}
	return errors.Join(append(errs, j.lock.Close())...)
}

// Mark is a stored mark price.
type Mark struct {
	Venue  string
	Symbol string
	Price  decimal.Decimal
}

// Batch is what one step of the node commits at once.
type Batch struct {
	Entry  *node.AuditEntry  // the command the step applied, or nil (a mark step); its Seq is filled in
	Audit  []node.AuditEntry // arming entries the step records (Arming set), beside Entry
	Events []node.Event      // numbered by the node, consecutively
	Marks  []Mark            // marks to store (replacing the old ones)
	Tick   int64             // the step counter to store, when > 0
	// Settle holds the final outcomes of tickets whose audit row was
	// committed pending (a real venue's answer not yet known); each ticket
	// settles once, and reads show the settled outcome from then on.
	Settle []node.Outcome

	pin ed25519.PublicKey // PinOperatorKey's: the operator key to pin (operator.go)
}

// armingVerb prefixes the verb column of an arming entry, which holds no
// command: "arming:arm", "arming:disarm", "arming:lapse".
const armingVerb = "arming:"

// insertArming records an arming entry: its change in the command column.
// It returns the entry's number.
func insertArming(tx *sql.Tx, e node.AuditEntry) (int64, error) {
	if e.Arming == nil {
		return 0, errors.New("journal: an audit entry beside the command must be an arming entry")
	}
	change, err := json.Marshal(e.Arming)
	if err != nil {
		return 0, fmt.Errorf("journal: encode arming: %w", err)
	}
	out, err := json.Marshal(e.Outcome)
	if err != nil {
		return 0, fmt.Errorf("journal: encode outcome: %w", err)
	}
	res, err := tx.Exec(`INSERT INTO commands(ticket, time, key_id, verb, command, reason, client_order_id, status, outcome)
		VALUES (?, ?, ?, ?, ?, ?, '', ?, ?)`,
		e.Ticket, formatTime(e.Time), e.KeyID, armingVerb+string(e.Arming.Action), change, e.Reason, string(e.Outcome.Status), out)
	if err != nil {
		return 0, fmt.Errorf("journal: record arming: %w", err)
	}
	seq, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("journal: record arming: %w", err)
	}
	return seq, nil
}

// Replay calls fn with every event in order.
func (j *Journal) Replay(fn func(node.Event) error) error {
	rows, err := j.r.Query(`SELECT seq, data FROM events ORDER BY seq`)
	if err != nil {
		return fmt.Errorf("journal: replay: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var seq int64
		var data []byte
		if err := rows.Scan(&seq, &data); err != nil {
			return fmt.Errorf("journal: replay: %w", err)
		}
		var ev node.Event
		if err := json.Unmarshal(data, &ev); err != nil {
			return fmt.Errorf("journal: event %d is unreadable: %w", seq, err)
		}
		if err := fn(ev); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Marks returns the stored step counter and marks.
func (j *Journal) Marks() (int64, []Mark, error) {
	var tickText string
	if err := j.r.QueryRow(`SELECT value FROM meta WHERE key = 'tick'`).Scan(&tickText); err != nil {
		return 0, nil, fmt.Errorf("journal: read tick: %w", err)
	}
	tick, err := strconv.ParseInt(tickText, 10, 64)
	if err != nil {
		return 0, nil, fmt.Errorf("journal: tick %q: %w", tickText, err)
	}
	rows, err := j.r.Query(`SELECT venue, symbol, price FROM marks ORDER BY venue, symbol`)
	if err != nil {
		return 0, nil, fmt.Errorf("journal: read marks: %w", err)
	}
	defer rows.Close()
	var out []Mark
	for rows.Next() {
		var m Mark
		var p string
		if err := rows.Scan(&m.Venue, &m.Symbol, &p); err != nil {
			return 0, nil, fmt.Errorf("journal: read marks: %w", err)
		}
		if m.Price, err = decimal.NewFromString(p); err != nil {
			return 0, nil, fmt.Errorf("journal: mark %s/%s %q: %w", m.Venue, m.Symbol, p, err)
		}
		out = append(out, m)
	}
	return tick, out, rows.Err()
}

// MaxAuditLimit is the most entries one audit page holds.
const MaxAuditLimit = 1000

// DefaultAuditLimit is the page size when none is asked for.
const DefaultAuditLimit = 100

// Audit reads a page of the audit trail, oldest first.
func (j *Journal) Audit(q node.AuditQuery) (node.AuditPage, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultAuditLimit
	}
	limit = min(limit, MaxAuditLimit)
	rows, err := j.r.Query(`SELECT `+entryColumns+`
		FROM commands c LEFT JOIN settlements s ON s.ticket = c.ticket
		WHERE c.seq > ? AND c.time >= ? AND (? = '' OR c.client_order_id = ?) AND c.verb != ? ORDER BY c.seq LIMIT ?`,
		q.After, formatTime(q.Since), q.ClientOrderID, q.ClientOrderID, ledgerHeadVerb, limit+1)
	if err != nil {
		return node.AuditPage{}, fmt.Errorf("journal: audit: %w", err)
	}
	defer rows.Close()
	page := node.AuditPage{Entries: []node.AuditEntry{}}
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return node.AuditPage{}, err
		}
		if len(page.Entries) == limit {
			page.More = true
			break
		}
		page.Entries = append(page.Entries, e)
	}
	if err := rows.Err(); err != nil {
		return node.AuditPage{}, fmt.Errorf("journal: audit: %w", err)
	}
	if page.More {
		page.Next = page.Entries[len(page.Entries)-1].Seq
	}
	return page, nil
}

// entryColumns reads an audit entry (scanEntry), its outcome the settled
// one when the ticket has settled.
const entryColumns = `c.seq, c.ticket, c.time, c.key_id, c.verb, c.command, c.reason, c.client_order_id, COALESCE(s.outcome, c.outcome)`

// Unsettled returns the commands whose outcome was committed pending and
// has not settled, oldest first.
func (j *Journal) Unsettled() ([]node.AuditEntry, error) {
	rows, err := j.r.Query(`SELECT `+entryColumns+`
		FROM commands c LEFT JOIN settlements s ON s.ticket = c.ticket
		WHERE c.status = ? AND s.ticket IS NULL AND c.verb NOT LIKE 'arming:%' ORDER BY c.seq`, string(node.Pending))
	if err != nil {
		return nil, fmt.Errorf("journal: unsettled tickets: %w", err)
	}
	defer rows.Close()
	var out []node.AuditEntry
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("journal: unsettled tickets: %w", err)
	}
	return out, nil
}

// Ticket finds a resolved ticket's outcome: the settled one, once it has
// settled.
func (j *Journal) Ticket(id string) (node.Outcome, bool, error) {
	var data []byte
	err := j.r.QueryRow(`SELECT COALESCE(s.outcome, c.outcome) FROM commands c LEFT JOIN settlements s ON s.ticket = c.ticket
		WHERE c.ticket = ?`, id).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return node.Outcome{}, false, nil
	}
	if err != nil {
		return node.Outcome{}, false, fmt.Errorf("journal: ticket %s: %w", id, err)
	}
	var o node.Outcome
	if err := json.Unmarshal(data, &o); err != nil {
		return node.Outcome{}, false, fmt.Errorf("journal: ticket %s is unreadable: %w", id, err)
	}
	return o, true, nil
}

type scanner interface{ Scan(...any) error }

func scanEntry(s scanner) (node.AuditEntry, error) {
	var e node.AuditEntry
	var ts, verb string
	var cmd, out []byte
	if err := s.Scan(&e.Seq, &e.Ticket, &ts, &e.KeyID, &verb, &cmd, &e.Reason, &e.ClientOrderID, &out); err != nil {
		return e, fmt.Errorf("journal: audit: %w", err)
	}
	var err error
	if e.Time, err = time.Parse(time.RFC3339Nano, ts); err != nil {
		return e, fmt.Errorf("journal: audit entry %d: time %q: %w", e.Seq, ts, err)
	}
	if strings.HasPrefix(verb, armingVerb) {
		e.Arming = &node.ArmingChange{}
		if err := json.Unmarshal(cmd, e.Arming); err != nil {
			return e, fmt.Errorf("journal: audit entry %d: arming: %w", e.Seq, err)
		}
	} else if err := json.Unmarshal(cmd, &e.Command); err != nil {
		return e, fmt.Errorf("journal: audit entry %d: command: %w", e.Seq, err)
	}
	if err := json.Unmarshal(out, &e.Outcome); err != nil {
		return e, fmt.Errorf("journal: audit entry %d: outcome: %w", e.Seq, err)
	}
	return e, nil
}

// formatTime stores times in UTC with fixed-width nanoseconds, so text
// order is time order.
func formatTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000000Z07:00") }
