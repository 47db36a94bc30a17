// Package ledger is the research ledger: the project's record of every
// research trial (settings/state/research.db). Every backtest, every sweep
// combination and every walk-forward run, from the agent or the CLI, is
// one row: when, who ran it, the strategy's name and source digest, the
// params, the series and range, the costs, the metrics and the run id. The
// deflated Sharpe ratio is only honest when N is the number of trials
// actually tried, and the ledger is where that number comes from.
//
// Rows are append-only and hash-chained: each row's hash covers the
// previous row's hash and the row's own canonical content, so Verify
// finds an edited, removed or reordered row and names the first one. Any
// number of processes may append at once (two MCP servers and a CLI): an
// append is one SQLite transaction begun IMMEDIATE, which reads the chain's
// tip inside the transaction, so the writers take turns and keep one
// chain. A batch of rows (a whole sweep) is one transaction.
//
// The ledger never updates or deletes a row, never runs strategy code and
// never holds a key.
package ledger

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
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
	"time"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite"
)

// Kinds of rows.
const (
	KindBacktest    = "backtest"
	KindSweep       = "sweep" // one combination of a sweep
	KindWalkForward = "walk_forward"
)

// Kinds lists the row kinds.
var Kinds = []string{KindBacktest, KindSweep, KindWalkForward}

// Surfaces: who ran a trial.
const (
	SurfaceMCP  = "mcp"
	SurfaceCLI  = "cli"
	SurfaceData = "data-service" // a `wicket data serve` request that named no caller
)

// Who ran a trial: the surface, and for the agent its MCP session and
// caller (the caller's name under HTTP callers; empty on stdio).
type Who struct {
	Surface string `json:"surface"`
	Session string `json:"session,omitempty"`
	Caller  string `json:"caller,omitempty"`
}

// String is "cli", "mcp session S" or "mcp session S caller C".
func (w Who) String() string {
	s := w.Surface
	if s == "" {
		s = "unknown"
	}
	if w.Session != "" {
		s += " session " + w.Session
	}
	if w.Caller != "" {
		s += " caller " + w.Caller
	}
	return s
}

type whoKey struct{}

// WithWho returns ctx carrying who: research run under it is recorded as
// theirs.
func WithWho(ctx context.Context, who Who) context.Context {
	return context.WithValue(ctx, whoKey{}, who)
}

// WhoFrom is the Who ctx carries, or ok false.
func WhoFrom(ctx context.Context) (Who, bool) {
	w, ok := ctx.Value(whoKey{}).(Who)
	return w, ok
}

// Row is one trial. Append fills Seq, Time, RunID (when empty), PrevHash
// and Hash; the caller fills the rest.
type Row struct {
	Seq      int64  `json:"seq"`
	Time     string `json:"time"` // RFC3339 with nanoseconds, UTC
	Kind     string `json:"kind"`
	RunID    string `json:"run_id"`
	Who      Who    `json:"who"`
	Strategy string `json:"strategy"`
	Digest   string `json:"digest"` // SourceDigest of the strategy's text
	Series   string `json:"series"`
	From     string `json:"from"` // the range traded, RFC3339; empty when unknown
	To       string `json:"to"`
	// Params, Costs and Metrics are JSON objects (stored compact, as
	// given).
	Params  json.RawMessage `json:"params"`
	Costs   json.RawMessage `json:"costs"`
	Metrics json.RawMessage `json:"metrics"`
	// SharpePerPeriod is the run's per-period Sharpe ratio (mean/std of
	// its per-bar returns); NaN when undefined (no variance, a failed
	// run). It is what the deflated Sharpe ratio over the ledger reads.
	SharpePerPeriod float64 `json:"-"`
	PrevHash        string  `json:"prev_hash"`
	Hash            string  `json:"hash"`
}

// MarshalJSON writes SharpePerPeriod as sharpe_per_period, null when NaN.
func (r Row) MarshalJSON() ([]byte, error) {
	type plain Row
	var sr *float64
	if !math.IsNaN(r.SharpePerPeriod) && !math.IsInf(r.SharpePerPeriod, 0) {
		v := r.SharpePerPeriod
		sr = &v
	}
	return json.Marshal(struct {
		plain
		SR *float64 `json:"sharpe_per_period"`
	}{plain(r), sr})
}

// SourceDigest is the digest rows carry for a strategy's source text: the
// hex SHA-256 of its bytes.
func SourceDigest(source string) string {
	s := sha256.Sum256([]byte(source))
	return hex.EncodeToString(s[:])
}

// genesis is the PrevHash of the first row.
const genesis = "0000000000000000000000000000000000000000000000000000000000000000"

// canonical is the text a row's hash covers: a JSON array of every field
// but the hash itself, in a fixed order, the previous row's hash included.
func (r *Row) canonical() []byte {
	sr := ""
	if !math.IsNaN(r.SharpePerPeriod) {
		sr = strconv.FormatFloat(r.SharpePerPeriod, 'g', -1, 64)
	}
	b, _ := json.Marshal([]string{
		"wicket-research-ledger-v1", strconv.FormatInt(r.Seq, 10), r.Time, r.Kind, r.RunID,
		r.Who.Surface, r.Who.Session, r.Who.Caller, r.Strategy, r.Digest, r.Series, r.From, r.To,
		string(r.Params), string(r.Costs), string(r.Metrics), sr, r.PrevHash,
	})
	return b
}

