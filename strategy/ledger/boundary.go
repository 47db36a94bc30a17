package ledger

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
)

// The keyed boundaries. Two numbers in meta say where the key's
// protection begins: keyed_from, the first row whose hash is keyed (rows
// before it were written by the unkeyed wicket and carry plain SHA-256),
// and anchors_keyed_from, the first row whose anchor line carries the
// key's mark. Both are read from the file Verify checks, so both are
// keyed too (boundary_mac): someone without the key who moves keyed_from
// past the last row, to rebuild the whole chain with plain SHA-256, or
// anchors_keyed_from, to pass anchor lines without the mark, is named.
//
// A ledger made before the boundaries were keyed has no boundary_mac. One
// keyed from its first row gets it at its next open (nothing in it can be
// plain). One migrated from the unkeyed chain cannot be told from a
// downgrade, so Verify names it until an operator vouches for it once
// (TrustMigration, `wicket research verify --trust-migration`).

const boundaryDomain = "wicket-research-ledger-boundary\n"

// boundaryMAC keys the two boundaries.
func boundaryMAC(key []byte, keyedFrom, anchorsFrom int64) string {
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "%skeyed_from=%d\nanchors_keyed_from=%d", boundaryDomain, keyedFrom, anchorsFrom)
	return hex.EncodeToString(m.Sum(nil))
}

const anchorDomain = "wicket-research-ledger-anchor\n"

// anchorMAC is an anchor line's mark under the ledger key.
func anchorMAC(key []byte, a Anchor) string {
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "%s%d\n%s\n%s\n%d\n%s", anchorDomain, a.Seq, a.Hash, a.RunID, a.Rows, a.Time)
	return hex.EncodeToString(m.Sum(nil))
}

// ErrBoundary is wrapped by TrustMigration when the boundary cannot be
// vouched for.
var ErrBoundary = errors.New("research ledger boundary")

// readBoundary reads and checks the boundaries inside init's transaction,
// keying them when that is safe (a ledger keyed from its first row made
// before they were keyed). It sets keyedFrom, anchorsFrom and, when they
// cannot be trusted, boundary (why).
func (l *Ledger) readBoundary(ctx context.Context, meta func(string) (string, error), setMeta func(k, v string) error, tx *sql.Tx) error {
	from, err := meta("keyed_from")
	if err != nil {
		return err
	}
	if l.keyedFrom, err = strconv.ParseInt(from, 10, 64); err != nil || l.keyedFrom < 1 {
		return fmt.Errorf("the ledger's keyed_from %q is not a row number", from)
	}
	afrom, err := meta("anchors_keyed_from")
	if err != nil {
		return err
	}
	mac, err := meta("boundary_mac")
	if err != nil {
		return err
	}
	if mac == "" {
		var tip int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM trials`).Scan(&tip); err != nil {
			return err
		}
		l.anchorsFrom = tip + 1
		if l.keyedFrom > 1 {
			l.boundary = fmt.Sprintf("the ledger says rows 1 to %d predate its key (keyed_from %d), and that boundary is not keyed (it was written before wicket keyed it): "+
				"it cannot be told from a downgrade forged so that rebuilt rows pass by plain SHA-256. If this ledger was migrated from the unkeyed one and you trust it, "+
				"vouch for it once with `wicket research verify --trust-migration`", l.keyedFrom-1, l.keyedFrom)
			return nil
		}
		return l.keyBoundary(setMeta)
	}
	if l.anchorsFrom, err = strconv.ParseInt(afrom, 10, 64); err != nil || l.anchorsFrom < 1 {
		l.anchorsFrom = 1
	}
	if !hmac.Equal([]byte(mac), []byte(boundaryMAC(l.opts.Key, l.keyedFrom, l.anchorsFrom))) {
		l.boundary = fmt.Sprintf("the ledger's keyed boundaries (keyed_from %s, anchors_keyed_from %s) are not the ones the ledger key recorded: its meta table was edited, "+
			"as a forger without the key would to pass rebuilt rows by plain SHA-256", from, afrom)
		l.keyedFrom, l.anchorsFrom = 1, 1 // check every row and anchor under the key
	}
	return nil
}

// keyBoundary stores the boundaries and their mark.
func (l *Ledger) keyBoundary(setMeta func(k, v string) error) error {
	for k, v := range map[string]string{
		"keyed_from":         strconv.FormatInt(l.keyedFrom, 10),
		"anchors_keyed_from": strconv.FormatInt(l.anchorsFrom, 10),
		"boundary_mac":       boundaryMAC(l.opts.Key, l.keyedFrom, l.anchorsFrom),
	} {
		if err := setMeta(k, v); err != nil {
			return err
		}
	}
	return nil
}

// TrustMigration keys the boundary of a ledger migrated from the unkeyed
// chain before boundaries were keyed: the operator vouches that
// keyed_from is the migration's. It refuses a boundary that was keyed and
// edited since.
func (l *Ledger) TrustMigration(ctx context.Context) error {
	if l.boundary == "" {
		return nil
	}
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	var mac string
	err = tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'boundary_mac'`).Scan(&mac)
	switch {
	case err == nil:
		return fmt.Errorf("%w: its keyed boundary was edited, which no operator can vouch for: restore the ledger from a backup", ErrBoundary)
	case !errors.Is(err, sql.ErrNoRows):
		return err
	}
	setMeta := func(k, v string) error {
		_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)`, k, v)
		return err
	}
	if err := l.keyBoundary(setMeta); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	l.boundary = ""
	return nil
}
