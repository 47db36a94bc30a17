package history

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"wicket/strategy"
)

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "import", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func utc(s string) int64 {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.Unix()
}

func TestImportFormats(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	for _, tc := range []struct {
		file     string
		g        strategy.Granularity
		opt      ImportOptions
		format   Format
		n        int
		first    int64
		o, c, v  float64 // the first bar's open, close and volume
		unit     string
		ignored  []string
		noVolume bool
		gaps     int
	}{
		{file: "wicket_acme_1h.csv", g: "1h", format: FormatWicket, n: 3, first: utc("2024-01-01T00:00:00Z"), o: 100, c: 100.5, v: 10, gaps: 1},
		{file: "yahoo_spy_1d.csv", g: "1d", format: FormatYahoo, n: 5, first: utc("2024-01-02T00:00:00Z"), o: 472.160004, c: 472.649994, v: 123623700, ignored: []string{"Adj Close"}, gaps: 1},
		{file: "binance_btcusdt_1m_ms.csv", g: "1m", format: FormatBinance, n: 3, first: utc("2024-01-01T00:00:00Z"), o: 42283.58, c: 42298.61, v: 35.92724, unit: "ms"},
		{file: "binance_btcusdt_1m_us.csv", g: "1m", format: FormatBinance, n: 2, first: utc("2025-01-01T00:00:00Z"), o: 93576, c: 93610.93, v: 8.21827, unit: "µs"},
		{file: "binance_header_1m.csv", g: "1m", format: FormatBinance, n: 2, first: utc("2024-01-01T00:00:00Z"), o: 42283.58, c: 42298.61, v: 35.92724, unit: "ms"},
		{file: "tradingview_btcusd_1h.csv", g: "1h", format: FormatTradingView, n: 3, first: utc("2024-01-01T00:00:00Z"), o: 42280.1, c: 42475.2, v: 1271.68, ignored: []string{"MA", "Volume MA"}},
		{file: "tradingview_spx_1d_novolume.csv", g: "1d", format: FormatTradingView, n: 3, first: utc("2024-01-02T00:00:00Z"), o: 4745.2, c: 4742.83, v: 0, noVolume: true},
		// This TradingView header is exactly wicket's, so auto calls it wicket.
		{file: "tradingview_es_15m_local.csv", g: "15m", opt: ImportOptions{TZ: ny}, format: FormatWicket, n: 2, first: utc("2024-01-02T14:30:00Z"), o: 4790.25, c: 4793.75, v: 52310},
		{file: "alpaca_spy_1d.csv", g: "1d", format: FormatAlpaca, n: 2, first: utc("2024-01-02T00:00:00Z"), o: 472.16, c: 472.65, v: 123623700, ignored: []string{"trade_count", "vwap"}},
		{file: "alpaca_btc_1h_short.csv", g: "1h", format: FormatAlpaca, n: 2, first: utc("2024-01-01T00:00:00Z"), o: 42283.5, c: 42475.2, v: 12.5, ignored: []string{"n", "vw"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			opt := tc.opt
			opt.Granularity = tc.g
			b, rep, err := Import(bytes.NewReader(fixture(t, tc.file)), opt)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Format != tc.format || !rep.Detected {
				t.Errorf("format %s (detected %v), want %s", rep.Format, rep.Detected, tc.format)
			}
			if b.Len() != tc.n || b.Time[0] != tc.first || b.Open[0] != tc.o || b.Close[0] != tc.c || b.Volume[0] != tc.v {
				t.Errorf("got %d bars, first %s o=%v c=%v v=%v", b.Len(), unixString(b.Time[0]), b.Open[0], b.Close[0], b.Volume[0])
			}
			if rep.TimeUnit != tc.unit || rep.NoVolume != tc.noVolume || !slices.Equal(rep.Ignored, tc.ignored) || rep.Gaps.Count != tc.gaps {
				t.Errorf("report %+v", rep)
			}
			// The explicit --format reads it the same.
			opt.Format = tc.format
			b2, _, err := Import(bytes.NewReader(fixture(t, tc.file)), opt)
			if err != nil || !slices.Equal(b2.Time, b.Time) || !slices.Equal(b2.Close, b.Close) {
				t.Errorf("--format %s: %v", tc.format, err)
			}
			// Every variant a spreadsheet or another OS produces reads the same.
			for name, variant := range variants(fixture(t, tc.file)) {
				opt.Format = FormatAuto
				v, _, err := Import(bytes.NewReader(variant), opt)
				if err != nil {
					t.Errorf("%s: %v", name, err)
					continue
				}
				if !slices.Equal(v.Time, b.Time) || !slices.Equal(v.Open, b.Open) || !slices.Equal(v.Volume, b.Volume) {
					t.Errorf("%s: bars differ", name)
				}
			}
		})
	}
}

