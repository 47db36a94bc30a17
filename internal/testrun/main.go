// Command testrun runs `go test -json` with the arguments it is given and
// prints what plain `go test` prints — each package's closing line, and a
// failing package's whole output — then the slowest tests of the run, so
// `make test` says where its minutes went. It exits with go test's status.
//
// It only reads go test's report: it never changes which tests run or how,
// and never hides a line of a failing package.
//
// Usage: go run ./internal/testrun [-slowest N] [go test flags and packages]
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"time"
)

func main() {
	signal.Ignore(os.Interrupt) // go test gets it and ends the run; its report still arrives
	code, err := run(os.Args[1:], os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testrun:", err)
	}
	os.Exit(code)
}

func run(args []string, stdout, stderr io.Writer) (int, error) {
	slowest := 10
	if len(args) >= 2 && args[0] == "-slowest" {
		n, err := strconv.Atoi(args[1])
		if err != nil || n < 0 {
			return 2, fmt.Errorf("-slowest takes a count, not %q", args[1])
		}
		slowest, args = n, args[2:]
	}
	goBin := os.Getenv("GO")
	if goBin == "" {
		goBin = "go"
	}
	cmd := exec.Command(goBin, append([]string{"test", "-json"}, args...)...)
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 1, err
	}
	if err := cmd.Start(); err != nil {
		return 1, err
	}
	r := newReport(stdout)
	readErr := r.read(out)
	waitErr := cmd.Wait()
	r.flush()
	r.printSlowest(slowest)
	if readErr != nil {
		return 1, readErr
	}
	var exit *exec.ExitError
	if errors.As(waitErr, &exit) {
		return exit.ExitCode(), nil
	}
	if waitErr != nil {
		return 1, waitErr
	}
	return 0, nil
}

// event is one line of test2json's stream (go doc test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type timing struct {
	pkg, test string
	took      time.Duration
}

// report keeps each package's output until the package ends, as plain
// go test does, and the time of every top-level test that ended.
type report struct {
	w       io.Writer
	pending map[string]*strings.Builder
	order   []string // packages in the order they first spoke
	times   []timing
}

func newReport(w io.Writer) *report {
	return &report{w: w, pending: map[string]*strings.Builder{}}
}

func (r *report) read(rd io.Reader) error {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			fmt.Fprintln(r.w, string(line)) // not an event: say it as it came
			continue
		}
		r.add(e)
	}
	return sc.Err()
}

func (r *report) add(e event) {
	if e.Package == "" {
		fmt.Fprint(r.w, e.Output)
		return
	}
	buf, ok := r.pending[e.Package]
	if !ok {
		buf = &strings.Builder{}
		r.pending[e.Package] = buf
		r.order = append(r.order, e.Package)
	}
	switch {
	case e.Action == "output":
		buf.WriteString(e.Output)
	case e.Test != "" && (e.Action == "pass" || e.Action == "fail") && !strings.Contains(e.Test, "/"):
		r.times = append(r.times, timing{e.Package, e.Test, time.Duration(e.Elapsed * float64(time.Second))})
	case e.Test == "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
		r.end(e.Package, e.Action == "fail")
	}
}

// end prints a finished package as plain go test would: its closing line
// when it passed, everything it said when it failed.
func (r *report) end(pkg string, failed bool) {
	buf := r.pending[pkg]
	delete(r.pending, pkg)
	if buf == nil {
		return
	}
	text := buf.String()
	if failed {
		fmt.Fprint(r.w, text)
		return
	}
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	fmt.Fprintln(r.w, lines[len(lines)-1])
}

// flush prints what packages that never ended said (a build failure, a
// crash of go test itself) in full.
func (r *report) flush() {
	for _, pkg := range r.order {
		if buf, ok := r.pending[pkg]; ok {
			fmt.Fprint(r.w, buf.String())
			delete(r.pending, pkg)
		}
	}
}

func (r *report) printSlowest(n int) {
	if n == 0 || len(r.times) == 0 {
		return
	}
	sort.SliceStable(r.times, func(i, j int) bool { return r.times[i].took > r.times[j].took })
	n = min(n, len(r.times))
	fmt.Fprintf(r.w, "\nslowest %d of %d tests:\n", n, len(r.times))
	for _, t := range r.times[:n] {
		fmt.Fprintf(r.w, "%8.1fs  %s %s\n", t.took.Seconds(), t.pkg, t.test)
	}
}
