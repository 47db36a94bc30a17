package history

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

const header = "time,open,high,low,close,volume\n"

func TestParseCSVAccepts(t *testing.T) {
	in := header +
		"2024-01-01T00:00:00Z,100,101,99,100.5,10\n" +
		"2024-01-01T02:00:00+01:00,100.5,102,100,101,0\n" + // 01:00Z
		"1704074400,101,101,101,101,3.5\n" + // 02:00Z, unix seconds
		"\n" +
		" 2024-01-02 , 1e2 , 100 , 100 , 100 , 0 \n"
	b, err := ParseCSV(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	wantT := []int64{1704067200, 1704070800, 1704074400, 1704153600}
	if fmt.Sprint(b.Time) != fmt.Sprint(wantT) || b.Close[0] != 100.5 || b.Volume[2] != 3.5 || b.Open[3] != 100 {
		t.Errorf("parsed %+v", b)
	}
	// A byte-order mark and upper-case header are fine.
	if _, err := ParseCSV(strings.NewReader("\ufeffTime,Open,High,Low,Close,Volume\n1,1,1,1,1,1\n")); err != nil {
		t.Errorf("BOM header: %v", err)
	}
}

// TestParseCSVRejects: every kind of bad row is reported with its row
// number (the header is row 1) and nothing is returned.
func TestParseCSVRejects(t *testing.T) {
	ok := "1704067200,100,101,99,100,1\n" // row 2
	for _, tc := range []struct {
		name string
		in   string
		rows []string // "row N: substring"
	}{
		{"empty", "", nil},
		{"header only", header, nil},
		{"bad header", "date,o,h,l,c,v\n" + ok, []string{"row 1: header"}},
		{"unsorted", header + ok + "1704060000,100,101,99,100,1\n", []string{"row 3: time 2023-12-31T22:00:00Z is before row 2's 2024-01-01T00:00:00Z; rows must be sorted"}},
		{"duplicate", header + ok + "1704067200,100,101,99,100,1\n", []string{"row 3: duplicate time"}},
		{"nan", header + ok + "1704070800,NaN,101,99,100,1\n", []string{"row 3: open NaN must be a finite price"}},
		{"inf", header + ok + "1704070800,100,+Inf,99,100,1\n", []string{"row 3: high +Inf must be a finite price"}},
		{"zero price", header + ok + "1704070800,100,101,0,100,1\n", []string{"row 3: low 0 must be a finite price above zero"}},
		{"negative volume", header + ok + "1704070800,100,101,99,100,-1\n", []string{"row 3: volume -1"}},
		{"high below close", header + ok + "1704070800,100,101,99,102,1\n", []string{"row 3: high 101 is below open 100 or close 102"}},
		{"low above open", header + ok + "1704070800,98,101,99,100,1\n", []string{"row 3: low 99 is above open 98"}},
		{"low above high", header + ok + "1704070800,100,99,101,100,1\n", []string{"row 3: low 101 is above high 99"}},
		{"not a number", header + ok + "1704070800,abc,101,99,100,1\n", []string{`row 3: open "abc" is not a number`}},
		{"bad time", header + ok + "yesterday,100,101,99,100,1\n", []string{`row 3: time "yesterday" is neither`}},
		{"millis", header + "1704067200000,100,101,99,100,1\n", []string{"row 2: time 1704067200000 is out of range for unix seconds (milliseconds?"}},
		{"fields", header + ok + "1704070800,100,101,99\n", []string{"row 3: has 4 fields, want 6"}},
		{"quote", header + ok + "1704070800,\"100,101,99,100,1\n", []string{"row 3:"}},
		{"several", header + ok + "1704070800,100,101,99,102,1\n" + ok + "x,1,1,1,1,1\n",
			[]string{"row 3: high", "row 4: time 2024-01-01T00:00:00Z is before row 3's", "row 5: time \"x\""}},
	} {
		b, err := ParseCSV(strings.NewReader(tc.in))
		var he *Error
		if !errors.As(err, &he) || he.Kind != KindInvalid {
			t.Errorf("%s: %v, want an Invalid error", tc.name, err)
			continue
		}
		if b.Len() != 0 {
			t.Errorf("%s: returned %d bars with an error", tc.name, b.Len())
		}
		if len(he.Rows) != len(tc.rows) {
			t.Errorf("%s: rows %v, want %d", tc.name, he.Rows, len(tc.rows))
			continue
		}
		for i, want := range tc.rows {
			if got := he.Rows[i].String(); !strings.HasPrefix(got, want) {
				t.Errorf("%s: row error %q, want prefix %q", tc.name, got, want)
			}
		}
		if len(tc.rows) > 0 && !strings.Contains(err.Error(), "nothing imported") {
			t.Errorf("%s: %q does not say nothing was imported", tc.name, err)
		}
	}
}

func TestParseCSVCapsErrors(t *testing.T) {
	var b strings.Builder
	b.WriteString(header)
	for i := range 1000 {
		fmt.Fprintf(&b, "%d,1,1,1,2,1\n", i+1) // close above high on every row
	}
	_, err := ParseCSV(strings.NewReader(b.String()))
	var he *Error
	if !errors.As(err, &he) || len(he.Rows) != maxRowErrors {
		t.Fatalf("%v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "and 95 more problems") || len(msg) > 1000 {
		t.Errorf("message %q", msg)
	}
}

// FuzzParseCSV: no input panics, and whatever is accepted is a valid bar
// series that survives a round trip through the store.
func FuzzParseCSV(f *testing.F) {
	for _, seed := range []string{
		header + "2024-01-01T00:00:00Z,100,101,99,100.5,10\n2024-01-01T01:00:00Z,100.5,102,100,101,0\n",
		header + "1704067200,1,1,1,1,0\n",
		header + "2024-01-02,1e2,100,100,100,0\n",
		header + "1704067200,100,101,99,100,1\n1704067200,100,101,99,100,1\n",
		header + "1704067200,NaN,1,1,1,1\n",
		header + "\"1704067200\",\"1\",1,1,1,1\n",
		"time,open\n1,2\n",
		"",
	} {
		f.Add(seed)
	}
	s := openTemp(f)
	f.Fuzz(func(t *testing.T, in string) {
		b, err := ParseCSV(strings.NewReader(in))
		if err != nil {
			var he *Error
			if !errors.As(err, &he) || he.Kind != KindInvalid {
				t.Fatalf("error of the wrong type: %#v", err)
			}
			if b.Len() != 0 {
				t.Fatal("bars returned with an error")
			}
			return
		}
		if b.Len() == 0 {
			t.Fatal("accepted a file without bars")
		}
		for i := range b.Time {
			if i > 0 && b.Time[i] <= b.Time[i-1] {
				t.Fatalf("accepted unsorted times at %d", i)
			}
			for _, x := range []float64{b.Open[i], b.High[i], b.Low[i], b.Close[i]} {
				if !(x > 0) || math.IsInf(x, 0) {
					t.Fatalf("accepted price %v", x)
				}
			}
			if b.Low[i] > min(b.Open[i], b.Close[i]) || b.High[i] < max(b.Open[i], b.Close[i]) || b.Volume[i] < 0 {
				t.Fatalf("accepted inconsistent bar %d", i)
			}
		}
		if err := s.Write(ctx, "FUZZ@1m", b, WriteOptions{Replace: true}); err != nil {
			t.Fatalf("store refused parsed bars: %v", err)
		}
	})
}
