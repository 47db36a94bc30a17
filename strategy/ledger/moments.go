package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"sync"
)

// Moments are the count, mean and sum of squared deviations of a set of
// numbers, kept one number at a time (Welford's method, stable where a
// sum of squares would cancel): what the deflated Sharpe ratio needs of
// the trials' Sharpe ratios without holding them.
type Moments struct {
	Count int
	Mean  float64
	M2    float64
}

// Add counts x in.
func (m *Moments) Add(x float64) {
	m.Count++
	d := x - m.Mean
	m.Mean += d / float64(m.Count)
	m.M2 += d * (x - m.Mean)
}

// Variance is the sample variance (n-1 in the denominator); 0 for fewer
// than two numbers.
func (m Moments) Variance() float64 {
	if m.Count < 2 {
		return 0
	}
	return m.M2 / float64(m.Count-1)
}

// seriesSums is what Trials reports of one series, folded in ledger
// order from row 1 to through: every counted trial, and each
// strategy's.
type seriesSums struct {
	through    int64
	trials     int
	sharpes    Moments
	strategies map[string]*strategySums
}

type strategySums struct {
	trials  int
	sharpes Moments
}

// add folds one counted row in.
func (s *seriesSums) add(strategy string, sr sql.NullFloat64) {
	st := s.strategies[strategy]
	if st == nil {
		st = &strategySums{}
		s.strategies[strategy] = st
	}
	s.trials++
	st.trials++
	if sr.Valid {
		s.sharpes.Add(sr.Float64)
		st.sharpes.Add(sr.Float64)
	}
}

// set is s as q's TrialSet.
func (s *seriesSums) set(q TrialQuery, scope string) TrialSet {
	set := TrialSet{Scope: scope, Series: s.trials, Sharpes: s.sharpes}
	if st := s.strategies[q.Strategy]; st != nil {
		set.Strategy = st.trials
		if scope == ScopeStrategy {
			set.Sharpes = st.sharpes
		}
	} else if scope == ScopeStrategy {
		set.Sharpes = Moments{}
	}
	return set
}

// trialSums keeps each series' seriesSums once read, so that a
// long-running process (the MCP server) reads only the rows appended
// since its last Trials on a series, not the series' whole history, on
// every sweep. The rows are append-only, so what was folded in stays
// true.
type trialSums struct {
	mu       sync.Mutex
	bySeries map[string]*seriesSums
}

// foldTrials folds the counted rows on series after s.through and up to upTo
// into s, and moves s.through to upTo. The tip is read first: rows up to
// it are all committed (Append numbers rows in commit order), so none
// can appear later below the new through.
func (l *Ledger) foldTrials(ctx context.Context, s *seriesSums, series string, upTo int64) error {
	var tip int64
	if err := l.db.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM trials`).Scan(&tip); err != nil {
		return err
	}
	upTo = min(upTo, tip)
	if upTo <= s.through {
		return nil
	}
	rows, err := l.db.QueryContext(ctx, `SELECT strategy, sharpe FROM trials WHERE series = ? AND seq > ? AND seq <= ? AND kind IN (?, ?, ?) ORDER BY seq`,
		series, s.through, upTo, CountedKinds[0], CountedKinds[1], CountedKinds[2])
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var sr sql.NullFloat64
		if err := rows.Scan(&name, &sr); err != nil {
			return err
		}
		s.add(name, sr)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	s.through = upTo
	return nil
}

// foldAppended folds rows, just committed as the rows after tip, into
// the kept sums of every series whose sums were through tip: those sums
// now hold every row to the batch's last, as a read of the rows would
// make them (the same rows in the same order, NaN and Inf stored as NULL),
// so the sweep's Trials that follows its Append reads no row.
func (l *Ledger) foldAppended(tip int64, rows []Row) {
	last := rows[len(rows)-1].Seq
	l.sums.mu.Lock()
	defer l.sums.mu.Unlock()
	for series, s := range l.sums.bySeries {
		if s.through != tip {
			continue
		}
		for i := range rows {
			r := &rows[i]
			if r.Series != series || !slices.Contains(CountedKinds, r.Kind) {
				continue
			}
			var sr sql.NullFloat64
			if !math.IsNaN(r.SharpePerPeriod) && !math.IsInf(r.SharpePerPeriod, 0) {
				sr = sql.NullFloat64{Float64: r.SharpePerPeriod, Valid: true}
			}
			s.add(r.Strategy, sr)
		}
		s.through = last
	}
}

// trialSet answers Trials from the kept sums of q.Series, reading only
// the rows after them; a question about an earlier point than they hold
// is answered by a fresh read from row 1, and not kept.
func (l *Ledger) trialSet(ctx context.Context, q TrialQuery, scope string) (TrialSet, error) {
	upTo := q.UpTo
	if upTo <= 0 {
		upTo = math.MaxInt64
	}
	l.sums.mu.Lock()
	defer l.sums.mu.Unlock()
	s, keep := l.sums.bySeries[q.Series], true
	switch {
	case s == nil:
		s = &seriesSums{strategies: map[string]*strategySums{}}
	case upTo < s.through: // an earlier point than the kept sums
		s, keep = &seriesSums{strategies: map[string]*strategySums{}}, false
	}
	if err := l.foldTrials(ctx, s, q.Series, upTo); err != nil {
		delete(l.sums.bySeries, q.Series) // partly folded: read afresh next time
		return TrialSet{}, fmt.Errorf("research ledger: %w", err)
	}
	if keep {
		if l.sums.bySeries == nil {
			l.sums.bySeries = map[string]*seriesSums{}
		}
		l.sums.bySeries[q.Series] = s
	}
	return s.set(q, scope), nil
}
