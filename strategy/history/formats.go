package history

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // --tz zones and Alpaca's New York trading day on any machine

	"wicket/strategy"
)

// Format names a bar file layout `wicket data import` reads.
type Format string

// The formats; FormatAuto detects one of the others from the file's header.
const (
	FormatAuto        Format = "auto"
	FormatWicket      Format = "wicket"
	FormatYahoo       Format = "yahoo"
	FormatBinance     Format = "binance"
	FormatTradingView Format = "tradingview"
	FormatAlpaca      Format = "alpaca"
)

// Formats lists the concrete formats with the shape each expects: one
// declaration behind --help, the unknown-format error and the docs.
var Formats = []struct {
	Format Format
	Shape  string
}{
	{FormatWicket, "time,open,high,low,close,volume (RFC3339, date or unix-second times)"},
	{FormatYahoo, "Date,Open,High,Low,Close,Adj Close,Volume (Yahoo Finance download)"},
	{FormatBinance, "12 columns and no header: open time in ms or µs, open, high, low, close, volume, close time, ... (data.binance.vision kline dump)"},
	{FormatTradingView, "time,open,high,low,close[,Volume][,indicator columns] (TradingView chart export; unix seconds or ISO times)"},
	{FormatAlpaca, "[symbol,]timestamp,open,high,low,close,volume[,trade_count,vwap] (or t,o,h,l,c,v,n,vw: Alpaca bars)"},
}

// FormatNames lists the formats --format accepts, auto first.
func FormatNames() []string {
	out := []string{string(FormatAuto)}
	for _, f := range Formats {
		out = append(out, string(f.Format))
	}
	return out
}

// ParseFormat checks a --format value.
func ParseFormat(s string) (Format, error) {
	if s == "" {
		return FormatAuto, nil
	}
	if slices.Contains(FormatNames(), s) {
		return Format(s), nil
	}
	return "", &Error{Kind: KindInvalid, Msg: fmt.Sprintf("format %s is not one of %s", quoteField(s), strings.Join(FormatNames(), ", "))}
}

// ImportOptions control Import.
type ImportOptions struct {
	Format Format // FormatAuto (or empty) detects it
	// TZ is the zone of times written without one (default UTC). A bare
	// date is a calendar day and always opens at 00:00 UTC.
	TZ *time.Location
	// Adjusted scales Yahoo's open, high, low and close by Adj Close / Close.
	Adjusted bool
	// Granularity, when set, checks every bar against its grid.
	Granularity strategy.Granularity
}

// ImportReport says how Import read a file.
type ImportReport struct {
	Format   Format
	Detected bool     // chosen by FormatAuto
	Ignored  []string // columns read past (TradingView indicators, Alpaca's vwap ...)
	NoVolume bool     // the file has no volume column; volume is stored as 0
	TimeUnit string   // Binance dumps: "ms" or "µs"
	Gaps     GapStats // holes on the granularity grid (with Granularity set)
}

// layout is how one format maps a record to a bar.
type layout struct {
	format     Format
	time       int
	ohlcv      [5]int // column of open, high, low, close, volume; volume -1 when absent
	adjClose   int    // Yahoo's Adj Close, -1 when absent
	header     bool   // the first record is a header
	parseTime  func(string) (int64, error)
	nyDayStart bool // Alpaca: a 1d bar stamped at New York midnight is that calendar day
}

var valueNames = [5]string{"open", "high", "low", "close", "volume"}

