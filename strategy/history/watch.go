package history

import (
	"context"
	"database/sql"
)

// Watch tells whether a store changed: it pins one connection of the
// store, on which SQLite's data_version moves whenever another
// connection (any process) commits to the file. A worker that keeps
// what it read from a store asks it before reading again.
type Watch struct{ conn *sql.Conn }

// Watch pins a connection of s for a Watch; close the Watch before s.
func (s *Store) Watch(ctx context.Context) (*Watch, error) {
	c, err := s.db.Conn(ctx)
	if err != nil {
		return nil, errorf(KindStorage, "", err, "watch the history store %s", s.path)
	}
	return &Watch{conn: c}, nil
}

// Version is the store's data version as this Watch sees it: equal to
// an earlier one exactly when no other connection committed in between.
func (w *Watch) Version(ctx context.Context) (int64, error) {
	var v int64
	if err := w.conn.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&v); err != nil {
		return 0, errorf(KindStorage, "", err, "read the history store's data version")
	}
	return v, nil
}

// Close releases the pinned connection.
func (w *Watch) Close() error { return w.conn.Close() }
