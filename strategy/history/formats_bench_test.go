package history

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"
	"time"
)

// benchFile writes n one-minute rows in format f.
func benchFile(f Format, n int) []byte {
	var buf bytes.Buffer
	switch f {
	case FormatWicket:
		buf.WriteString("time,open,high,low,close,volume\n")
	case FormatYahoo:
		buf.WriteString("Date,Open,High,Low,Close,Adj Close,Volume\n")
	case FormatTradingView:
		buf.WriteString("time,open,high,low,close,Volume,MA\n")
	case FormatAlpaca:
		buf.WriteString("symbol,timestamp,open,high,low,close,volume,trade_count,vwap\n")
	}
	t := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		ts := t.Add(time.Duration(i) * time.Minute)
		p := 100 + float64(i%977)/7
		o, h, l, c, v := fmtF(p), fmtF(p+1), fmtF(p-1), fmtF(p+0.25), strconv.Itoa(i%13)
		switch f {
		case FormatWicket:
			fmt.Fprintf(&buf, "%s,%s,%s,%s,%s,%s\n", ts.Format(time.RFC3339), o, h, l, c, v)
		case FormatYahoo:
			fmt.Fprintf(&buf, "%s,%s,%s,%s,%s,%s,%s\n", ts.Format("2006-01-02 15:04:05"), o, h, l, c, c, v)
		case FormatTradingView:
			fmt.Fprintf(&buf, "%d,%s,%s,%s,%s,%s,%s\n", ts.Unix(), o, h, l, c, v, c)
		case FormatAlpaca:
			fmt.Fprintf(&buf, "BTC/USD,%s,%s,%s,%s,%s,%s,7,%s\n", ts.Format("2006-01-02 15:04:05+00:00"), o, h, l, c, v, c)
		case FormatBinance:
			fmt.Fprintf(&buf, "%d,%s,%s,%s,%s,%s,%d,1000.5,42,1.5,500.25,0\n", ts.UnixMicro(), o, h, l, c, v, ts.UnixMicro()+59999999)
		}
	}
	return buf.Bytes()
}

func fmtF(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// BenchmarkImport1M parses and validates a million-row file of each format
// (detection, grid check and all), without the store write.
func BenchmarkImport1M(b *testing.B) {
	const n = 1_000_000
	for _, f := range Formats {
		b.Run(string(f.Format), func(b *testing.B) {
			data := benchFile(f.Format, n)
			b.SetBytes(int64(len(data)))
			start, cpu := time.Now(), cpuSince(0)
			for b.Loop() {
				bars, rep, err := Import(bytes.NewReader(data), ImportOptions{Granularity: "1m"})
				if err != nil || bars.Len() != n || rep.Format != f.Format {
					b.Fatalf("%d bars as %s: %v", bars.Len(), rep.Format, err)
				}
			}
			b.ReportMetric(time.Since(start).Seconds()/float64(b.N), "s/1M-rows")
			b.ReportMetric(cpuSince(cpu).Seconds()/float64(b.N), "cpu-s/1M-rows")
		})
	}
}