// Import reads bars from a CSV file in any of the Formats. A UTF-8 BOM,
// CRLF line endings, quoted fields and blank lines are accepted. Any bad row
// (unparsable, unsorted, duplicate, non-finite, inconsistent OHLC, off the
// granularity grid) makes the whole file an Invalid *Error naming every
// rejected row (up to 100) by its file row; no bars are returned then.
func Import(r io.Reader, opt ImportOptions) (strategy.Bars, ImportReport, error) {
	if opt.TZ == nil {
		opt.TZ = time.UTC
	}
	if opt.Format == "" {
		opt.Format = FormatAuto
	}
	br := bufio.NewReaderSize(&lineGuard{r: r}, 1<<16)
	if bom, _ := br.Peek(3); bytes.Equal(bom, []byte("\ufeff")) {
		br.Discard(3)
	}
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true

	first, err := cr.Read()
	if err == io.EOF {
		return strategy.Bars{}, ImportReport{}, &Error{Kind: KindInvalid, Msg: "the file is empty; it needs a header such as " + strings.Join(CSVHeader, ",") + " and one row per bar"}
	}
	if err != nil {
		return strategy.Bars{}, ImportReport{}, csvReadError(err)
	}
	head := make([]string, len(first))
	for i, f := range first {
		head[i] = strings.ToLower(strings.TrimSpace(f))
	}
	rep := ImportReport{Format: opt.Format}
	var lay layout
	if opt.Format == FormatAuto {
		lay, err = detect(head, first, opt, &rep)
		rep.Detected = true
	} else {
		lay, err = layoutFor(opt.Format, head, first, opt, &rep)
	}
	if err != nil {
		return strategy.Bars{}, rep, err
	}
	rep.Format = lay.format
	if opt.Adjusted && lay.format != FormatYahoo {
		return strategy.Bars{}, rep, &Error{Kind: KindInvalid, Msg: fmt.Sprintf("--adjusted applies to Yahoo files (Adj Close), not %s ones", lay.format)}
	}
	if opt.Adjusted && lay.adjClose < 0 {
		return strategy.Bars{}, rep, &Error{Kind: KindInvalid, Msg: "--adjusted needs an Adj Close column, and this file has none"}
	}

	var (
		b    strategy.Bars
		rows []RowError
		line []int
	)
	reject := func(row int, format string, a ...any) {
		rows = append(rows, RowError{Row: row, Msg: fmt.Sprintf(format, a...)})
	}
	want := lay.time
	for _, c := range lay.ohlcv {
		want = max(want, c)
	}
	want = max(want, lay.adjClose) + 1
	rec := first
	recRow := 1
	if lay.header {
		rec = nil
	}
	for len(rows) < maxRowErrors {
		if rec == nil {
			rec, err = cr.Read()
			if err == io.EOF {
				break
			}
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				reject(pe.StartLine, "%v", pe.Err)
				rec = nil
				continue
			}
			if err != nil {
				return strategy.Bars{}, rep, csvReadError(err)
			}
			recRow, _ = cr.FieldPos(0)
		}
		row := recRow
		r := rec
		rec = nil
		if len(r) < want {
			reject(row, "has %d fields, want %d", len(r), want)
			continue
		}
		t, err := lay.parseTime(r[lay.time])
		if err != nil {
			reject(row, "%v", err)
			continue
		}
		if lay.nyDayStart && opt.Granularity == "1d" {
			t = newYorkDay(t)
		}
		var v [5]float64
		bad := false
		for j, c := range lay.ohlcv {
			if c < 0 {
				continue
			}
			f, err := strconv.ParseFloat(strings.TrimSpace(r[c]), 64)
			if err != nil {
				reject(row, "%s %s is not a number", valueNames[j], quoteField(r[c]))
				bad = true
				break
			}
			v[j] = f
		}
		if bad {
			continue
		}
		if opt.Adjusted {
			adj, err := strconv.ParseFloat(strings.TrimSpace(r[lay.adjClose]), 64)
			if err != nil || math.IsNaN(adj) || math.IsInf(adj, 0) || adj <= 0 {
				reject(row, "adj close %s is not a price above zero", quoteField(r[lay.adjClose]))
				continue
			}
			if v[3] > 0 {
				k := adj / v[3]
				v[0], v[1], v[2], v[3] = v[0]*k, v[1]*k, v[2]*k, adj
			}
		}
		b.Time = append(b.Time, t)
		b.Open = append(b.Open, v[0])
		b.High = append(b.High, v[1])
		b.Low = append(b.Low, v[2])
		b.Close = append(b.Close, v[3])
		b.Volume = append(b.Volume, v[4])
		line = append(line, row)
	}
	rowOf := func(i int) int { return line[i] }
	for _, e := range validate(b, rowOf) {
		if len(rows) >= maxRowErrors {
			break
		}
		rows = append(rows, e)
	}
	if opt.Granularity != "" {
		for _, e := range OffGrid(b.Time, opt.Granularity, rowOf) {
			if len(rows) >= maxRowErrors {
				break
			}
			rows = append(rows, e)
		}
	}
	if len(rows) > 0 {
		return strategy.Bars{}, rep, rejected(rows)
	}
	if b.Len() == 0 {
		return strategy.Bars{}, rep, &Error{Kind: KindInvalid, Msg: "the file has a header but no bars, nothing imported"}
	}
	if opt.Granularity != "" {
		rep.Gaps = Gaps(b.Time, opt.Granularity)
	}
	return b, rep, nil
}