// hashOf is the row's hash: hex SHA-256 of its canonical text.
func (r *Row) hashOf() string {
	s := sha256.Sum256(r.canonical())
	return hex.EncodeToString(s[:])
}

const schemaVersion = "1"

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
	hash      TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS trials_strategy_series ON trials(strategy, series);
CREATE INDEX IF NOT EXISTS trials_run ON trials(run_id);
`

// Options configure Open.
type Options struct {
	// Now stamps rows; nil means time.Now.
	Now func() time.Time
	// NewRunID mints a run id for a batch that carries none; nil means a
	// time stamp and 6 random hex digits.
	NewRunID func() string
	// BusyTimeout is how long an append waits for another writer; 0
	// means 30 seconds.
	BusyTimeout time.Duration
}

// Ledger is an open research ledger, safe for concurrent use.
type Ledger struct {
	path string
	db   *sql.DB
	opts Options
}

// ErrNotFound is returned by OpenExisting when there is no ledger yet.
var ErrNotFound = errors.New("no research ledger yet")

// Open opens the ledger at path, creating it (and its folder) when it is
// missing.
func Open(path string, opts Options) (*Ledger, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("research ledger: %w", err)
	}
	return open(path, opts, true)
}

// OpenExisting opens the ledger at path for reading and verifying; a
// missing file is ErrNotFound (wrapped), and nothing is created.
func OpenExisting(path string, opts Options) (*Ledger, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w at %s: research tools record their trials there as they run", ErrNotFound, path)
	}
	return open(path, opts, false)
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
	if err := l.init(create); err != nil {
		db.Close()
		return nil, fmt.Errorf("open the research ledger %s: %w", path, err)
	}
	return l, nil
}

func (l *Ledger) init(create bool) error {
	ctx := context.Background()
	if create {
		tx, err := l.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback() //nolint:errcheck // a no-op after Commit
		if _, err := tx.Exec(schema); err != nil {
			return err
		}
		if _, err := tx.Exec(`INSERT OR IGNORE INTO meta(key, value) VALUES ('schema', ?)`, schemaVersion); err != nil {
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	var v string
	err := l.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema'`).Scan(&v)
	switch {
	case err != nil:
		return fmt.Errorf("not a research ledger (%v)", err)
	case v != schemaVersion:
		return fmt.Errorf("ledger schema %s is not the %s this wicket reads; use the wicket that wrote it", v, schemaVersion)
	}
	return nil
}

// Path is the ledger's file.
func (l *Ledger) Path() string { return l.path }

// Close closes the ledger.
func (l *Ledger) Close() error { return l.db.Close() }

// Append adds rows as one batch, in one transaction: they get consecutive
// sequence numbers after the chain's tip, the same time stamp and, when a
// row has none, the batch's run id (one minted per batch), which Append
// returns. The rows are filled in place.
func (l *Ledger) Append(ctx context.Context, rows []Row) (string, error) {
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
	var seq int64
	prev := genesis
	err = tx.QueryRowContext(ctx, `SELECT seq, hash FROM trials ORDER BY seq DESC LIMIT 1`).Scan(&seq, &prev)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("research ledger: read the tip: %w", err)
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO trials(seq, time, kind, run_id, surface, session, caller, strategy, digest, series,
		range_from, range_to, params, costs, metrics, sharpe, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return "", fmt.Errorf("research ledger: %w", err)
	}
	defer stmt.Close()
	for i := range rows {
		r := &rows[i]
		seq++
		r.Seq, r.PrevHash = seq, prev
		r.Hash = r.hashOf()
		prev = r.Hash
		var sr sql.NullFloat64
		if !math.IsNaN(r.SharpePerPeriod) {
			sr = sql.NullFloat64{Float64: r.SharpePerPeriod, Valid: true}
		}
		if _, err := stmt.ExecContext(ctx, r.Seq, r.Time, r.Kind, r.RunID, r.Who.Surface, r.Who.Session, r.Who.Caller,
			r.Strategy, r.Digest, r.Series, r.From, r.To, string(r.Params), string(r.Costs), string(r.Metrics), sr, r.PrevHash, r.Hash); err != nil {
			return "", fmt.Errorf("research ledger: append row %d: %w", r.Seq, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return "", fmt.Errorf("research ledger: commit: %w", err)
	}
	return runID, nil
}

// normalise checks a row and compacts its JSON fields.
func (r *Row) normalise() error {
	if !validKind(r.Kind) {
		return fmt.Errorf("kind %q is not one of %s", r.Kind, strings.Join(Kinds, ", "))
	}
	if r.Strategy == "" || r.Series == "" {
		return errors.New("a row needs its strategy and series")
	}
	if r.Who.Surface == "" {
		r.Who.Surface = "unknown"
	}
	if math.IsInf(r.SharpePerPeriod, 0) {
		r.SharpePerPeriod = math.NaN()
	}
	for _, f := range []*json.RawMessage{&r.Params, &r.Costs, &r.Metrics} {
		if len(*f) == 0 {
			*f = json.RawMessage(`{}`)
			continue
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, *f); err != nil {
			return fmt.Errorf("params, costs and metrics must be JSON: %w", err)
		}
		*f = buf.Bytes()
	}
	return nil
}

func validKind(k string) bool { return slices.Contains(Kinds, k) }
