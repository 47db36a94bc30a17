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

// zoneless are the date-time layouts read in --tz.
var zoneless = []string{"2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02 15:04"}

// zoned are the date-time layouts that carry their own offset.
var zoned = []string{time.RFC3339Nano, "2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05 -0700"}

// maxTimeLen is longer than any time layout wicket reads (with nanoseconds
// and an offset); a longer field is refused before any layout is tried.
const maxTimeLen = 64

var newYork = mustZone("America/New_York")
