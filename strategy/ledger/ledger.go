// Package ledger is the research ledger: the project's record of every
// research trial (settings/state/research.db). Every backtest, every sweep
// combination, every walk-forward in-sample combination and every
// walk-forward run, from the agent or the CLI, failed or not, is one row:
// when, who ran it, the strategy's name and source digest, the params, the
// series and range, the costs, the metrics, the audit data an outsider
// needs to recompute the deflated Sharpe ratio and the probability of
// backtest overfitting, and the run id. The deflated Sharpe ratio is only
// honest when N is the number of trials actually tried, and the ledger is
// where that number comes from (Trials).
//
// Rows are append-only and chained with a key: each row's hash is the
// HMAC-SHA256, under the project's ledger key, of the previous row's hash
// and the row's own canonical content, so Verify finds an edited, removed,
// reordered or re-hashed row and names the first one, and nobody without
// the key can forge a valid chain. The chain's head is anchored outside
// the database: every append also appends its last row's sequence number
// and hash to the anchor file beside it (research.anchors), so Verify
// names a tail cut from the end, which a chain alone cannot show. Any number of processes may append at once
// (two MCP servers and a CLI): an append is one SQLite transaction begun
// IMMEDIATE, which reads the chain's tip inside the transaction, so the
// writers take turns and keep one chain. A batch of rows (a whole sweep)
// is one transaction.
//
// A ledger written before the chain was keyed (schema 1) is migrated when
// it is opened: its rows keep their plain SHA-256 chain, the keyed chain
// continues from its tip, and Verify says which rows predate the key.
//
// The ledger never updates or deletes a row, never runs strategy code, and
// never writes, logs or returns its key.
package ledger

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite"
)

// Kinds of rows.
const (
	KindBacktest    = "backtest"
	KindSweep       = "sweep" // one combination of a sweep
	KindWalkForward = "walk_forward"
	// KindInSample is one combination of a walk-forward window's
	// in-sample sweep: a trial like a sweep's.
	KindInSample = "walk_forward_in_sample"
)

// TrialKinds lists the kinds of row that record research run: every
// one carries the costs it ran under.
var TrialKinds = []string{KindBacktest, KindSweep, KindWalkForward, KindInSample}

// Kinds lists the row kinds: the trials', and research plans' and their
// verdicts' (plan.go).
var Kinds = append(slices.Clone(TrialKinds), KindPlan, KindVerdict)

// CountedKinds are the kinds of row that are trials of one parameter set,
// the trials N counts: a walk-forward run's own row is a summary of its
// windows, whose in-sample combinations are counted one by one.
var CountedKinds = []string{KindBacktest, KindSweep, KindInSample}

// Surfaces: who ran a trial.
const (
	SurfaceMCP  = "mcp"
	SurfaceCLI  = "cli"
	SurfaceData = "data-service" // a `wicket data serve` request that named no caller
)

// Genesis is the PrevHash of the first row.
const Genesis = "0000000000000000000000000000000000000000000000000000000000000000"

// Chain formats: the text a row's hash covers begins with its format.
const (
	formatPlain = "wicket-research-ledger-v1" // schema 1: plain SHA-256, no audit
	formatKeyed = "wicket-research-ledger-v2" // HMAC-SHA256 under the ledger key
)

const schemaVersion = "2"

const schema = `
CREATE TABLE IF NOT EXISTS meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS trials (
	seq       INTEGER PRIMARY KEY,
	time      TEXT NOT NULL,
	kind      TEXT NOT NULL,
	run_id    TEXT NOT NULL,
	surface   TEXT NOT NULL,
	session   TEXT NOT NULL,
	caller    TEXT NOT NULL,
	strategy  TEXT NOT NULL,
	digest    TEXT NOT NULL,
	series    TEXT NOT NULL,
	range_from TEXT NOT NULL,
	range_to  TEXT NOT NULL,
	params    TEXT NOT NULL,
	costs     TEXT NOT NULL,
	metrics   TEXT NOT NULL,
	sharpe    REAL,
	prev_hash TEXT NOT NULL,
	hash      TEXT NOT NULL,
	audit     TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS trials_strategy_series ON trials(strategy, series);
CREATE INDEX IF NOT EXISTS trials_series ON trials(series);
CREATE INDEX IF NOT EXISTS trials_run ON trials(run_id);
`

// indexes are made on every open (a ledger made before them gains them).
const indexes = `CREATE INDEX IF NOT EXISTS trials_kind_digest ON trials(kind, digest);`

// MinKeyBytes is the shortest ledger key accepted.
const MinKeyBytes = 16

