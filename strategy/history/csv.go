package history

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"wicket/strategy"
)

// CSVHeader is the header an import file must start with.
var CSVHeader = []string{"time", "open", "high", "low", "close", "volume"}

// maxRowErrors bounds how many rejected rows one parse collects before it
// stops reading: enough to show a pattern, not a second copy of a broken file.
const maxRowErrors = 100

// ParseCSV reads bars from CSV text with the header
// time,open,high,low,close,volume. A time is RFC3339
// (2024-01-02T15:00:00Z, any offset, stored as UTC), a date (2024-01-02,
// midnight UTC) or integer unix seconds. Rows must be in strictly ascending
// time order with finite prices above zero, a volume of zero or more, and
// low <= open, close <= high.
//
// Any bad row makes the whole file an Invalid *Error listing every rejected
// row (up to 100) by its row number, the header being row 1; no bars are
// returned then.
func ParseCSV(r io.Reader) (strategy.Bars, error) {
	b, _, err := Import(r, ImportOptions{Format: FormatWicket})
	return b, err
}

func csvReadError(err error) error {
	return &Error{Kind: KindInvalid, Msg: "cannot read the CSV file", Err: err}
}

func headerOK(h []string) bool {
	if len(h) != len(CSVHeader) {
		return false
	}
	for i, want := range CSVHeader {
		got := strings.TrimSpace(h[i])
		if i == 0 {
			got = strings.TrimPrefix(got, "\ufeff")
		}
		if !strings.EqualFold(got, want) {
			return false
		}
	}
	return true
}

// Validate checks bars the way an import does and returns every problem
// (up to 100), numbering bars from firstRow.
func Validate(b strategy.Bars, firstRow int) []RowError {
	n := b.Len()
	if len(b.Open) != n || len(b.High) != n || len(b.Low) != n || len(b.Close) != n || len(b.Volume) != n {
		return []RowError{{Row: firstRow, Msg: "the bar columns have different lengths"}}
	}
	return validate(b, func(i int) int { return firstRow + i })
}

func validate(b strategy.Bars, row func(int) int) []RowError {
	var out []RowError
	add := func(i int, format string, a ...any) {
		if len(out) < maxRowErrors {
			out = append(out, RowError{Row: row(i), Msg: fmt.Sprintf(format, a...)})
		}
	}
	for i := range b.Time {
		if i > 0 {
			switch t, prev := b.Time[i], b.Time[i-1]; {
			case t == prev:
				add(i, "duplicate time %s (same as row %d)", unixString(t), row(i-1))
			case t < prev:
				add(i, "time %s is before row %d's %s; rows must be sorted by time, oldest first", unixString(t), row(i-1), unixString(prev))
			}
		}
		o, h, l, c, v := b.Open[i], b.High[i], b.Low[i], b.Close[i], b.Volume[i]
		bad := false
		for j, x := range [...]float64{o, h, l, c} {
			if math.IsNaN(x) || math.IsInf(x, 0) || x <= 0 {
				add(i, "%s %v must be a finite price above zero", CSVHeader[j+1], x)
				bad = true
			}
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			add(i, "volume %v must be finite and not negative", v)
			bad = true
		}
		if bad {
			continue
		}
		switch {
		case l > h:
			add(i, "low %v is above high %v", l, h)
		case o > h || c > h:
			add(i, "high %v is below open %v or close %v", h, o, c)
		case o < l || c < l:
			add(i, "low %v is above open %v or close %v", l, o, c)
		}
	}
	return out
}

func unixString(t int64) string { return time.Unix(t, 0).UTC().Format(time.RFC3339) }

func sortRows(rows []RowError) {
	slices.SortStableFunc(rows, func(a, b RowError) int { return cmp.Compare(a.Row, b.Row) })
}
