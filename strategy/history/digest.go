package history

import (
	"context"
	"database/sql"
	"errors"
)

// A store keeps each series' digest (strategy.Bars.Digest of all its
// bars, the SHA-256 of their encoding) from the Write that stored them,
// so a sweep that reads the whole series to share it need not hash a
// million bars again (WriteEncodedAt). The digests table holds it; the
// triggers below delete a series' row whenever any of its blocks is
// inserted, deleted or changed, by any connection and any code (Append,
// a replacing Write before it stores the new digest, a hand edit), so a
// row that is there is the digest of the blocks as they are: a stale one
// cannot be read. A series appended to has none until it is written
// whole again, and is hashed as before. The table and the triggers are
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
