package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"wicket/strategy"
)

// AppendOptions label the bars an Append adds.
type AppendOptions struct {
	// Source names who produced the bars (a provider's name). Appending to
	// a series that holds bars from another source is an Invalid error:
	// a series never mixes sources.
	Source         string
	ProviderSymbol string
	FetchedAt      time.Time
}

// Append adds bars after the last stored bar of series in one transaction,
// creating the series when it does not exist. The bars are validated (see
// Validate) and must sit on the series' granularity grid and start after
// its last stored bar; otherwise nothing changes. A fetch commits each page
// this way, so a stopped fetch keeps every page it committed.
func (s *Store) Append(ctx context.Context, series string, bars strategy.Bars, opt AppendOptions) error {
	_, g, err := CheckSeries(series)
	if err != nil {
		return err
	}
	if s.readOnly {
		return errorf(KindInvalid, series, nil, "the history store was opened read-only")
	}
	if bars.Len() == 0 {
		return nil
	}
	if opt.Source == "" {
		return errorf(KindInvalid, series, nil, "append needs a source")
	}
	if rows := Validate(bars, 1); len(rows) > 0 {
		return &Error{Kind: KindInvalid, Series: series, Msg: "bars rejected, nothing written", Rows: rows}
	}
	if rows := OffGrid(bars.Time, g, func(i int) int { return i + 1 }); len(rows) > 0 {
		return &Error{Kind: KindInvalid, Series: series, Msg: "bars off the " + string(g) + " grid, nothing written", Rows: rows}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return errorf(KindStorage, series, err, "begin append")
	}
	defer tx.Rollback()
	var (
		id          int64
		count       int
		src         string
		first, last sql.NullInt64
	)
	err = tx.QueryRowContext(ctx, `SELECT id, source, bars, first, last FROM series WHERE name = ?`, series).Scan(&id, &src, &count, &first, &last)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		res, err := tx.ExecContext(ctx, `INSERT INTO series(name, source) VALUES (?, ?)`, series, opt.Source)
		if err != nil {
			return errorf(KindStorage, series, err, "create series")
		}
		if id, err = res.LastInsertId(); err != nil {
			return errorf(KindStorage, series, err, "create series")
		}
	case err != nil:
		return errorf(KindStorage, series, err, "read series")
	}
	if count > 0 && src != opt.Source {
		return errorf(KindInvalid, series, nil, "holds %s bars, not %s ones; a series never mixes sources: `wicket data delete %s` first, or use another series name", src, opt.Source, series)
	}
	if count > 0 && bars.Time[0] <= last.Int64 {
		return errorf(KindInvalid, series, nil, "the new bars start at %s, not after the last stored bar %s; nothing written",
			unixString(bars.Time[0]), unixString(last.Int64))
	}
	// Fill the last block up before starting new ones, so a series appended
	// page by page loads as fast as one written whole.
	merged := bars
	if count > 0 {
		var (
			start, n int64
			cols     [6][]byte
		)
		err := tx.QueryRowContext(ctx, `SELECT start, n, time, open, high, low, close, volume FROM blocks
			WHERE series_id = ? ORDER BY start DESC LIMIT 1`, id).Scan(&start, &n, &cols[0], &cols[1], &cols[2], &cols[3], &cols[4], &cols[5])
		if err != nil {
			return errorf(KindStorage, series, err, "read the last block")
		}
		for _, c := range cols {
			if len(c) != 8*int(n) {
				return errorf(KindStorage, series, nil, "the last stored block is corrupt; re-fetch the series with --full")
			}
		}
		if n < blockBars {
			tail := strategy.Bars{
				Time: appendInts(nil, cols[0]), Open: appendFloats(nil, cols[1]), High: appendFloats(nil, cols[2]),
				Low: appendFloats(nil, cols[3]), Close: appendFloats(nil, cols[4]), Volume: appendFloats(nil, cols[5]),
			}
			merged = concatBars(tail, bars)
			if _, err := tx.ExecContext(ctx, `DELETE FROM blocks WHERE series_id = ? AND start = ?`, id, start); err != nil {
				return errorf(KindStorage, series, err, "rewrite the last block")
			}
		}
	}
	if err := insertBlocks(ctx, tx, series, id, merged); err != nil {
		return err
	}
	lo := bars.Time[0]
	if count > 0 {
		lo = first.Int64
	}
	if _, err := tx.ExecContext(ctx, `UPDATE series SET source = ?, provider_symbol = ?, fetched_at = ?, bars = ?, first = ?, last = ? WHERE id = ?`,
		opt.Source, opt.ProviderSymbol, unixOrZero(opt.FetchedAt), count+bars.Len(), lo, bars.Time[bars.Len()-1], id); err != nil {
		return errorf(KindStorage, series, err, "update series")
	}
	if err := tx.Commit(); err != nil {
		return errorf(KindStorage, series, err, "commit")
	}
	s.appendedTo(series, true)
	return nil
}

func concatBars(a, b strategy.Bars) strategy.Bars {
	return strategy.Bars{
		Series: a.Series,
		Time:   append(append(make([]int64, 0, a.Len()+b.Len()), a.Time...), b.Time...),
		Open:   append(append(make([]float64, 0, a.Len()+b.Len()), a.Open...), b.Open...),
		High:   append(append(make([]float64, 0, a.Len()+b.Len()), a.High...), b.High...),
		Low:    append(append(make([]float64, 0, a.Len()+b.Len()), a.Low...), b.Low...),
		Close:  append(append(make([]float64, 0, a.Len()+b.Len()), a.Close...), b.Close...),
		Volume: append(append(make([]float64, 0, a.Len()+b.Len()), a.Volume...), b.Volume...),
	}
}

// OffGrid returns a RowError for every time (unix seconds) that is not a
// multiple of the granularity g counted from the unix epoch: a 1h bar opens
// on the hour, a 1d bar at 00:00 UTC. row maps an index to its row number.
func OffGrid(times []int64, g strategy.Granularity, row func(int) int) []RowError {
	step := int64(g.Duration() / time.Second)
	if step <= 0 {
		return nil
	}
	var out []RowError
	for i, t := range times {
		if t%step != 0 && len(out) < maxRowErrors {
			out = append(out, RowError{Row: row(i), Msg: fmt.Sprintf("time %s is not on the %s grid (a %s bar opens at a multiple of %s from 00:00 UTC)",
				unixString(t), g, g, g.Duration())})
		}
	}
	return out
}

// GapStats summarises the holes in a series: Count missing stretches, the
// Largest of them (its missing time, from the end of the bar before the
// hole to the start of the bar after it) and where it starts.
type GapStats struct {
	Count   int
	Largest time.Duration
	At      time.Time // open time of the first missing bar of the largest gap
}

// Gaps finds the holes in ascending bar times of granularity g.
func Gaps(times []int64, g strategy.Granularity) GapStats {
	step := int64(g.Duration() / time.Second)
	var gs GapStats
	for i := 1; i < len(times); i++ {
		if d := times[i] - times[i-1]; d > step {
			gs.Count++
			if miss := time.Duration(d-step) * time.Second; miss > gs.Largest {
				gs.Largest, gs.At = miss, time.Unix(times[i-1]+step, 0).UTC()
			}
		}
	}
	return gs
}

func (g GapStats) String() string {
	if g.Count == 0 {
		return "no gaps"
	}
	return fmt.Sprintf("%s, the largest %s from %s", Plural(g.Count, "gap"), g.Largest, g.At.Format(time.RFC3339))
}

// Plural is "1 gap", "2 gaps".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
