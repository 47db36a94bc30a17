package ledger

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"math"
	"path/filepath"
	"slices"
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

const columns = `seq, time, kind, run_id, surface, session, caller, strategy, digest, series, range_from, range_to, params, costs, metrics, sharpe, prev_hash, hash, audit`

type scanner interface{ Scan(dst ...any) error }

func scanRow(s scanner) (Row, error) {
	var r Row
	var params, costs, metrics, audit string
	var sr sql.NullFloat64
	err := s.Scan(&r.Seq, &r.Time, &r.Kind, &r.RunID, &r.Who.Surface, &r.Who.Session, &r.Who.Caller, &r.Strategy, &r.Digest,
		&r.Series, &r.From, &r.To, &params, &costs, &metrics, &sr, &r.PrevHash, &r.Hash, &audit)
	if err != nil {
		return Row{}, err
	}
	r.Params, r.Costs, r.Metrics = []byte(params), []byte(costs), []byte(metrics)
	if audit != "" {
		r.Audit = []byte(audit)
	}
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

// Scopes of the trials the deflated Sharpe ratio deflates by.
const (
	// ScopeSeries counts every trial on the series, whatever the
	// strategy: a renamed copy of a strategy cannot start its count
	// again. The default.
	ScopeSeries = "series"
	// ScopeStrategy counts the strategy's trials on the series (by name,
	// any source version).
	ScopeStrategy = "strategy"
)

// Scopes lists the scopes.
var Scopes = []string{ScopeSeries, ScopeStrategy}

// TrialQuery asks Trials for the trials on a series.
type TrialQuery struct {
	Strategy string
	Series   string
	// Scope is whose Sharpe ratios Trials returns: ScopeSeries (the
	// default, when empty) or ScopeStrategy.
	Scope string
	// UpTo, when positive, counts only rows 1 to UpTo: the trials as they
	// stood when that row was written.
	UpTo int64
}

// TrialSet is the trials of one series the deflated Sharpe ratio counts:
// every backtest, sweep combination and walk-forward in-sample
// combination (CountedKinds), failed ones included, since a trial that
// failed was tried all the same.
type TrialSet struct {
	Scope    string `json:"scope"`
	Series   int    `json:"series_trials"`   // every counted trial on the series, any strategy
	Strategy int    `json:"strategy_trials"` // of them, the strategy's
	// Sharpes are the moments of the defined per-period Sharpe ratios of
	// the scope's trials, in ledger order: their variance is V of the
	// deflated Sharpe ratio (a failed trial counts in N but has none).
	Sharpes Moments `json:"-"`
}

// N is the count of the scope's trials: N of the deflated Sharpe ratio.
func (t TrialSet) N() int {
	if t.Scope == ScopeStrategy {
		return t.Strategy
	}
	return t.Series
}

// Trials counts the trials on q.Series and returns the Sharpe ratios of
// q.Scope's.
func (l *Ledger) Trials(ctx context.Context, q TrialQuery) (TrialSet, error) {
	scope := q.Scope
	if scope == "" {
		scope = ScopeSeries
	}
	if !slices.Contains(Scopes, scope) {
		return TrialSet{}, fmt.Errorf("research ledger: scope %q is not one of %s", q.Scope, strings.Join(Scopes, ", "))
	}
	return l.trialSet(ctx, q, scope) // moments.go
}

// Counted is one counted trial (CountedKinds) as TrialList lists it.
type Counted struct {
	Seq      int64
	Kind     string
	Strategy string
	Sharpe   float64 // NaN when undefined or failed
}

// TrialList lists the counted trials on series, rows 1 to upTo (every
// row when upTo is 0), in ledger order: the trials behind TrialSet, one
// by one, for an audit.
func (l *Ledger) TrialList(ctx context.Context, series string, upTo int64) ([]Counted, error) {
	if upTo <= 0 {
		upTo = math.MaxInt64
	}
	rows, err := l.db.QueryContext(ctx, `SELECT seq, kind, strategy, sharpe FROM trials WHERE series = ? AND kind IN (?, ?, ?) AND seq <= ? ORDER BY seq`,
		series, CountedKinds[0], CountedKinds[1], CountedKinds[2], upTo)
	if err != nil {
		return nil, fmt.Errorf("research ledger: %w", err)
	}
	defer rows.Close()
	var out []Counted
	for rows.Next() {
		var c Counted
		var sr sql.NullFloat64
		if err := rows.Scan(&c.Seq, &c.Kind, &c.Strategy, &sr); err != nil {
			return nil, fmt.Errorf("research ledger: %w", err)
		}
		c.Sharpe = math.NaN()
		if sr.Valid {
			c.Sharpe = sr.Float64
		}
		out = append(out, c)
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
	Tip  string `json:"tip"` // the last row's hash
	// TipSeq is the last row's sequence number.
	TipSeq int64 `json:"tip_seq"`
	// KeyedFrom is the first row the key chains (1 unless the ledger was
	// migrated from the unkeyed chain).
	KeyedFrom int64 `json:"keyed_from"`
	// Anchors is how many anchors were checked; AnchoredSeq is the last
	// row an anchor vouches for.
	Anchors     int   `json:"anchors"`
	AnchoredSeq int64 `json:"anchored_seq"`
	// Held is how many of the anchors were held in a second place (the
	// node's journal); HeldSeq the last row they vouch for.
	Held    int      `json:"held,omitempty"`
	HeldSeq int64    `json:"held_seq,omitempty"`
	Notes   []string `json:"notes,omitempty"`
	Bad     *Problem `json:"bad,omitempty"`
}

// OK reports whether the chain is intact.
func (r Report) OK() bool { return r.Bad == nil }

// Verify walks the chain in sequence order and checks every row: its
// sequence number follows the previous one, its prev_hash is the previous
// row's hash, its hash is the keyed hash of its own content (the plain
// one for rows that predate the key), and it is the row an anchor
// recorded at its place. Then it checks that no anchor names a row past
// the tip. It stops at the first bad row. A removed row shows as a gap or
// a broken link; an edited row, or a chain rebuilt without the key, as a
// hash that does not match its content; a reordered row as both; a chain
// rebuilt with the key as a row that is not the anchored one; rows cut
// from the end as an anchor past the tip.
//
// Copies of the anchor file kept elsewhere (copies) are checked as well:
// they vouch for the rows they record even when the ledger and its own
// anchor file were cut in step.
func (l *Ledger) Verify(ctx context.Context, copies ...string) (Report, error) {
	return l.VerifyHeld(ctx, Held{}, copies...)
}

// Held are anchors kept in a second place (Options.Witness: the node's
// journal), named by Source; Err says why they could not be read, and
// Verify then notes it and checks without them.
type Held struct {
	Source  string
	Anchors []Anchor
	Err     error
}

// VerifyHeld is Verify with the anchors held elsewhere checked as well:
// like a copy of the anchor file, they name rows cut from the end of the
// ledger and its anchor file together, or both rolled back.
func (l *Ledger) VerifyHeld(ctx context.Context, held Held, copies ...string) (Report, error) {
	anchors, badLines, err := ReadAnchors(l.path)
	if err != nil {
		return Report{}, err
	}
	rep := Report{Tip: Genesis, KeyedFrom: l.keyedFrom}
	if l.migrated != "" {
		rep.Notes = append(rep.Notes, l.migrated)
	}
	if badLines > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d lines of %s are not anchors (a line torn by a crash, or an edit) and were skipped", badLines, filepath.Base(AnchorPath(l.path))))
	}
	for _, c := range copies {
		more, bad, err := readAnchorFile(c, false)
		if err != nil {
			return Report{}, err
		}
		if bad > 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%d lines of %s are not anchors and were skipped", bad, c))
		}
		anchors = append(anchors, more...)
	}
	switch {
	case held.Err != nil:
		rep.Notes = append(rep.Notes, fmt.Sprintf("the anchors held by %s could not be read (%v): a tail cut from the ledger and its anchor file together would not show", held.Source, held.Err))
	case held.Source != "":
		for i := range held.Anchors {
			if held.Anchors[i].MAC == "" {
				held.Anchors[i].MAC = "-" // every held anchor carries the mark: one without it is no mark
			}
		}
		anchors = append(anchors, held.Anchors...)
		rep.Held = len(held.Anchors)
		for _, a := range held.Anchors {
			rep.HeldSeq = max(rep.HeldSeq, a.Seq)
		}
	}
	if l.boundary != "" {
		rep.Bad = &Problem{Seq: 1, Expect: 1, Reason: l.boundary}
		return rep, nil
	}
	if bad := l.unmarked(anchors); bad != nil {
		rep.Bad = bad
		return rep, nil
	}
	rep.Anchors = len(anchors)
	at := make(map[int64][]Anchor, len(anchors))
	var last *Anchor
	for i, a := range anchors {
		at[a.Seq] = append(at[a.Seq], a)
		if last == nil || a.Seq > last.Seq {
			last = &anchors[i]
		}
	}
	rows, err := l.db.QueryContext(ctx, `SELECT `+columns+` FROM trials ORDER BY seq`)
	if err != nil {
		return Report{}, fmt.Errorf("research ledger: %w", err)
	}
	defer rows.Close()
	expect := int64(1)
	mac := hmac.New(sha256.New, l.opts.Key)
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
		case r.Seq < l.keyedFrom && r.plainHash() != r.Hash:
			return bad("row %d's content does not match its hash: it was edited", r.Seq)
		case r.Seq >= l.keyedFrom && !hmac.Equal([]byte(r.keyedHashWith(mac)), []byte(r.Hash)):
			return bad("row %d's content does not match its keyed hash: it was edited, or the chain was rebuilt without the ledger key", r.Seq)
		}
		for _, a := range at[r.Seq] {
			if a.Hash != r.Hash {
				return bad("row %d is not the row anchored when run %s was recorded at %s: the rows up to it were removed, edited or inserted and the chain rebuilt with the ledger key", r.Seq, a.RunID, a.Time)
			}
			rep.AnchoredSeq = r.Seq
		}
		rep.Rows++
		rep.Tip, rep.TipSeq = r.Hash, r.Seq
		expect++
	}
	if err := rows.Err(); err != nil {
		return rep, err
	}
	if last != nil && last.Seq > rep.TipSeq {
		what := fmt.Sprintf("rows %d to %d are missing from the end of the ledger", rep.TipSeq+1, last.Seq)
		if rep.TipSeq == 0 {
			what = fmt.Sprintf("every row is missing: the ledger holds none, and rows 1 to %d were recorded", last.Seq)
		}
		rep.Bad = &Problem{Seq: rep.TipSeq + 1, Expect: rep.TipSeq + 1,
			Reason: fmt.Sprintf("%s (the anchor of run %s, recorded at %s, names row %d)", what, last.RunID, last.Time, last.Seq)}
		return rep, nil
	}
	if held.Source != "" && held.Err == nil && rep.TipSeq > rep.HeldSeq {
		rep.Notes = append(rep.Notes, fmt.Sprintf("rows %d to %d are not held by %s (it was not reachable when they were recorded): a cut of them alone would not show there", rep.HeldSeq+1, rep.TipSeq, held.Source))
	}
	if rep.TipSeq > rep.AnchoredSeq {
		rep.Notes = append(rep.Notes, fmt.Sprintf("rows %d to %d have no anchor (an append stopped between its commit and its anchor): a cut of them alone would not show", rep.AnchoredSeq+1, rep.TipSeq))
	}
	return rep, nil
}

// unmarked finds the first anchor line, of the ledger's file or a copy,
// at or after anchors_keyed_from that lacks the ledger key's mark or
// carries a wrong one: a line written by someone without the key.
func (l *Ledger) unmarked(anchors []Anchor) *Problem {
	for _, a := range anchors {
		switch {
		case a.MAC != "" && !hmac.Equal([]byte(a.MAC), []byte(anchorMAC(l.opts.Key, a))):
			return &Problem{Seq: a.Seq, Expect: a.Seq, Reason: fmt.Sprintf("the anchor line of row %d (run %s) carries a mark the ledger key did not make: the anchor file was rewritten", a.Seq, a.RunID)}
		case a.MAC == "" && a.Seq >= l.anchorsFrom:
			return &Problem{Seq: a.Seq, Expect: a.Seq, Reason: fmt.Sprintf("the anchor line of row %d (run %s) lacks the ledger key's mark, which every anchor from row %d on carries: the anchor file was rewritten", a.Seq, a.RunID, l.anchorsFrom)}
		}
	}
	return nil
}
