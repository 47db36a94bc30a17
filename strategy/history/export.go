package history

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"time"

	"wicket/strategy"
)

// WriteCSV writes bars in wicket's own CSV format: the header
// time,open,high,low,close,volume, RFC3339 UTC times and the shortest
// decimal that reads back as the same float64. Import reads it back to
// the same bars, and a second export is byte for byte the first.
func WriteCSV(w io.Writer, b strategy.Bars) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.WriteString(strings.Join(CSVHeader, ","))
	bw.WriteByte('\n')
	var buf []byte
	for i := range b.Time {
		buf = buf[:0]
		buf = time.Unix(b.Time[i], 0).UTC().AppendFormat(buf, time.RFC3339)
		for _, v := range [...]float64{b.Open[i], b.High[i], b.Low[i], b.Close[i], b.Volume[i]} {
			buf = append(buf, ',')
			buf = strconv.AppendFloat(buf, v, 'f', -1, 64)
		}
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}