// Options configure Open.
type Options struct {
	// Key keys the chain (the project's ledger key, from secrets.env).
	// Open and OpenExisting refuse a ledger without one, and one whose
	// rows were keyed with another.
	Key []byte
	// Now stamps rows; nil means time.Now.
	Now func() time.Time
	// NewRunID mints a run id for a batch that carries none; nil means a
	// time stamp and 6 random hex digits.
	NewRunID func() string
	// BusyTimeout is how long an append waits for another writer; 0
	// means 30 seconds.
	BusyTimeout time.Duration
	// Witness, when set, keeps each append's anchor in a second place the
	// agent's process does not write (the node's journal), which Verify
	// is then given (VerifyHeld). Best effort: an anchor it could not keep
	// leaves the rows anchored in the file only, which Verify notes.
	Witness Witness
}

// Witness keeps the ledger's anchors somewhere else.
type Witness interface {
	Keep(ctx context.Context, a Anchor) error
}

// Ledger is an open research ledger, safe for concurrent use.
type Ledger struct {
	path string
	db   *sql.DB
	opts Options
	// keyedFrom is the first row the key chains; the rows before it
	// predate the key (a migrated schema-1 ledger).
	keyedFrom int64
	// anchorsFrom is the first row whose anchor line must carry the key's
	// mark; boundary, when set, says why keyedFrom and anchorsFrom cannot
	// be trusted (boundary.go).
	anchorsFrom int64
	boundary    string
	migrated    string // the migration note, when there was one
	// pendingAnchor is the migrated tip's anchor, written once the
	// migration commits.
	pendingAnchor *Anchor
	sums          trialSums // Trials' running sums per series
	// anchorFile appends an anchor to the anchor file: anchor, or a
	// test's stand-in.
	anchorFile func(Anchor) error
	insertMu   sync.Mutex
	insert     *sql.Stmt // insertStmt's, once prepared
}

// ErrNotFound is returned by OpenExisting when there is no ledger yet.
var ErrNotFound = errors.New("no research ledger yet")

// ErrNoKey is returned by Open and OpenExisting without a key.
var ErrNoKey = errors.New("no research ledger key")

// ErrUnanchored is returned by Append, with the run id, when the rows were
// recorded but their anchor could not be written.
var ErrUnanchored = errors.New("recorded but not anchored")

// ErrWrongKey is returned by Open and OpenExisting when the key given is
// not the one the ledger's rows were keyed with.
var ErrWrongKey = errors.New("the research ledger key is not the one this ledger was keyed with")

// Open opens the ledger at path, creating it (and its folder) when it is
// missing.
func Open(path string, opts Options) (*Ledger, error) {
	if len(opts.Key) < MinKeyBytes {
		return nil, fmt.Errorf("research ledger: %w (at least %d bytes)", ErrNoKey, MinKeyBytes)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("research ledger: %w", err)
	}
	return open(path, opts, true)
}

// OpenExisting opens the ledger at path for reading and verifying; a
// missing file is ErrNotFound (wrapped), and nothing is created. A
// schema-1 ledger is migrated all the same (the migration writes its
// note and anchors the old tip).
func OpenExisting(path string, opts Options) (*Ledger, error) {
	if len(opts.Key) < MinKeyBytes {
		return nil, fmt.Errorf("research ledger: %w (at least %d bytes)", ErrNoKey, MinKeyBytes)
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w at %s: research tools record their trials there as they run", ErrNotFound, path)
	}
	return open(path, opts, false)
}

// AnchorPath is the anchor file of the ledger at path: beside it, named
// for it (research.db: research.anchors).
func AnchorPath(path string) string {
	return strings.TrimSuffix(path, filepath.Ext(path)) + ".anchors"
}

func open(path string, opts Options, create bool) (*Ledger, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = 30 * time.Second
	}
	if opts.NewRunID == nil {
		now := opts.Now
		opts.NewRunID = func() string {
			var b [3]byte
			_, _ = rand.Read(b[:])
			return now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
		}
	}
	opts.Key = slices.Clone(opts.Key)
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("research ledger: %w", err)
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", opts.BusyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Set("_txlock", "immediate")
	dsn := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}).String()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open the research ledger %s: %w", path, err)
	}
	db.SetMaxOpenConns(4)
	l := &Ledger{path: path, db: db, opts: opts}
	l.anchorFile = l.anchor
	if err := l.init(create); err != nil {
		db.Close()
		return nil, fmt.Errorf("open the research ledger %s: %w", path, err)
	}
	return l, nil
}