// rejected is the all-or-nothing error for a file with bad rows.
func rejected(rows []RowError) error {
	sortRows(rows)
	distinct := 0
	for i, r := range rows {
		if i == 0 || r.Row != rows[i-1].Row {
			distinct++
		}
	}
	what := fmt.Sprintf("%d rejected rows, nothing imported; fix them and import again", distinct)
	switch {
	case len(rows) >= maxRowErrors:
		what = fmt.Sprintf("at least %d rejected rows (stopped after %d problems), nothing imported; fix them and import again", distinct, maxRowErrors)
	case distinct == 1:
		what = "1 rejected row, nothing imported; fix it and import again"
	}
	return &Error{Kind: KindInvalid, Msg: what, Rows: rows}
}

// detect picks the format from the header (or, for a Binance dump, from
// its headerless 12-column numeric shape).
func detect(head, raw []string, opt ImportOptions, rep *ImportReport) (layout, error) {
	switch {
	case slices.Equal(head, CSVHeader):
		return layoutFor(FormatWicket, head, raw, opt, rep)
	case isBinanceShape(head) || (len(head) > 0 && head[0] == "open_time"):
		return layoutFor(FormatBinance, head, raw, opt, rep)
	case len(head) > 0 && (head[0] == "date" || head[0] == "datetime") && hasAll(head, "open", "high", "low", "close"):
		return layoutFor(FormatYahoo, head, raw, opt, rep)
	case slices.Contains(head, "timestamp") && hasAll(head, "open", "high", "low", "close") || hasAll(head, "t", "o", "h", "l", "c"):
		return layoutFor(FormatAlpaca, head, raw, opt, rep)
	case len(head) >= 5 && head[0] == "time" && slices.Equal(head[1:5], CSVHeader[1:5]):
		return layoutFor(FormatTradingView, head, raw, opt, rep)
	}
	return layout{}, unknownFormat(raw)
}

func hasAll(head []string, names ...string) bool {
	for _, n := range names {
		if !slices.Contains(head, n) {
			return false
		}
	}
	return true
}

func unknownFormat(raw []string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "the header %s is not a format wicket reads; the formats are:", quoteHeader(raw))
	for _, f := range Formats {
		fmt.Fprintf(&b, " %s: %s;", f.Format, f.Shape)
	}
	b.WriteString(" rename the columns to one of these, or pass --format to read the file as one")
	return &Error{Kind: KindInvalid, Msg: b.String()}
}

func isBinanceShape(head []string) bool {
	if len(head) != 12 {
		return false
	}
	for _, f := range head[:6] {
		if _, err := strconv.ParseFloat(f, 64); err != nil {
			return false
		}
	}
	_, err := strconv.ParseInt(head[0], 10, 64)
	return err == nil
}

// columns finds each wanted name in the header; alt names are tried in order.
func columns(head []string, names ...[]string) ([]int, []string) {
	idx := make([]int, len(names))
	var missing []string
	for i, alts := range names {
		idx[i] = -1
		for _, n := range alts {
			if j := slices.Index(head, n); j >= 0 {
				idx[i] = j
				break
			}
		}
		if idx[i] < 0 {
			missing = append(missing, alts[0])
		}
	}
	return idx, missing
}

