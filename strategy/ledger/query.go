package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"
	"time"
)

// Filter selects rows for Query. Zero fields select everything.
type Filter struct {
	Strategy string
	Series   string
	Kind     string
	RunID    string
	Since    time.Time // rows at or after
	Before   int64     // rows with a lower seq (a page's cursor); 0 means no bound
	// Limit bounds the rows returned (the newest); 0 means no bound.
	Limit int
}

func (f Filter) where() (string, []any) {
	var conds []string
	var args []any
	add := func(cond string, v any) {
		conds = append(conds, cond)
		args = append(args, v)
	}
	if f.Strategy != "" {
		add("strategy = ?", f.Strategy)
	}
	if f.Series != "" {
		add("series = ?", f.Series)
	}
	if f.Kind != "" {
		add("kind = ?", f.Kind)
	}
	if f.RunID != "" {
		add("run_id = ?", f.RunID)
	}
	if !f.Since.IsZero() {
		// RFC3339Nano text drops trailing zeros, so its text order is
		// not time order: compare as times.
		add("julianday(time) >= julianday(?)", f.Since.UTC().Format(time.RFC3339Nano))
	}
	if f.Before > 0 {
		add("seq < ?", f.Before)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

const columns = `seq, time, kind, run_id, surface, session, caller, strategy, digest, series, range_from, range_to, params, costs, metrics, sharpe, prev_hash, hash`

type scanner interface{ Scan(dst ...any) error }

func scanRow(s scanner) (Row, error) {
	var r Row
	var params, costs, metrics string
	var sr sql.NullFloat64
	err := s.Scan(&r.Seq, &r.Time, &r.Kind, &r.RunID, &r.Who.Surface, &r.Who.Session, &r.Who.Caller, &r.Strategy, &r.Digest,
		&r.Series, &r.From, &r.To, &params, &costs, &metrics, &sr, &r.PrevHash, &r.Hash)
	if err != nil {
		return Row{}, err
	}
	r.Params, r.Costs, r.Metrics = []byte(params), []byte(costs), []byte(metrics)
	r.SharpePerPeriod = math.NaN()
	if sr.Valid {
		r.SharpePerPeriod = sr.Float64
	}
	return r, nil
}

// Query returns the rows f selects, oldest first (the newest f.Limit of
// them when f.Limit > 0), and how many rows match in all.
func (l *Ledger) Query(ctx context.Context, f Filter) ([]Row, int, error) {
	where, args := f.where()
	var total int
	if err := l.db.QueryRowContext(ctx, `SELECT count(*) FROM trials`+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("research ledger: %w", err)
	}
	q := `SELECT ` + columns + ` FROM trials` + where + ` ORDER BY seq DESC`
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	rows, err := l.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("research ledger: %w", err)
	}
	defer rows.Close()
	var out []Row
	for rows.Next() {
		r, err := scanRow(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("research ledger: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("research ledger: %w", err)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, total, nil
}

// Sharpes returns the per-period Sharpe ratios of every trial of the
// strategy (by name, any source digest) on the series that has one: the
// backtests and sweep combinations (a walk-forward run is a different
// measurement and is not a trial of one parameter set). This is the trial
// set of the deflated Sharpe ratio over the ledger.
func (l *Ledger) Sharpes(ctx context.Context, strategy, series string) ([]float64, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT sharpe FROM trials WHERE strategy = ? AND series = ? AND kind IN (?, ?) AND sharpe IS NOT NULL ORDER BY seq`,
		strategy, series, KindBacktest, KindSweep)
	if err != nil {
		return nil, fmt.Errorf("research ledger: %w", err)
	}
	defer rows.Close()
	var out []float64
	for rows.Next() {
		var v float64
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("research ledger: %w", err)
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// Problem is the first row that breaks the chain.
type Problem struct {
	Seq    int64  `json:"seq"`    // the row's sequence number as stored
	Expect int64  `json:"expect"` // the sequence number the chain expected there
	Reason string `json:"reason"`
}

// Report is what Verify found.
type Report struct {
	Rows int    `json:"rows"`
	Tip  string `json:"tip"` // the last row's hash: record it to detect a cut tail later
	// TipSeq is the last row's sequence number.
	TipSeq int64    `json:"tip_seq"`
	Bad    *Problem `json:"bad,omitempty"`
}

// OK reports whether the chain is intact.
func (r Report) OK() bool { return r.Bad == nil }

// Verify walks the chain in sequence order and checks every row: its
// sequence number follows the previous one, its prev_hash is the previous
// row's hash, and its hash is that of its own content. It stops at the
// first bad row. A removed row shows as a gap or a broken link, an edited
// row as a hash that does not match its content, a reordered row as both.
// Removing rows from the end leaves a shorter valid chain; the reported
// tip is what to compare against a tip recorded earlier.
func (l *Ledger) Verify(ctx context.Context) (Report, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT `+columns+` FROM trials ORDER BY seq`)
	if err != nil {
		return Report{}, fmt.Errorf("research ledger: %w", err)
	}
	defer rows.Close()
	rep := Report{Tip: genesis}
	expect := int64(1)
	for rows.Next() {
		r, err := scanRow(rows)
		if err != nil {
			return rep, fmt.Errorf("research ledger: %w", err)
		}
		bad := func(reason string, a ...any) (Report, error) {
			rep.Bad = &Problem{Seq: r.Seq, Expect: expect, Reason: fmt.Sprintf(reason, a...)}
			return rep, nil
		}
		switch {
		case r.Seq != expect:
			if r.Seq > expect {
				return bad("row %d follows row %d: rows %d to %d are missing", r.Seq, expect-1, expect, r.Seq-1)
			}
			return bad("row %d is out of order (expected %d)", r.Seq, expect)
		case r.PrevHash != rep.Tip:
			return bad("row %d does not link to the row before it (its prev_hash is not that row's hash): a row was removed, inserted or reordered", r.Seq)
		case r.hashOf() != r.Hash:
			return bad("row %d's content does not match its hash: it was edited", r.Seq)
		}
		rep.Rows++
		rep.Tip, rep.TipSeq = r.Hash, r.Seq
		expect++
	}
	return rep, rows.Err()
}
