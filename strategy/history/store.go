package history

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"wicket/internal/project"
	"wicket/strategy"
)

// schemaVersion is stored in PRAGMA user_version. Version 2 added the
// series' provider symbol and fetch time (`wicket data fetch`).
const schemaVersion = 2

// The store keeps each series as blocks of up to blockBars consecutive bars,
// one row per block with each column a little-endian float64 (int64 for
// time) blob. A row per bar costs SQLite and database/sql about 0.6 µs per
// bar to read back; a block row costs about as much as a row, so loading a
// million bars reads ~250 rows instead of a million.
const schema = `
CREATE TABLE IF NOT EXISTS series (
	id     INTEGER PRIMARY KEY,
	name   TEXT NOT NULL UNIQUE,
	source TEXT NOT NULL,
	provider_symbol TEXT NOT NULL DEFAULT '', -- the provider's own symbol, for fetched series
	fetched_at      INTEGER NOT NULL DEFAULT 0, -- unix seconds of the last fetch, 0 when never fetched
	bars   INTEGER NOT NULL DEFAULT 0,
	first  INTEGER,
	last   INTEGER
);
CREATE TABLE IF NOT EXISTS blocks (
	series_id INTEGER NOT NULL REFERENCES series(id),
	start     INTEGER NOT NULL, -- open time of the block's first bar, unix seconds
	last      INTEGER NOT NULL, -- open time of its last bar
	n         INTEGER NOT NULL, -- bars in the block
	time      BLOB NOT NULL,
	open      BLOB NOT NULL,
	high      BLOB NOT NULL,
	low       BLOB NOT NULL,
	close     BLOB NOT NULL,
	volume    BLOB NOT NULL,
	PRIMARY KEY (series_id, start)
);
`

// blockBars is the most bars one block row holds.
const blockBars = 4096

// migrateV1 brings a version-1 store to version 2.
const migrateV1 = `
ALTER TABLE series ADD COLUMN provider_symbol TEXT NOT NULL DEFAULT '';
ALTER TABLE series ADD COLUMN fetched_at INTEGER NOT NULL DEFAULT 0;
`

// Sources label where a series came from; `wicket data list` shows them and
// seed-demo only ever rewrites a series whose source is SourceDemo. A
// fetched or recorded series carries its provider's name (binance, alpaca).
const (
	SourceDemo   = "demo"
	SourceImport = "import"
)

// Store is an open history store. It is safe for concurrent use; SQLite in
// WAL mode lets readers (backtest workers, the node's replay) run while a
// writer imports.
type Store struct {
	db       *sql.DB
	path     string
	readOnly bool
	version  int // the file's schema version (a read-only store may be older)
	// digests: the file keeps the series' digests (digest.go).
	digests bool
	// appended are the series this handle appended to, whose digests
	// Close stores (digest.go).
	mu       sync.Mutex
	appended map[string]bool
	// hashedHook, set by tests, runs between storeDigest's hash and its
	// insert.
	hashedHook func(series string)
}

// SeriesInfo describes one stored series.
type SeriesInfo struct {
	Name        string
	Symbol      string
	Granularity strategy.Granularity
	Source      string // SourceDemo, SourceImport or a provider's name
	// ProviderSymbol is the provider's own symbol (BTCUSDT) and FetchedAt
	// the time of the last fetch, for a series a provider filled.
	ProviderSymbol string
	FetchedAt      time.Time
	Bars           int
	First, Last    time.Time // open times of the first and last bar, UTC
}

// Open opens the store at path for reading and writing, creating the file
// (and its directory) when missing.
func Open(path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, errorf(KindStorage, "", err, "create the history store's directory")
	}
	s, err := open(path, false)
	if err != nil {
		return nil, err
	}
	if err := s.migrate(); err != nil {
		s.db.Close()
		return nil, err
	}
	return s, nil
}