func layoutFor(f Format, head, raw []string, opt ImportOptions, rep *ImportReport) (layout, error) {
	lay := layout{format: f, adjClose: -1, header: true}
	headerErr := func(missing []string) error {
		return &Error{Kind: KindInvalid, Rows: []RowError{{Row: 1, Msg: fmt.Sprintf("header is %s; a %s file needs the columns %s (missing: %s)",
			quoteHeader(raw), f, shapeOf(f), strings.Join(missing, ", "))}}, Msg: "not a " + string(f) + " file, nothing imported"}
	}
	used := map[int]bool{}
	switch f {
	case FormatWicket:
		if !headerOK(raw) {
			return lay, &Error{Kind: KindInvalid, Rows: []RowError{{Row: 1, Msg: fmt.Sprintf("header is %s; it must be exactly %s", quoteHeader(raw), strings.Join(CSVHeader, ","))}},
				Msg: "not a bar file, nothing imported"}
		}
		lay.time, lay.ohlcv = 0, [5]int{1, 2, 3, 4, 5}
		tz := opt.TZ
		lay.parseTime = func(s string) (int64, error) { return parseAnyTime(s, tz) }
		return lay, nil
	case FormatBinance:
		if !isBinanceShape(head) && (len(head) < 6 || head[0] != "open_time") {
			return lay, &Error{Kind: KindInvalid, Rows: []RowError{{Row: 1, Msg: fmt.Sprintf("starts %s; a Binance kline dump has 12 numeric columns and no header (or the open_time header)", quoteHeader(raw))}},
				Msg: "not a binance file, nothing imported"}
		}
		lay.header = !isBinanceShape(head)
		lay.time, lay.ohlcv = 0, [5]int{1, 2, 3, 4, 5}
		lay.parseTime = func(s string) (int64, error) { return binanceTime(s, rep) }
		return lay, nil
	case FormatYahoo:
		idx, missing := columns(head, []string{"date", "datetime"}, []string{"open"}, []string{"high"}, []string{"low"}, []string{"close"}, []string{"volume"})
		if len(missing) > 0 {
			return lay, headerErr(missing)
		}
		lay.time, lay.ohlcv = idx[0], [5]int(idx[1:6])
		lay.adjClose = slices.Index(head, "adj close")
		for _, i := range idx {
			used[i] = true
		}
		used[lay.adjClose] = opt.Adjusted
	case FormatTradingView:
		idx, missing := columns(head, []string{"time"}, []string{"open"}, []string{"high"}, []string{"low"}, []string{"close"})
		if len(missing) > 0 {
			return lay, headerErr(missing)
		}
		vol := slices.Index(head, "volume")
		lay.time, lay.ohlcv = idx[0], [5]int{idx[1], idx[2], idx[3], idx[4], vol}
		rep.NoVolume = vol < 0
		for _, i := range lay.ohlcv {
			used[i] = true
		}
		used[lay.time] = true
	case FormatAlpaca:
		idx, missing := columns(head, []string{"timestamp", "t"}, []string{"open", "o"}, []string{"high", "h"}, []string{"low", "l"}, []string{"close", "c"}, []string{"volume", "v"})
		if len(missing) > 0 {
			return lay, headerErr(missing)
		}
		lay.time, lay.ohlcv = idx[0], [5]int(idx[1:6])
		lay.nyDayStart = true
		for _, i := range idx {
			used[i] = true
		}
		if s := slices.Index(head, "symbol"); s >= 0 {
			used[s] = true // one file holds one series; the symbol column is not a value
		}
	default:
		return lay, &Error{Kind: KindInvalid, Msg: fmt.Sprintf("format %s is not one of %s", quoteField(string(f)), strings.Join(FormatNames(), ", "))}
	}
	for i, name := range raw {
		if !used[i] {
			rep.Ignored = append(rep.Ignored, strings.TrimSpace(name))
		}
	}
	tz := opt.TZ
	lay.parseTime = func(s string) (int64, error) { return parseAnyTime(s, tz) }
	return lay, nil
}

func shapeOf(f Format) string {
	for _, x := range Formats {
		if x.Format == f {
			return x.Shape
		}
	}
	return ""
}

// binanceTime reads a dump's open time: milliseconds, or microseconds in
// the dumps published since 2025, told apart by magnitude (any time after
// 1973 in ms is above 1e11; in µs above 1e14).
func binanceTime(s string, rep *ImportReport) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("open time %s is not an integer of milliseconds or microseconds", quoteField(s))
	}
	unit, t := "ms", n/1e3
	switch {
	case n >= 1e14:
		unit, t = "µs", n/1e6
		if n%1e6 != 0 {
			return 0, fmt.Errorf("open time %d µs is not a whole second", n)
		}
	case n%1e3 != 0:
		return 0, fmt.Errorf("open time %d ms is not a whole second", n)
	}
	if n <= 0 {
		return 0, fmt.Errorf("open time %d is not after 1970", n)
	}
	if rep.TimeUnit == "" {
		rep.TimeUnit = unit
	} else if rep.TimeUnit != unit {
		return 0, fmt.Errorf("open time %d is in %s but earlier rows are in %s", n, unit, rep.TimeUnit)
	}
	return t, nil
}

// zoneless are the date-time layouts read in --tz.
var zoneless = []string{"2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02 15:04"}

// zoned are the date-time layouts that carry their own offset.
var zoned = []string{time.RFC3339Nano, "2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05 -0700"}

// parseAnyTime reads unix seconds, a zoned or zone-less ISO date-time or a
// bare date (a calendar day: 00:00 UTC, whatever tz says).
func parseAnyTime(s string, tz *time.Location) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("time is empty")
	}
	if u, ok := fastISO(s, tz); ok {
		return u, nil
	}
	return slowTime(s, tz)
}

// maxTimeLen is longer than any time layout wicket reads (with nanoseconds
// and an offset); a longer field is refused before any layout is tried.
const maxTimeLen = 64