// variants rewrites a CSV file with a BOM, CRLF line endings, every field
// quoted, and a trailing blank line.
func variants(src []byte) map[string][]byte {
	lines := strings.Split(strings.TrimRight(string(src), "\n"), "\n")
	quoted := make([]string, len(lines))
	for i, l := range lines {
		f := strings.Split(l, ",")
		for j := range f {
			f[j] = `"` + f[j] + `"`
		}
		quoted[i] = strings.Join(f, ",")
	}
	return map[string][]byte{
		"bom":      append([]byte("\ufeff"), src...),
		"crlf":     []byte(strings.Join(lines, "\r\n") + "\r\n"),
		"quoted":   []byte(strings.Join(quoted, "\n") + "\n"),
		"trailing": append(append([]byte{}, src...), '\n', '\n'),
		"all":      []byte("\ufeff" + strings.Join(quoted, "\r\n") + "\r\n\r\n"),
	}
}

func TestImportYahooAdjusted(t *testing.T) {
	b, _, err := Import(bytes.NewReader(fixture(t, "yahoo_spy_1d.csv")), ImportOptions{Adjusted: true, Granularity: "1d"})
	if err != nil {
		t.Fatal(err)
	}
	k := 466.562592 / 472.649994
	if b.Close[0] != 466.562592 || b.Open[0] != 472.160004*k || b.High[0] != 473.670013*k || b.Volume[0] != 123623700 {
		t.Fatalf("adjusted first bar o=%v h=%v c=%v v=%v", b.Open[0], b.High[0], b.Close[0], b.Volume[0])
	}
	if rows := Validate(b, 1); len(rows) > 0 {
		t.Fatalf("adjusted bars invalid: %v", rows)
	}
	_, _, err = Import(bytes.NewReader(fixture(t, "wicket_acme_1h.csv")), ImportOptions{Adjusted: true})
	if err == nil || !strings.Contains(err.Error(), "--adjusted applies to Yahoo files") {
		t.Fatalf("--adjusted on a wicket file: %v", err)
	}
}

func TestImportRefusesWithRows(t *testing.T) {
	_, _, err := Import(bytes.NewReader(fixture(t, "offgrid_1d.csv")), ImportOptions{Granularity: "1d"})
	var he *Error
	if !errors.As(err, &he) || len(he.Rows) != 2 || he.Rows[0].Row != 3 || he.Rows[1].Row != 5 || !strings.Contains(he.Rows[0].Msg, "not on the 1d grid") {
		t.Fatalf("off-grid: %v", err)
	}
	// The same file is on the 1h grid except the 12:30 bar.
	_, _, err = Import(bytes.NewReader(fixture(t, "offgrid_1d.csv")), ImportOptions{Granularity: "1h"})
	if !errors.As(err, &he) || len(he.Rows) != 1 || he.Rows[0].Row != 5 {
		t.Fatalf("off the 1h grid: %v", err)
	}
	_, _, err = Import(bytes.NewReader(fixture(t, "duplicate_1h.csv")), ImportOptions{Granularity: "1h"})
	if !errors.As(err, &he) || len(he.Rows) != 1 || he.Rows[0].Row != 4 || !strings.Contains(he.Rows[0].Msg, "duplicate time 2024-01-02T11:00:00Z (same as row 3)") {
		t.Fatalf("duplicate: %v", err)
	}
	// Mixed ms and µs in one Binance dump is refused.
	mixed := string(fixture(t, "binance_btcusdt_1m_ms.csv")) + "1704067380000000,1,1,1,1,1,1704067439999999,1,1,1,1,0\n"
	_, _, err = Import(strings.NewReader(mixed), ImportOptions{})
	if !errors.As(err, &he) || he.Rows[0].Row != 4 || !strings.Contains(he.Rows[0].Msg, "in µs but earlier rows are in ms") {
		t.Fatalf("mixed units: %v", err)
	}
}

