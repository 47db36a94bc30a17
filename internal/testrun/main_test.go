package main

import (
	"strings"
	"testing"
)

// TestReport feeds a test2json stream of one passing, one failing and one
// test-less package and checks that the text is what plain go test prints,
// followed by the slowest top-level tests (subtests left out).
func TestReport(t *testing.T) {
	stream := strings.Join([]string{
		`{"Action":"start","Package":"m/a"}`,
		`{"Action":"run","Package":"m/a","Test":"TestSlow"}`,
		`{"Action":"output","Package":"m/a","Test":"TestSlow","Output":"=== RUN   TestSlow\n"}`,
		`{"Action":"pass","Package":"m/a","Test":"TestSlow/sub","Elapsed":9}`,
		`{"Action":"pass","Package":"m/a","Test":"TestSlow","Elapsed":3.5}`,
		`{"Action":"output","Package":"m/a","Output":"ok  \tm/a\t3.6s\n"}`,
		`{"Action":"pass","Package":"m/a","Elapsed":3.6}`,
		`{"Action":"output","Package":"m/b","Test":"TestBad","Output":"    b_test.go:9: boom\n"}`,
		`{"Action":"fail","Package":"m/b","Test":"TestBad","Elapsed":0.25}`,
		`{"Action":"output","Package":"m/b","Output":"FAIL\tm/b\t0.3s\n"}`,
		`{"Action":"fail","Package":"m/b","Elapsed":0.3}`,
		`{"Action":"output","Package":"m/c","Output":"?   \tm/c\t[no test files]\n"}`,
		`{"Action":"skip","Package":"m/c"}`,
		`not json at all`,
		`{"Action":"output","Package":"m/d","Output":"panic: half a package\n"}`,
	}, "\n")
	var out strings.Builder
	r := newReport(&out)
	if err := r.read(strings.NewReader(stream)); err != nil {
		t.Fatal(err)
	}
	r.flush()
	r.printSlowest(1)
	want := "ok  \tm/a\t3.6s\n" +
		"    b_test.go:9: boom\nFAIL\tm/b\t0.3s\n" +
		"?   \tm/c\t[no test files]\n" +
		"not json at all\n" +
		"panic: half a package\n" +
		"\nslowest 1 of 2 tests:\n     3.5s  m/a TestSlow\n"
	if got := out.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