func (l *Ledger) init(create bool) error {
	ctx := context.Background()
	tx, err := l.db.BeginTx(ctx, nil) // IMMEDIATE: two processes opening a new or old ledger take turns
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	meta := func(k string) (string, error) {
		var v string
		err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, k).Scan(&v)
		if errors.Is(err, sql.ErrNoRows) {
			return "", nil
		}
		return v, err
	}
	setMeta := func(k, v string) error {
		_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)`, k, v)
		return err
	}
	var tables int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'`).Scan(&tables); err != nil {
		return err
	}
	if tables == 0 {
		if !create {
			return errors.New("not a research ledger (no meta table)")
		}
		if _, err := tx.ExecContext(ctx, schema); err != nil {
			return err
		}
		for k, v := range map[string]string{"schema": schemaVersion, "keyed_from": "1", "key_check": keyCheck(l.opts.Key),
			"anchors_keyed_from": "1", "boundary_mac": boundaryMAC(l.opts.Key, 1, 1)} {
			if err := setMeta(k, v); err != nil {
				return err
			}
		}
	}
	if _, err := tx.ExecContext(ctx, indexes); err != nil {
		return err
	}
	v, err := meta("schema")
	switch {
	case err != nil:
		return fmt.Errorf("not a research ledger (%v)", err)
	case v == "1":
		if err := l.migrate(ctx, tx, setMeta); err != nil {
			return fmt.Errorf("migrate the ledger to the keyed chain: %w", err)
		}
	case v != schemaVersion:
		return fmt.Errorf("ledger schema %q is not the %s this wicket reads; use the wicket that wrote it", v, schemaVersion)
	}
	check, err := meta("key_check")
	if err != nil {
		return err
	}
	if !hmac.Equal([]byte(check), []byte(keyCheck(l.opts.Key))) {
		return fmt.Errorf("%w: restore the key it was made with (a new key cannot vouch for the rows the old one chained)", ErrWrongKey)
	}
	if err := l.readBoundary(ctx, meta, setMeta, tx); err != nil { // boundary.go
		return err
	}
	if l.migrated, err = meta("migrated"); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if l.pendingAnchor != nil {
		a := *l.pendingAnchor
		l.pendingAnchor = nil
		return l.anchor(a)
	}
	return nil
}

// migrate turns a schema-1 ledger (plain SHA-256 chain) into a keyed one
// inside tx: its rows are kept as they are, the keyed chain begins after
// its tip, which is anchored, and the note says so.
func (l *Ledger) migrate(ctx context.Context, tx *sql.Tx, setMeta func(k, v string) error) error {
	if _, err := tx.ExecContext(ctx, `ALTER TABLE trials ADD COLUMN audit TEXT NOT NULL DEFAULT ''`); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `CREATE INDEX IF NOT EXISTS trials_series ON trials(series)`); err != nil {
		return err
	}
	var tip int64
	hash := Genesis
	err := tx.QueryRowContext(ctx, `SELECT seq, hash FROM trials ORDER BY seq DESC LIMIT 1`).Scan(&tip, &hash)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	now := l.opts.Now().UTC()
	note := fmt.Sprintf("migrated from the unkeyed ledger on %s with no rows", now.Format(time.RFC3339))
	if tip > 0 {
		note = fmt.Sprintf("rows 1 to %d were written before the chain was keyed (migrated on %s): their plain SHA-256 chain can be rebuilt by anyone "+
			"with the file, so only the anchor of row %d taken then vouches for them; the keyed chain begins at row %d", tip, now.Format(time.RFC3339), tip, tip+1)
		l.pendingAnchor = &Anchor{Seq: tip, Hash: hash, RunID: "migration", Rows: int(tip), Time: now.Format(time.RFC3339Nano)}
	}
	for k, v := range map[string]string{"schema": schemaVersion, "keyed_from": strconv.FormatInt(tip+1, 10), "key_check": keyCheck(l.opts.Key), "migrated": note,
		"anchors_keyed_from": strconv.FormatInt(max(tip, 1), 10), "boundary_mac": boundaryMAC(l.opts.Key, tip+1, max(tip, 1))} {
		if err := setMeta(k, v); err != nil {
			return err
		}
	}
	return nil
}