func TestImportUnknownFormat(t *testing.T) {
	_, _, err := Import(strings.NewReader("\ufeffDatum;Eröffnung;Hoch\n01.02.2024;1;2\n"), ImportOptions{})
	if err == nil {
		t.Fatal("an unknown header was read")
	}
	for _, want := range []string{`the header "Datum;Eröffnung;Hoch" is not a format wicket reads`, "wicket: time,open", "yahoo: Date,Open", "binance: 12 columns", "tradingview:", "alpaca:", "--format"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if _, err := ParseFormat("excel"); err == nil || !strings.Contains(err.Error(), "auto, wicket, yahoo, binance, tradingview, alpaca") {
		t.Errorf("ParseFormat(excel): %v", err)
	}
}

// TestExportImportRoundTrip: export, import, export again is byte for byte
// the first export, and the bars are the same float64s.
func TestExportImportRoundTrip(t *testing.T) {
	hourly, _ := DemoBars(DemoSymbols[2])
	in := hourly.Slice(0, 2000)
	in.Volume[3] = 0
	in.Close[4] = 0.1 + 0.2 // a float with no short decimal
	in.High[4] = max(in.High[4], in.Close[4])
	in.Low[4] = min(in.Low[4], in.Close[4], in.Open[4])
	var first bytes.Buffer
	if err := WriteCSV(&first, in); err != nil {
		t.Fatal(err)
	}
	out, rep, err := Import(bytes.NewReader(first.Bytes()), ImportOptions{Granularity: "1h"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Format != FormatWicket {
		t.Errorf("an export reads back as %s", rep.Format)
	}
	for i := range in.Time {
		if out.Time[i] != in.Time[i] || out.Open[i] != in.Open[i] || out.High[i] != in.High[i] || out.Low[i] != in.Low[i] || out.Close[i] != in.Close[i] || out.Volume[i] != in.Volume[i] {
			t.Fatalf("bar %d differs after the round trip", i)
		}
	}
	var second bytes.Buffer
	if err := WriteCSV(&second, out); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Bytes(), second.Bytes()) {
		t.Fatal("the second export differs from the first")
	}
}

// FuzzImport feeds the detector and parsers arbitrary files (seeds: the
// fixtures and testdata/fuzz/FuzzImport). Whatever it accepts is valid and
// survives an export round trip; nothing panics.
func FuzzImport(f *testing.F) {
	entries, _ := os.ReadDir(filepath.Join("testdata", "import"))
	for _, e := range entries {
		f.Add(fixture(f, e.Name()), uint8(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, gi uint8) {
		g := strategy.Granularities[int(gi)%len(strategy.Granularities)]
		b, _, err := Import(bytes.NewReader(data), ImportOptions{Granularity: g})
		if err != nil {
			var he *Error
			if !errors.As(err, &he) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if rows := Validate(b, 1); len(rows) > 0 {
			t.Fatalf("accepted invalid bars: %v", rows)
		}
		if rows := OffGrid(b.Time, g, func(i int) int { return i }); len(rows) > 0 {
			t.Fatalf("accepted off-grid bars: %v", rows)
		}
		var buf bytes.Buffer
		if err := WriteCSV(&buf, b); err != nil {
			t.Fatal(err)
		}
		back, _, err := Import(bytes.NewReader(buf.Bytes()), ImportOptions{Granularity: g})
		if err != nil {
			t.Fatalf("an export of accepted bars is refused: %v", err)
		}
		if !slices.Equal(back.Time, b.Time) || !slices.Equal(back.Close, b.Close) {
			t.Fatal("round trip changed the bars")
		}
	})
}

// FuzzFastISO: wherever both the allocation-free parser and the layout
// parser read a time, they read the same instant.
func FuzzFastISO(f *testing.F) {
	for _, s := range []string{"2024-01-02", "2024-01-02T15:04:05Z", "2024-01-02 15:04:05+00:00", "2024-02-30", "2024-01-02T15:04:05.123-05:30",
		"2024-01-02 15:04", "2023-02-29T00:00:00Z", "2024-12-31T23:59:59+14:00", "0000-01-01"} {
		f.Add(s)
	}
	ny, _ := time.LoadLocation("America/New_York")
	f.Fuzz(func(t *testing.T, s string) {
		fast, ok := fastISO(s, ny)
		slow, err := slowTime(s, ny)
		if ok && err == nil && fast != slow {
			t.Fatalf("%q: fast %d, layouts %d", s, fast, slow)
		}
	})
}