// OpenReadOnly opens an existing store for reading only. A missing file is
// a NotFound error that says how to create one.
func OpenReadOnly(path string) (*Store, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, errorf(KindNotFound, "", nil, "no history store at %s yet; create it with `wicket data seed-demo` or `wicket data import FILE.csv --series SYMBOL@1h`", path)
	}
	s, err := open(path, true)
	if err != nil {
		return nil, err
	}
	var v int
	if err := s.db.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
		s.db.Close()
		return nil, errorf(KindStorage, "", err, "read the history store %s", path)
	}
	if v > schemaVersion {
		s.db.Close()
		return nil, errorf(KindStorage, "", nil, "the history store %s was written by a newer wicket (schema %d, this one knows %d); upgrade wicket", path, v, schemaVersion)
	}
	if v == 0 {
		// An empty file created by a writer that has not migrated yet.
		s.db.Close()
		return nil, errorf(KindNotFound, "", nil, "the history store %s holds no series yet; run `wicket data seed-demo` or `wicket data import`", path)
	}
	s.version = v
	if s.digests, err = s.hasDigests(); err != nil {
		s.db.Close()
		return nil, err
	}
	return s, nil
}

func open(path string, readOnly bool) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, errorf(KindStorage, "", err, "resolve the history store path")
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	if readOnly {
		q.Set("mode", "ro")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(NORMAL)")
		q.Add("_pragma", "foreign_keys(1)")
	}
	dsn := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}).String()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, errorf(KindStorage, "", err, "open the history store %s", path)
	}
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, errorf(KindStorage, "", err, "open the history store %s", path)
	}
	return &Store{db: db, path: path, readOnly: readOnly}, nil
}

func (s *Store) migrate() error {
	var v int
	if err := s.db.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
		return errorf(KindStorage, "", err, "read the history store %s", s.path)
	}
	s.version = schemaVersion
	switch {
	case v == schemaVersion:
		return s.keepDigests()
	case v > schemaVersion:
		return errorf(KindStorage, "", nil, "the history store %s was written by a newer wicket (schema %d, this one knows %d); upgrade wicket", s.path, v, schemaVersion)
	case v == 1:
		if _, err := s.db.Exec(migrateV1 + fmt.Sprintf("PRAGMA user_version = %d;", schemaVersion)); err != nil {
			return errorf(KindStorage, "", err, "upgrade the history store schema in %s", s.path)
		}
		return s.keepDigests()
	}
	if _, err := s.db.Exec(schema + fmt.Sprintf("PRAGMA user_version = %d;", schemaVersion)); err != nil {
		return errorf(KindStorage, "", err, "create the history store schema in %s", s.path)
	}
	return s.keepDigests()
}

// keepDigests makes the digests table and its triggers where they are
// missing (digest.go).
func (s *Store) keepDigests() error {
	if _, err := s.db.Exec(digestSchema); err != nil {
		return errorf(KindStorage, "", err, "create the digests table in %s", s.path)
	}
	s.digests = true
	return nil
}

// Close closes the store, storing first the digest of each series this
// handle appended to (digest.go).
func (s *Store) Close() error {
	s.digestAppended(context.Background())
	return s.db.Close()
}

// CheckSeries validates a series name: a bare name (project.ValidName) of
// the shape SYMBOL@GRANULARITY. It returns the symbol and granularity.
func CheckSeries(name string) (string, strategy.Granularity, error) {
	if err := project.ValidName("series", name); err != nil {
		return "", "", &Error{Kind: KindInvalid, Msg: err.Error(), Err: nil}
	}
	sym, g, err := strategy.ParseSeries(name)
	if err != nil {
		return "", "", &Error{Kind: KindInvalid, Msg: err.Error()}
	}
	return sym, g, nil
}

// List returns every series, sorted by name.
func (s *Store) List() ([]SeriesInfo, error) {
	rows, err := s.db.Query(`SELECT ` + s.infoColumns() + ` FROM series WHERE bars > 0 ORDER BY name`)
	if err != nil {
		return nil, errorf(KindStorage, "", err, "list series")
	}
	defer rows.Close()
	var out []SeriesInfo
	for rows.Next() {
		info, err := scanInfo(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, info)
	}
	if err := rows.Err(); err != nil {
		return nil, errorf(KindStorage, "", err, "list series")
	}
	return out, nil
}

// Info describes one series; a series that does not exist is a NotFound
// error that names how to list the ones that do.
func (s *Store) Info(series string) (SeriesInfo, error) {
	if _, _, err := CheckSeries(series); err != nil {
		return SeriesInfo{}, err
	}
	info, err := scanInfo(s.db.QueryRow(`SELECT `+s.infoColumns()+` FROM series WHERE name = ? AND bars > 0`, series))
	if errors.Is(err, sql.ErrNoRows) {
		return SeriesInfo{}, s.notFound(series)
	}
	return info, err
}

