package history

import (
	"context"
	"database/sql"
	"errors"
	"time"
	"wicket/strategy"
)

// WriteOptions control Write.
type WriteOptions struct {
	// Replace overwrites a series that already holds bars; without it such
	// a write is an Exists error and changes nothing.
	Replace bool
	// Source labels the series (SourceImport when empty).
	Source string
	// ProviderSymbol and FetchedAt record a provider's fill (see SeriesInfo).
	ProviderSymbol string
	FetchedAt      time.Time
}

// Write stores bars as the whole content of series in one transaction: the
// bars are validated first (see Validate), and either all land or nothing
// changes.
func (s *Store) Write(ctx context.Context, series string, bars strategy.Bars, opt WriteOptions) error {
	if _, _, err := CheckSeries(series); err != nil {
		return err
	}
	if s.readOnly {
		return errorf(KindInvalid, series, nil, "the history store was opened read-only")
	}
	if rows := Validate(bars, 1); len(rows) > 0 {
		return &Error{Kind: KindInvalid, Series: series, Msg: "bars rejected, nothing written", Rows: rows}
	}
	if bars.Len() == 0 {
		return errorf(KindInvalid, series, nil, "no bars to write")
	}
	src := opt.Source
	if src == "" {
		src = SourceImport
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return errorf(KindStorage, series, err, "begin write")
	}
	defer tx.Rollback() // a no-op after Commit
	var (
		id    int64
		count int
	)
	err = tx.QueryRowContext(ctx, `SELECT id, bars FROM series WHERE name = ?`, series).Scan(&id, &count)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		res, err := tx.ExecContext(ctx, `INSERT INTO series(name, source) VALUES (?, ?)`, series, src)
		if err != nil {
			return errorf(KindStorage, series, err, "create series")
		}
		if id, err = res.LastInsertId(); err != nil {
			return errorf(KindStorage, series, err, "create series")
		}
	case err != nil:
		return errorf(KindStorage, series, err, "read series")
	case count > 0 && !opt.Replace:
		return errorf(KindExists, series, nil, "already holds %d bars; pass --replace to overwrite it (nothing was written)", count)
	default:
		if _, err := tx.ExecContext(ctx, `DELETE FROM blocks WHERE series_id = ?`, id); err != nil {
			return errorf(KindStorage, series, err, "clear series")
		}
	}
	if err := insertBlocks(ctx, tx, series, id, bars); err != nil {
		return err
	}
	n := bars.Len()
	if _, err := tx.ExecContext(ctx, `UPDATE series SET source = ?, provider_symbol = ?, fetched_at = ?, bars = ?, first = ?, last = ? WHERE id = ?`,
		src, opt.ProviderSymbol, unixOrZero(opt.FetchedAt), n, bars.Time[0], bars.Time[n-1], id); err != nil {
		return errorf(KindStorage, series, err, "update series")
	}
	if err := putDigest(ctx, tx, series, id, n, bars.Digest()); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return errorf(KindStorage, series, err, "commit")
	}
	s.appendedTo(series, false)
	return nil
}

// Delete removes a series and its bars. Deleting a series that does not
// exist is a NotFound error.
func (s *Store) Delete(ctx context.Context, series string) error {
	if _, _, err := CheckSeries(series); err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return errorf(KindStorage, series, err, "begin delete")
	}
	defer tx.Rollback()
	var id int64
	err = tx.QueryRowContext(ctx, `SELECT id FROM series WHERE name = ?`, series).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return s.notFound(series)
	}
	if err != nil {
		return errorf(KindStorage, series, err, "read series")
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM blocks WHERE series_id = ?`, id); err != nil {
		return errorf(KindStorage, series, err, "delete bars")
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM series WHERE id = ?`, id); err != nil {
		return errorf(KindStorage, series, err, "delete series")
	}
	if err := tx.Commit(); err != nil {
		return errorf(KindStorage, series, err, "commit")
	}
	s.appendedTo(series, false)
	return nil
}

// insertBlocks writes bars as consecutive block rows of series id.
func insertBlocks(ctx context.Context, tx *sql.Tx, series string, id int64, bars strategy.Bars) error {
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO blocks(series_id, start, last, n, time, open, high, low, close, volume) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return errorf(KindStorage, series, err, "prepare insert")
	}
	defer stmt.Close()
	for lo := 0; lo < bars.Len(); lo += blockBars {
		if err := ctx.Err(); err != nil {
			return errorf(KindStorage, series, err, "write interrupted, nothing written")
		}
		hi := min(lo+blockBars, bars.Len())
		if _, err := stmt.ExecContext(ctx, id, bars.Time[lo], bars.Time[hi-1], hi-lo,
			intBlob(bars.Time[lo:hi]), floatBlob(bars.Open[lo:hi]), floatBlob(bars.High[lo:hi]),
			floatBlob(bars.Low[lo:hi]), floatBlob(bars.Close[lo:hi]), floatBlob(bars.Volume[lo:hi])); err != nil {
			return errorf(KindStorage, series, err, "insert bars %d..%d", lo, hi-1)
		}
	}
	return nil
}

func unixOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}