// insertSQL appends one row.
const insertSQL = `INSERT INTO trials(seq, time, kind, run_id, surface, session, caller, strategy, digest, series,
	range_from, range_to, params, costs, metrics, sharpe, prev_hash, hash, audit) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// insertStmt is the ledger's statement that appends a row, prepared on
// first use and kept: an append uses it in its transaction (Tx.Stmt),
// which prepares it once per connection instead of once per batch.
func (l *Ledger) insertStmt(ctx context.Context) (*sql.Stmt, error) {
	l.insertMu.Lock()
	defer l.insertMu.Unlock()
	if l.insert == nil {
		stmt, err := l.db.PrepareContext(ctx, insertSQL)
		if err != nil {
			return nil, err
		}
		l.insert = stmt
	}
	return l.insert, nil
}

// Path is the ledger's file.
func (l *Ledger) Path() string { return l.path }

// Close closes the ledger.
func (l *Ledger) Close() error {
	l.insertMu.Lock()
	if l.insert != nil {
		l.insert.Close()
		l.insert = nil
	}
	l.insertMu.Unlock()
	return l.db.Close()
}

// Append adds rows as one batch, in one transaction: they get consecutive
// sequence numbers after the chain's tip, the same time stamp and, when a
// row has none, the batch's run id (one minted per batch), which Append
// returns. The rows are filled in place. Once committed, the batch's last
// row is anchored (AnchorPath); an anchor that cannot be
// written is an error returned with the run id, the rows being recorded.
func (l *Ledger) Append(ctx context.Context, rows []Row) (string, error) {
	return l.appendIf(ctx, rows, nil)
}

// appendIf is Append with check, when set, run inside the append's
// transaction before any row is written: its error refuses the batch, and
// what it read cannot change before the rows are in (plan.go).
func (l *Ledger) appendIf(ctx context.Context, rows []Row, check func(context.Context, *sql.Tx) error) (string, error) {
	if len(rows) == 0 {
		return "", nil
	}
	runID := ""
	now := l.opts.Now().UTC().Format(time.RFC3339Nano)
	for i := range rows {
		r := &rows[i]
		if r.RunID == "" {
			if runID == "" {
				runID = l.opts.NewRunID()
			}
			r.RunID = runID
		}
		if runID == "" {
			runID = r.RunID
		}
		if err := r.normalise(); err != nil {
			return "", fmt.Errorf("research ledger: row %d: %w", i, err)
		}
		r.Time = now
	}
	tx, err := l.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock): the tip cannot move under us
	if err != nil {
		return "", fmt.Errorf("research ledger: begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	if check != nil {
		if err := check(ctx, tx); err != nil {
			return "", err
		}
	}
	var seq int64
	prev := Genesis
	err = tx.QueryRowContext(ctx, `SELECT seq, hash FROM trials ORDER BY seq DESC LIMIT 1`).Scan(&seq, &prev)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("research ledger: read the tip: %w", err)
	}
	insert, err := l.insertStmt(ctx)
	if err != nil {
		return "", fmt.Errorf("research ledger: %w", err)
	}
	stmt := tx.StmtContext(ctx, insert) // prepared once per connection
	defer stmt.Close()
	tip := seq
	mac := hmac.New(sha256.New, l.opts.Key)
	for i := range rows {
		r := &rows[i]
		seq++
		r.Seq, r.PrevHash = seq, prev
		r.Hash = r.keyedHashWith(mac)
		prev = r.Hash
		var sr sql.NullFloat64
		if !math.IsNaN(r.SharpePerPeriod) {
			sr = sql.NullFloat64{Float64: r.SharpePerPeriod, Valid: true}
		}
		if _, err := stmt.ExecContext(ctx, r.Seq, r.Time, r.Kind, r.RunID, r.Who.Surface, r.Who.Session, r.Who.Caller,
			r.Strategy, r.Digest, r.Series, r.From, r.To, string(r.Params), string(r.Costs), string(r.Metrics), sr, r.PrevHash, r.Hash, string(r.Audit)); err != nil {
			return "", fmt.Errorf("research ledger: append row %d: %w", r.Seq, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return "", fmt.Errorf("research ledger: commit: %w", err)
	}
	l.foldAppended(tip, rows) // moments.go
	last := rows[len(rows)-1]
	a := Anchor{Seq: last.Seq, Hash: last.Hash, RunID: runID, Rows: len(rows), Time: now}
	// The witness keeps the anchor while the file's fsync runs: both
	// need the rows committed, neither needs the other, and the append
	// returns once both are done.
	var kept chan struct{}
	if l.opts.Witness != nil {
		held := a
		held.MAC = anchorMAC(l.opts.Key, held)
		kept = make(chan struct{})
		go func() {
			defer close(kept)
			_ = l.opts.Witness.Keep(ctx, held) // best effort: Verify notes the rows it does not hold
		}()
	}
	err = l.anchorFile(a)
	if kept != nil {
		<-kept
	}
	if err != nil {
		return runID, fmt.Errorf("research ledger: rows %d to %d are %w, so a cut that removed them would go unseen: %w", rows[0].Seq, last.Seq, ErrUnanchored, err)
	}
	return runID, nil
}