func (s *Store) notFound(series string) error {
	return errorf(KindNotFound, series, nil, "no such series in %s; `wicket data list` shows the stored ones, `wicket data seed-demo` adds demo series", filepath.Base(s.path))
}

type scanner interface{ Scan(dest ...any) error }

// infoColumns are the series columns scanInfo reads; a version-1 file
// opened read-only has no provider columns and reads them as empty.
func (s *Store) infoColumns() string {
	if s.version < 2 {
		return `name, source, '', 0, bars, first, last`
	}
	return `name, source, provider_symbol, fetched_at, bars, first, last`
}

func scanInfo(r scanner) (SeriesInfo, error) {
	var (
		info               SeriesInfo
		first, last, fetch int64
	)
	if err := r.Scan(&info.Name, &info.Source, &info.ProviderSymbol, &fetch, &info.Bars, &first, &last); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return info, err
		}
		return info, errorf(KindStorage, "", err, "read series")
	}
	info.Symbol, info.Granularity, _ = strategy.ParseSeries(info.Name)
	info.First, info.Last = time.Unix(first, 0).UTC(), time.Unix(last, 0).UTC()
	if fetch != 0 {
		info.FetchedAt = time.Unix(fetch, 0).UTC()
	}
	return info, nil
}

// Load returns the bars of series whose open time lies in [from, to], both
// inclusive; a zero from or to leaves that end open. A range holding no bars
// is an Invalid error naming the series' own range.
func (s *Store) Load(series string, from, to time.Time) (strategy.Bars, error) {
	info, lo, hi, err := s.span(series, from, to)
	if err != nil {
		return strategy.Bars{}, err
	}
	n := 0
	if from.IsZero() && to.IsZero() {
		n = info.Bars // exact; a range grows by append instead of pinning the whole series
	}
	b := strategy.Bars{
		Series: series,
		Time:   make([]int64, 0, n),
		Open:   make([]float64, 0, n),
		High:   make([]float64, 0, n),
		Low:    make([]float64, 0, n),
		Close:  make([]float64, 0, n),
		Volume: make([]float64, 0, n),
	}
	err = scanBlocks(context.Background(), s.db, series, lo, hi, func(cnt int, cols *[6]sql.RawBytes) error {
		i, j := blockSpan(cols[0], cnt, lo, hi) // the first and last blocks may reach outside [lo, hi]
		b.Time = appendInts(b.Time, cols[0][8*i:8*j])
		b.Open = appendFloats(b.Open, cols[1][8*i:8*j])
		b.High = appendFloats(b.High, cols[2][8*i:8*j])
		b.Low = appendFloats(b.Low, cols[3][8*i:8*j])
		b.Close = appendFloats(b.Close, cols[4][8*i:8*j])
		b.Volume = appendFloats(b.Volume, cols[5][8*i:8*j])
		return nil
	})
	if err != nil {
		return strategy.Bars{}, err
	}
	if b.Len() == 0 {
		return strategy.Bars{}, noBars(info, from, to)
	}
	return b, nil
}

// Count is how many bars Load(series, from, to) returns, read without
// them: the blocks' counts, less what the first and last reach outside
// [from, to]. A range holding no bars is Load's error.
func (s *Store) Count(series string, from, to time.Time) (int, error) {
	info, lo, hi, err := s.span(series, from, to)
	if err != nil {
		return 0, err
	}
	n, err := countBlocks(context.Background(), s.db, series, lo, hi)
	if err == nil && n == 0 {
		err = noBars(info, from, to)
	}
	return n, err
}

// querier is what a read needs of a *sql.DB or a *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// blocksOf is the condition selecting the blocks of a series (by name)
// that reach into [lo, hi].
const blocksOf = `FROM blocks b JOIN series s ON s.id = b.series_id
		WHERE s.name = ? AND b.last >= ? AND b.start <= ?`