// slowTime is parseAnyTime without the fast path.
func slowTime(s string, tz *time.Location) (int64, error) {
	if len(s) > maxTimeLen {
		return 0, fmt.Errorf("time %s is not a time: the longest wicket reads is %d bytes", quoteField(s), maxTimeLen)
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n > 1e11 || n < -1e11 {
			return 0, fmt.Errorf("time %d is out of range for unix seconds (milliseconds? divide by 1000)", n)
		}
		return n, nil
	}
	for _, l := range zoned {
		if t, err := time.Parse(l, s); err == nil {
			return t.Unix(), nil
		}
	}
	for _, l := range zoneless {
		if t, err := time.ParseInLocation(l, s, tz); err == nil {
			return t.Unix(), nil
		}
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t.Unix(), nil
	}
	return 0, fmt.Errorf("time %s is neither ISO 8601 (2024-01-02T15:00:00Z, 2024-01-02 15:00:00), a date (2024-01-02) nor unix seconds", quoteField(s))
}

// fastISO reads the common ISO 8601 shapes without allocating:
// 2006-01-02, then optionally [T ]15:04[:05[.frac]] and Z, ±07:00 or ±0700.
// A bare date is 00:00 UTC; a date-time without a zone is in tz. ok is
// false for anything else (the slower layouts then have a go).
func fastISO(s string, tz *time.Location) (int64, bool) {
	if len(s) < 10 || s[4] != '-' || s[7] != '-' {
		return 0, false
	}
	y, ok1 := digits(s[0:4])
	mo, ok2 := digits(s[5:7])
	d, ok3 := digits(s[8:10])
	if !ok1 || !ok2 || !ok3 || mo < 1 || mo > 12 || d < 1 || d > 31 {
		return 0, false
	}
	if len(s) == 10 {
		return checkedDate(y, mo, d, 0, 0, 0, time.UTC, 0)
	}
	if (s[10] != 'T' && s[10] != ' ') || len(s) < 16 || s[13] != ':' {
		return 0, false
	}
	hh, ok1 := digits(s[11:13])
	mm, ok2 := digits(s[14:16])
	if !ok1 || !ok2 || hh > 23 || mm > 59 {
		return 0, false
	}
	rest, ss := s[16:], 0
	if len(rest) >= 3 && rest[0] == ':' {
		v, ok := digits(rest[1:3])
		if !ok || v > 59 {
			return 0, false
		}
		ss, rest = v, rest[3:]
		if len(rest) > 1 && rest[0] == '.' {
			i := 1
			for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
				i++
			}
			if i == 1 {
				return 0, false
			}
			rest = rest[i:]
		}
	}
	switch {
	case rest == "":
		return checkedDate(y, mo, d, hh, mm, ss, tz, 0)
	case rest == "Z":
		return checkedDate(y, mo, d, hh, mm, ss, time.UTC, 0)
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':',
		len(rest) == 5 && (rest[0] == '+' || rest[0] == '-'):
		oh, ok1 := digits(rest[1:3])
		om, ok2 := digits(rest[len(rest)-2:])
		if !ok1 || !ok2 || oh > 23 || om > 59 {
			return 0, false
		}
		off := int64(oh*3600 + om*60)
		if rest[0] == '-' {
			off = -off
		}
		return checkedDate(y, mo, d, hh, mm, ss, time.UTC, off)
	}
	return 0, false
}

func digits(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// checkedDate builds the time and refuses a day the month does not have
// (time.Date would roll 2024-02-30 into March).
func checkedDate(y, mo, d, hh, mm, ss int, loc *time.Location, off int64) (int64, bool) {
	t := time.Date(y, time.Month(mo), d, hh, mm, ss, 0, loc)
	if t.Day() != d {
		return 0, false
	}
	return t.Unix() - off, true
}

var newYork = mustZone("America/New_York")

func mustZone(name string) *time.Location {
	l, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return l
}

// newYorkDay maps a US stock daily bar stamped at New York midnight
// (04:00 or 05:00 UTC, as Alpaca stamps them) to 00:00 UTC of that trading
// day; any other time is returned unchanged (and the grid check judges it).
func newYorkDay(t int64) int64 {
	ny := time.Unix(t, 0).In(newYork)
	if ny.Hour() != 0 || ny.Minute() != 0 || ny.Second() != 0 {
		return t
	}
	return time.Date(ny.Year(), ny.Month(), ny.Day(), 0, 0, 0, 0, time.UTC).Unix()
}

// NewYorkDay is newYorkDay for the Alpaca provider.
func NewYorkDay(t int64) int64 { return newYorkDay(t) }

// ParseTime reads a command-line time: RFC3339, a zone-less date-time (in
// tz), a date (00:00 UTC) or unix seconds.
func ParseTime(s string, tz *time.Location) (time.Time, error) {
	if tz == nil {
		tz = time.UTC
	}
	u, err := parseAnyTime(s, tz)
	if err != nil {
		return time.Time{}, err
	}
	return time.Unix(u, 0).UTC(), nil
}
