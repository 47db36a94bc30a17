package history

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
)

// Funding rates of perpetual futures live beside the bars: one row per
// settlement of a symbol, the rate as the exchange wrote it (a decimal
// string, never a float). The table is created by the first write, so a
// store without funding has no table and reads as holding none.
const fundingSchema = `
CREATE TABLE IF NOT EXISTS funding (
	symbol TEXT NOT NULL,    -- FundingSymbol of the pair, e.g. BTC-USD
	time   INTEGER NOT NULL, -- settlement time, unix milliseconds
	rate   TEXT NOT NULL,    -- decimal, e.g. 0.00010000 (longs pay shorts when positive)
	PRIMARY KEY (symbol, time)
) WITHOUT ROWID;
`

// FundingRate is one funding settlement.
type FundingRate struct {
	Time time.Time       // settlement time (milliseconds kept)
	Rate decimal.Decimal // 0.0001 is 0.01 %
}

// FundingSymbol is the name funding rates are stored under for a pair:
// upper case, with a USDT quote read as USD (the pair BTC-USD's bars
// and BTC-USDT's perpetual are the same market to a backtest), so
// `--funding BTC-USDT` and a series BTC-USD@1h meet.
func FundingSymbol(sym string) (string, error) {
	sym = strings.ToUpper(strings.TrimSpace(sym))
	if err := project.ValidName("symbol", sym); err != nil {
		return "", &Error{Kind: KindInvalid, Msg: err.Error()}
	}
	if base, ok := strings.CutSuffix(sym, "-USDT"); ok {
		sym = base + "-USD"
	}
	return sym, nil
}

// FundingInfo describes a symbol's stored funding rates.
type FundingInfo struct {
	Symbol      string
	Count       int
	First, Last time.Time
}

// WriteFunding stores settlements of sym in one transaction, replacing
// any stored at the same times.
func (s *Store) WriteFunding(ctx context.Context, sym string, rates []FundingRate) error {
	key, err := FundingSymbol(sym)
	if err != nil {
		return err
	}
	if s.readOnly {
		return errorf(KindInvalid, "", nil, "the history store was opened read-only")
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return errorf(KindStorage, "", err, "begin the funding write")
	}
	defer tx.Rollback() // a no-op after Commit
	if _, err := tx.ExecContext(ctx, fundingSchema); err != nil {
		return errorf(KindStorage, "", err, "create the funding table")
	}
	st, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO funding(symbol, time, rate) VALUES (?, ?, ?)`)
	if err != nil {
		return errorf(KindStorage, "", err, "write funding rates")
	}
	defer st.Close()
	for _, r := range rates {
		if _, err := st.ExecContext(ctx, key, r.Time.UnixMilli(), r.Rate.String()); err != nil {
			return errorf(KindStorage, "", err, "write funding rates of %s", key)
		}
	}
	if err := tx.Commit(); err != nil {
		return errorf(KindStorage, "", err, "commit funding rates of %s", key)
	}
	return nil
}

// hasFunding reports whether the store has a funding table.
func (s *Store) hasFunding() (bool, error) {
	var n int
	if err := s.db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'funding'`).Scan(&n); err != nil {
		return false, errorf(KindStorage, "", err, "read the history store %s", s.path)
	}
	return n > 0, nil
}

// FundingInfo describes sym's stored funding; Count 0 when there is none.
func (s *Store) FundingInfo(sym string) (FundingInfo, error) {
	key, err := FundingSymbol(sym)
	if err != nil {
		return FundingInfo{}, err
	}
	info := FundingInfo{Symbol: key}
	if ok, err := s.hasFunding(); err != nil || !ok {
		return info, err
	}
	var first, last *int64
	if err := s.db.QueryRow(`SELECT count(*), min(time), max(time) FROM funding WHERE symbol = ?`, key).Scan(&info.Count, &first, &last); err != nil {
		return info, errorf(KindStorage, "", err, "read funding rates of %s", key)
	}
	if info.Count > 0 {
		info.First, info.Last = time.UnixMilli(*first).UTC(), time.UnixMilli(*last).UTC()
	}
	return info, nil
}

// Funding reads sym's settlements in [from, to] (zero: open), in time
// order; none (and no error) when the store holds none.
func (s *Store) Funding(sym string, from, to time.Time) ([]FundingRate, error) {
	key, err := FundingSymbol(sym)
	if err != nil {
		return nil, err
	}
	if ok, err := s.hasFunding(); err != nil || !ok {
		return nil, err
	}
	lo, hi := int64(-1<<63), int64(1<<63-1)
	if !from.IsZero() {
		lo = from.UnixMilli()
	}
	if !to.IsZero() {
		hi = to.UnixMilli()
	}
	rows, err := s.db.Query(`SELECT time, rate FROM funding WHERE symbol = ? AND time >= ? AND time <= ? ORDER BY time`, key, lo, hi)
	if err != nil {
		return nil, errorf(KindStorage, "", err, "read funding rates of %s", key)
	}
	defer rows.Close()
	var out []FundingRate
	for rows.Next() {
		var (
			ms   int64
			rate string
		)
		if err := rows.Scan(&ms, &rate); err != nil {
			return nil, errorf(KindStorage, "", err, "read funding rates of %s", key)
		}
		d, err := decimal.NewFromString(rate)
		if err != nil {
			return nil, errorf(KindStorage, "", err, "funding rate %q of %s at %s is not a decimal", rate, key, time.UnixMilli(ms).UTC().Format(time.RFC3339))
		}
		out = append(out, FundingRate{Time: time.UnixMilli(ms).UTC(), Rate: d})
	}
	if err := rows.Err(); err != nil {
		return nil, errorf(KindStorage, "", err, "read funding rates of %s", key)
	}
	return out, nil
}

// String is one line about the stored funding.
func (f FundingInfo) String() string {
	if f.Count == 0 {
		return fmt.Sprintf("%s: no funding rates", f.Symbol)
	}
	return fmt.Sprintf("%s: %s from %s to %s", f.Symbol, Plural(f.Count, "funding settlement"), f.First.Format(time.RFC3339), f.Last.Format(time.RFC3339))
}