// scanBlocks calls fn with each block of series that reaches into
// [lo, hi], in time order: its bar count and its six column blobs, each
// checked to hold 8 bytes a bar. The blobs are valid until fn returns.
func scanBlocks(ctx context.Context, q querier, series string, lo, hi int64, fn func(cnt int, cols *[6]sql.RawBytes) error) error {
	rows, err := q.QueryContext(ctx, `SELECT b.n, b.time, b.open, b.high, b.low, b.close, b.volume `+blocksOf+` ORDER BY b.start`, series, lo, hi)
	if err != nil {
		return errorf(KindStorage, series, err, "load bars")
	}
	defer rows.Close()
	var (
		cnt  int
		cols [6]sql.RawBytes
	)
	for rows.Next() {
		if err := rows.Scan(&cnt, &cols[0], &cols[1], &cols[2], &cols[3], &cols[4], &cols[5]); err != nil {
			return errorf(KindStorage, series, err, "load bars")
		}
		for _, c := range cols {
			if len(c) != 8*cnt {
				return corruptBlock(series, len(c), cnt)
			}
		}
		if err := fn(cnt, &cols); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return errorf(KindStorage, series, err, "load bars")
	}
	return nil
}

// countBlocks is how many bars of series lie in [lo, hi]: the counts of
// the blocks reaching into it, less the bars of those (the first and the
// last) that reach outside it.
func countBlocks(ctx context.Context, q querier, series string, lo, hi int64) (int, error) {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT coalesce(sum(b.n), 0) `+blocksOf, series, lo, hi).Scan(&n); err != nil {
		return 0, errorf(KindStorage, series, err, "count bars")
	}
	rows, err := q.QueryContext(ctx, `SELECT b.n, b.time `+blocksOf+` AND (b.start < ? OR b.last > ?)`, series, lo, hi, lo, hi)
	if err != nil {
		return 0, errorf(KindStorage, series, err, "count bars")
	}
	defer rows.Close()
	var (
		cnt int
		t   sql.RawBytes
	)
	for rows.Next() {
		if err := rows.Scan(&cnt, &t); err != nil {
			return 0, errorf(KindStorage, series, err, "count bars")
		}
		if len(t) != 8*cnt {
			return 0, corruptBlock(series, len(t), cnt)
		}
		a, b := blockSpan(t, cnt, lo, hi)
		n -= cnt - (b - a)
	}
	if err := rows.Err(); err != nil {
		return 0, errorf(KindStorage, series, err, "count bars")
	}
	return n, nil
}

// corrupt is the Storage error for a series whose stored blocks are
// damaged as what says, with the repair.
func corrupt(series, what string) error {
	return errorf(KindStorage, series, nil, "%s; re-import the series with --replace", what)
}

// corruptBlock is corrupt for a column of size bytes in a block of cnt bars.
func corruptBlock(series string, size, cnt int) error {
	return corrupt(series, fmt.Sprintf("a stored block is corrupt (%d bytes for %d bars)", size, cnt))
}

// blockSpan is the bars [a, b) of a block (its time blob of cnt bars,
// in time order) whose open time lies in [lo, hi].
func blockSpan(times []byte, cnt int, lo, hi int64) (int, int) {
	at := func(i int) int64 { return int64(binary.LittleEndian.Uint64(times[8*i:])) }
	a := sort.Search(cnt, func(i int) bool { return at(i) >= lo })
	b := sort.Search(cnt, func(i int) bool { return at(i) > hi })
	return a, max(a, b)
}

// Covers checks, without reading any bars, that series exists and that
// [from, to] (zero: open-ended) overlaps its first and last bar: Load's
// errors for a missing series, a reversed range and a range outside the
// series. A range that falls in a gap inside the series passes here and
// fails in Load.
func (s *Store) Covers(series string, from, to time.Time) error {
	_, _, _, err := s.span(series, from, to)
	return err
}

// span is series' info and [from, to] in Unix seconds, checked as Covers
// says.
func (s *Store) span(series string, from, to time.Time) (SeriesInfo, int64, int64, error) {
	info, err := s.Info(series)
	if err != nil {
		return SeriesInfo{}, 0, 0, err
	}
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if !from.IsZero() {
		lo = from.Unix()
	}
	if !to.IsZero() {
		hi = to.Unix()
	}
	if lo > hi {
		return SeriesInfo{}, 0, 0, errorf(KindInvalid, series, nil, "from %s is after to %s", from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339))
	}
	if hi < info.First.Unix() || lo > info.Last.Unix() {
		return SeriesInfo{}, 0, 0, noBars(info, from, to)
	}
	return info, lo, hi, nil
}

// noBars is the error for a range that holds no bars of the series.
func noBars(info SeriesInfo, from, to time.Time) error {
	return errorf(KindInvalid, info.Name, nil, "no bars between %s and %s; the series covers %s to %s",
		fmtTime(from, "the start"), fmtTime(to, "the end"), info.First.Format(time.RFC3339), info.Last.Format(time.RFC3339))
}

func fmtTime(t time.Time, zero string) string {
	if t.IsZero() {
		return zero
	}
	return t.UTC().Format(time.RFC3339)
}

// LastClose returns the close and open time of the newest bar of series,
// e.g. for a paper venue's starting mark.
func (s *Store) LastClose(series string) (float64, time.Time, error) {
	if _, _, err := CheckSeries(series); err != nil {
		return 0, time.Time{}, err
	}
	var (
		n   int
		t   int64
		col []byte
	)
	err := s.db.QueryRow(`SELECT b.n, b.last, b.close FROM blocks b JOIN series s ON s.id = b.series_id
		WHERE s.name = ? ORDER BY b.start DESC LIMIT 1`, series).Scan(&n, &t, &col)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, time.Time{}, s.notFound(series)
	}
	if err != nil {
		return 0, time.Time{}, errorf(KindStorage, series, err, "read the last close")
	}
	if n < 1 || len(col) != 8*n {
		return 0, time.Time{}, corrupt(series, "the last stored block is corrupt")
	}
	c := math.Float64frombits(binary.LittleEndian.Uint64(col[8*(n-1):]))
	return c, time.Unix(t, 0).UTC(), nil
}

func intBlob(v []int64) []byte {
	out := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(out[8*i:], uint64(x))
	}
	return out
}

func floatBlob(v []float64) []byte {
	out := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(out[8*i:], math.Float64bits(x))
	}
	return out
}

func appendInts(dst []int64, blob []byte) []int64 {
	for i := 0; i+8 <= len(blob); i += 8 {
		dst = append(dst, int64(binary.LittleEndian.Uint64(blob[i:])))
	}
	return dst
}

func appendFloats(dst []float64, blob []byte) []float64 {
	for i := 0; i+8 <= len(blob); i += 8 {
		dst = append(dst, math.Float64frombits(binary.LittleEndian.Uint64(blob[i:])))
	}
	return dst
}

// WriteEncodedAt writes the bars Load(series, from, to) returns to w in
// the layout strategy.Bars.Encode gives them, and returns how many it
// wrote and their digest when the store keeps it (digest.go: a range that
// holds the whole series, written whole since), else "". It never holds
// the bars: a stored block's columns are already that encoding, and each
// is written at its place, from a goroutine of its own while the next
// blocks are read (blockWriter). It is for a copy of many bars in a file,
// where Load's columns would be a second copy on the heap. The count, the
// digest and the blocks are read in one transaction, so a write to the
// series meanwhile is not seen half.
func (s *Store) WriteEncodedAt(ctx context.Context, w io.WriterAt, series string, from, to time.Time) (int, string, error) {
	info, lo, hi, err := s.span(series, from, to)
	if err != nil {
		return 0, "", err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, "", errorf(KindStorage, series, err, "load bars")
	}
	defer tx.Rollback() //nolint:errcheck // a read-only transaction
	n, err := countBlocks(ctx, tx, series, lo, hi)
	if err != nil {
		return 0, "", err
	}
	if n == 0 {
		return 0, "", noBars(info, from, to)
	}
	digest, err := s.storedDigest(ctx, tx, series, n)
	if err != nil {
		return 0, "", err
	}
	if _, err := w.WriteAt(binary.LittleEndian.AppendUint64(nil, uint64(n)), 0); err != nil {
		return 0, "", fmt.Errorf("write the bars of %s: %w", series, err)
	}
	at := 0 // bars written so far
	bw := newBlockWriter(w, n)
	err = scanBlocks(ctx, tx, series, lo, hi, func(cnt int, cols *[6]sql.RawBytes) error {
		a, b := blockSpan(cols[0], cnt, lo, hi)
		if at+b-a > n {
			return corrupt(series, "the blocks hold more bars than they count")
		}
		if !bw.put(at, cols, a, b) {
			return errWriteFailed
		}
		at += b - a
		return nil
	})
	if werr := bw.close(); werr != nil {
		return 0, "", fmt.Errorf("write the bars of %s: %w", series, werr)
	}
	if err == nil && at != n {
		err = corrupt(series, fmt.Sprintf("the blocks hold %d bars where they count %d", at, n))
	}
	if err != nil {
		return 0, "", err
	}
	return n, digest, nil
}
