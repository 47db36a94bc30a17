package history

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
)

// A store keeps each series' digest (strategy.Bars.Digest of all its
// bars, the SHA-256 of their encoding) from the Write that stored them,
// so a sweep that reads the whole series to share it need not hash a
// million bars again (WriteEncodedAt). The digests table holds it; the
// triggers below delete a series' row whenever any of its blocks is
// inserted, deleted or changed, by any connection and any code (Append,
// a replacing Write before it stores the new digest, a hand edit), so a
// row that is there is the digest of the blocks as they are: a stale one
// cannot be read. A series appended to has none until the handle that
// appended is closed (a fetch's end: digestAppended) or it is written
// whole again; meanwhile it is hashed as before. The table and the triggers are
// made by every writer's Open (IF NOT EXISTS); a store no writer of this
// version has opened has neither, and is hashed as before.
const digestSchema = `
CREATE TABLE IF NOT EXISTS digests (
	series_id INTEGER PRIMARY KEY, -- series(id)
	bars      INTEGER NOT NULL,    -- the bars it is the digest of: all the series' bars
	digest    TEXT NOT NULL        -- strategy.Bars.Digest of them
);
CREATE TRIGGER IF NOT EXISTS digests_block_insert AFTER INSERT ON blocks
	BEGIN DELETE FROM digests WHERE series_id = NEW.series_id; END;
CREATE TRIGGER IF NOT EXISTS digests_block_delete AFTER DELETE ON blocks
	BEGIN DELETE FROM digests WHERE series_id = OLD.series_id; END;
CREATE TRIGGER IF NOT EXISTS digests_block_update AFTER UPDATE ON blocks
	BEGIN DELETE FROM digests WHERE series_id IN (OLD.series_id, NEW.series_id); END;
CREATE TRIGGER IF NOT EXISTS digests_series_delete AFTER DELETE ON series
	BEGIN DELETE FROM digests WHERE series_id = OLD.id; END;
`

// hasDigests says whether the store's file has the digests table (a
// writer of this version opened it).
func (s *Store) hasDigests() (bool, error) {
	var n int
	err := s.db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'digests'`).Scan(&n)
	if err != nil {
		return false, errorf(KindStorage, "", err, "read the history store %s", s.path)
	}
	return n > 0, nil
}

// putDigest stores digest as that of the n bars series id holds now; in
// the transaction that wrote them, after the last block.
func putDigest(ctx context.Context, tx *sql.Tx, series string, id int64, n int, digest string) error {
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO digests(series_id, bars, digest) VALUES (?, ?, ?)`, id, n, digest); err != nil {
		return errorf(KindStorage, series, err, "store the bars' digest")
	}
	return nil
}

// storedDigest is the digest the store keeps of the n bars of series in
// a range, or "" when it keeps none for them: only a range that holds all
// the series' bars has one. In the transaction that reads the bars.
func (s *Store) storedDigest(ctx context.Context, q querier, series string, n int) (string, error) {
	if !s.digests {
		return "", nil
	}
	var (
		all, bars int
		digest    string
	)
	err := q.QueryRowContext(ctx, `SELECT s.bars, d.bars, d.digest FROM digests d JOIN series s ON s.id = d.series_id WHERE s.name = ?`, series).Scan(&all, &bars, &digest)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", nil
	case err != nil:
		return "", errorf(KindStorage, series, err, "read the bars' digest")
	case n != all || n != bars:
		return "", nil
	}
	return digest, nil
}

// appendedTo records whether series awaits its digest from Close: it
// does once this handle appended to it, and no longer once it wrote it
// whole (with its digest) or deleted it.
func (s *Store) appendedTo(series string, yes bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !yes {
		delete(s.appended, series)
		return
	}
	if s.appended == nil {
		s.appended = map[string]bool{}
	}
	s.appended[series] = true
}

// digestAppended stores the digest of each series this handle appended
// to (a fetch's pages, a recorder's bars), once, when it is closed, so a
// later sweep of the whole series need not hash it. It is a cache: a
// digest it cannot store (the series changed meanwhile, the store is
// busy) is left out, and that series is hashed when read.
func (s *Store) digestAppended(ctx context.Context) {
	s.mu.Lock()
	series := slices.Sorted(maps.Keys(s.appended))
	s.appended = nil
	s.mu.Unlock()
	if s.readOnly || !s.digests {
		return
	}
	for _, name := range series {
		s.storeDigest(ctx, name) //nolint:errcheck // a digest not stored is computed when read
	}
}

// digestColumns are the blocks' columns in the order strategy.Bars.Encode
// lays them out.
var digestColumns = [6]string{"time", "open", "high", "low", "close", "volume"}

// storeDigest hashes the bars series holds now, as strategy.Bars.Digest
// does, one column at a time straight from the blocks (never holding the
// bars), and stores the digest, all in one transaction: its first read
// fixes the snapshot it hashes, and SQLite lets it write only while no
// other connection has committed since (else the insert fails, and
// nothing is stored: TestDigestOnCloseRace).
func (s *Store) storeDigest(ctx context.Context, series string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	var id, n int64
	if err := tx.QueryRowContext(ctx, `SELECT id, bars FROM series WHERE name = ?`, series).Scan(&id, &n); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	h := sha256.New()
	h.Write(binary.LittleEndian.AppendUint64(nil, uint64(n)))
	for _, col := range digestColumns {
		if err := hashColumn(ctx, tx, h, series, col, id, n); err != nil {
			return err
		}
	}
	if s.hashedHook != nil {
		s.hashedHook(series)
	}
	if err := putDigest(ctx, tx, series, id, int(n), hex.EncodeToString(h.Sum(nil))); err != nil {
		return err
	}
	return tx.Commit()
}

// hashColumn writes column col of the blocks of series id, in time
// order, to h; they must hold n bars.
func hashColumn(ctx context.Context, tx *sql.Tx, h io.Writer, series, col string, id, n int64) error {
	rows, err := tx.QueryContext(ctx, `SELECT n, `+col+` FROM blocks WHERE series_id = ? ORDER BY start`, id)
	if err != nil {
		return err
	}
	defer rows.Close()
	var (
		got, cnt int64
		blob     sql.RawBytes
	)
	for rows.Next() {
		if err := rows.Scan(&cnt, &blob); err != nil {
			return err
		}
		if int64(len(blob)) != 8*cnt {
			return corruptBlock(series, len(blob), int(cnt))
		}
		h.Write(blob)
		got += cnt
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if got != n {
		return corrupt(series, fmt.Sprintf("the blocks hold %d bars where the series counts %d", got, n))
	}
	return nil
}
