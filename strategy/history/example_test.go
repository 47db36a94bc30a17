package history_test

import (
	"fmt"
	"strings"

	"wicket/strategy/history"
)

// ParseCSV accepts a whole file or nothing, naming every bad row.
func ExampleParseCSV() {
	good := "time,open,high,low,close,volume\n" +
		"2024-01-01T00:00:00Z,100,101,99,100.5,10\n" +
		"1704070800,100.5,102,100,101,7\n"
	bars, err := history.ParseCSV(strings.NewReader(good))
	fmt.Println(bars.Len(), err)

	bad := "time,open,high,low,close,volume\n" +
		"2024-01-01T00:00:00Z,100,101,99,100.5,10\n" +
		"2024-01-01T00:00:00Z,100,99,101,100,1\n"
	_, err = history.ParseCSV(strings.NewReader(bad))
	fmt.Println(err)
	// Output:
	// 2 <nil>
	// 1 rejected row, nothing imported; fix it and import again; row 3: duplicate time 2024-01-01T00:00:00Z (same as row 2); row 3: low 101 is above high 99
}
