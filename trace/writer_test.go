package trace

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"wicket/internal/testkit"
)

func TestOpenCreatesDirAndMonthFile(t *testing.T) {
	c := testkit.NewClock(testkit.Time("2026-05-14T10:00:00Z"))
	_, dir, _ := open(t, c, Options{})
	fi, err := os.Stat(filepath.Join(dir, "2026-05.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("month file: size %d mode %v, want empty 0600", fi.Size(), fi.Mode().Perm())
	}
	di, err := os.Stat(dir)
	if err != nil || di.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v (%v), want 0700", di.Mode().Perm(), err)
	}
}

func TestOpenRejectsEmptyDir(t *testing.T) {
	_, err := Open("", Options{})
	var p *Problem
	if !errors.As(err, &p) || p.Kind != KindInvalid {
		t.Fatalf("Open(\"\") = %v, want a KindInvalid Problem", err)
	}
}

func TestWriteStampsTSFromNowWhenZero(t *testing.T) {
	c := testkit.NewClock(testkit.Time("2026-05-14T10:00:00.123456Z"))
	w, dir, _ := open(t, c, Options{})
	e := entry(1, "list_templates", OK)
	w.Write(e)
	e.TS = time.Date(2026, 5, 1, 2, 3, 4, 5e6, time.FixedZone("CEST", 2*3600)) // 00:03:04.005 UTC
	w.Write(e)
	got := lines(t, filepath.Join(dir, "2026-05.jsonl"))
	if len(got) != 2 {
		t.Fatalf("%d lines, want 2", len(got))
	}
	for i, want := range []string{`"ts":"2026-05-14T10:00:00.123Z"`, `"ts":"2026-05-01T00:03:04.005Z"`} {
		if !strings.HasPrefix(got[i], "{"+want+",") {
			t.Errorf("line %d = %s, want it to start with %s", i+1, got[i], want)
		}
	}
}

// TestWriteManyGoroutines feeds one Writer from many goroutines: every
// line arrives whole, once.
func TestWriteManyGoroutines(t *testing.T) {
	c := testkit.NewClock(testkit.Time("2026-05-14T10:00:00Z"))
	w, dir, stderr := open(t, c, Options{})
	const goroutines, each = 16, 100
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				e := entry(int64(i), fmt.Sprintf("tool%d", g), OK)
				// Lines of different sizes, some near the limit, make
				// a torn or interleaved write visible.
				e.Args = json.RawMessage(fmt.Sprintf(`{"pad":%q}`, strings.Repeat("x", (g*each+i)%5000)))
				w.Write(e)
			}
		}()
	}
	wg.Wait()
	checkComplete(t, decodeAll(t, filepath.Join(dir, "2026-05.jsonl")), goroutines, each)
	if s := stderr.String(); s != "" {
		t.Errorf("stderr: %s", s)
	}
}

// TestTwoWritersOneDir has two Writers (as two servers would) append to one
// directory at once: no torn or interleaved line.
func TestTwoWritersOneDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "agent")
	c := testkit.NewClock(testkit.Time("2026-05-14T10:00:00Z"))
	var ws []*Writer
	for range 2 {
		w, err := Open(dir, Options{Now: c.Now, Stderr: os.Stderr})
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	const perWriter, each = 4, 150
	var wg sync.WaitGroup
	for n, w := range ws {
		for g := range perWriter {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					e := entry(int64(i), fmt.Sprintf("tool%d", n*perWriter+g), Refused)
					e.Error = strings.Repeat("refused ", 1+(i*37)%1000)
					w.Write(e)
				}
			}()
		}
	}
	wg.Wait()
	for _, w := range ws {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	checkComplete(t, decodeAll(t, filepath.Join(dir, "2026-05.jsonl")), 2*perWriter, each)
}

// TestTwoProcessesOneDir runs two writer processes (this test binary, in
// helper mode) against one directory: no torn or interleaved line.
func TestTwoProcessesOneDir(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	var cmds []*exec.Cmd
	for n := range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriterProcess$")
		cmd.Env = append(os.Environ(), "TRACE_HELPER_DIR="+dir, fmt.Sprintf("TRACE_HELPER_N=%d", n))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	checkComplete(t, decodeAll(t, filepath.Join(dir, "2026-05.jsonl")), 2*helperGoroutines, helperEach)
}

const helperGoroutines, helperEach = 2, 300

// TestHelperWriterProcess is the writer process of TestTwoProcessesOneDir.
func TestHelperWriterProcess(t *testing.T) {
	dir := os.Getenv("TRACE_HELPER_DIR")
	if dir == "" {
		t.Skip("helper process for TestTwoProcessesOneDir")
	}
	n, _ := strconv.Atoi(os.Getenv("TRACE_HELPER_N"))
	w, err := Open(dir, Options{Now: testkit.NewClock(testkit.Time("2026-05-14T10:00:00Z")).Now, Stderr: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range helperGoroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range helperEach {
				e := entry(int64(i), fmt.Sprintf("tool%d", n*helperGoroutines+g), Error)
				e.Error = strings.Repeat("failed ", 1+(i*53)%1500)
				w.Write(e)
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// checkComplete asserts that entries hold seq 0..each-1 exactly once for
// each of the tools tool0..tool{tools-1}, in order per tool.
func checkComplete(t *testing.T, entries []Entry, tools, each int) {
	t.Helper()
	if len(entries) != tools*each {
		t.Fatalf("%d entries, want %d", len(entries), tools*each)
	}
	next := map[string]int64{}
	for _, e := range entries {
		if e.Seq != next[e.Tool] {
			t.Fatalf("%s: seq %d after %d", e.Tool, e.Seq, next[e.Tool]-1)
		}
		next[e.Tool]++
	}
	if len(next) != tools {
		t.Fatalf("%d tools, want %d", len(next), tools)
	}
}

// TestMonthRollOver writes across a month boundary with an injected clock:
// each entry lands in the file of its UTC month.
func TestMonthRollOver(t *testing.T) {
	c := testkit.NewClock(testkit.Time("2026-01-31T23:59:59.998Z"))
	w, dir, _ := open(t, c, Options{})
	w.Write(entry(1, "a", OK))
	c.Set(testkit.Time("2026-02-01T00:00:00Z"))
	w.Write(entry(2, "a", OK))
	// An entry stamped by the caller before the roll (a slow call) still
	// goes to its own month.
	late := entry(3, "a", OK)
	late.TS = testkit.Time("2026-01-31T23:59:59.999Z")
	w.Write(late)
	// A time zone does not move an entry out of its UTC month.
	tz := entry(4, "a", OK)
	tz.TS = testkit.Time("2026-03-01T00:30:00+01:00") // February in UTC
	w.Write(tz)
	c.Set(testkit.Time("2026-12-31T23:59:59Z"))
	w.Write(entry(5, "a", OK))
	c.Set(testkit.Time("2027-01-01T00:00:00Z"))
	w.Write(entry(6, "a", OK))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := map[string][]int64{
		"2026-01.jsonl": {1, 3},
		"2026-02.jsonl": {2, 4},
		"2026-12.jsonl": {5},
		"2027-01.jsonl": {6},
	}
	names, err := monthFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != len(want) {
		t.Errorf("files %v, want %d", names, len(want))
	}
	for name, seqs := range want {
		var got []int64
		for _, e := range decodeAll(t, filepath.Join(dir, name)) {
			got = append(got, e.Seq)
		}
		if fmt.Sprint(got) != fmt.Sprint(seqs) {
			t.Errorf("%s: seqs %v, want %v", name, got, seqs)
		}
	}
}

// TestPruneKeepsExactly24 fills a directory with 30 month files and other
// files: Open leaves exactly the newest 24 month files, including the one it
// opened, and touches nothing else.
func TestPruneKeepsExactly24(t *testing.T) {
	dir := t.TempDir()
	var months []string
	for i := range 30 { // 2024-01 .. 2026-06
		months = append(months, time.Date(2024, time.Month(1+i), 1, 0, 0, 0, 0, time.UTC).Format("2006-01"))
	}
	for _, m := range months {
		write(t, filepath.Join(dir, m+".jsonl"), "month "+m+"\n")
	}
	others := map[string]string{
		"notes.txt":           "operator notes",
		"2020-01.jsonl.bak":   "a backup",
		"2020-13.jsonl":       "not a month",
		"2020-00.jsonl":       "not a month",
		"20-01.jsonl":         "not a month",
		"2020-01.JSONL":       "other case",
		"x2020-01.jsonl":      "prefixed",
		"sub/2019-01.jsonl":   "in a subdirectory",
		"2019-02.jsonl/inner": "a directory named like a month",
	}
	old := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	for name, content := range others {
		p := filepath.Join(dir, name)
		write(t, p, content)
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	// The clock is in the newest month, whose file exists already.
	w, err := Open(dir, Options{Now: testkit.NewClock(testkit.Time("2026-06-15T00:00:00Z")).Now})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	names, err := monthFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(names) != fmt.Sprint(withExt(months[6:])) {
		t.Errorf("kept %v, want %v", names, withExt(months[6:]))
	}
	for name, content := range others {
		p := filepath.Join(dir, name)
		b, err := os.ReadFile(p)
		if err != nil || string(b) != content {
			t.Errorf("%s: %q, %v; want it untouched", name, b, err)
			continue
		}
		if fi, _ := os.Stat(p); !fi.ModTime().Equal(old) {
			t.Errorf("%s: modified", name)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "2026-06.jsonl")); string(b) != "month 2026-06\n" {
		t.Errorf("2026-06.jsonl = %q, want its content kept", b)
	}
}

func TestPruneCountsTheNewMonthAndHonoursKeep(t *testing.T) {
	tests := []struct {
		name  string
		keep  int
		clock string
		want  []string
	}{
		{"new month counts", 3, "2026-05-01T00:00:00Z", []string{"2026-03", "2026-04", "2026-05"}},
		{"keep all", -1, "2026-05-01T00:00:00Z", []string{"2026-01", "2026-02", "2026-03", "2026-04", "2026-05"}},
		{"default keeps 24", 0, "2026-05-01T00:00:00Z", []string{"2026-01", "2026-02", "2026-03", "2026-04", "2026-05"}},
		// A clock behind the files never prunes the file being written.
		{"clock behind", 2, "2025-12-01T00:00:00Z", []string{"2025-12", "2026-03", "2026-04"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, m := range []string{"2026-01", "2026-02", "2026-03", "2026-04"} {
				write(t, filepath.Join(dir, m+".jsonl"), "")
			}
			w, err := Open(dir, Options{Now: testkit.NewClock(testkit.Time(tt.clock)).Now, Keep: tt.keep})
			if err != nil {
				t.Fatal(err)
			}
			w.Close()
			names, _ := monthFiles(dir)
			if fmt.Sprint(names) != fmt.Sprint(withExt(tt.want)) {
				t.Errorf("kept %v, want %v", names, withExt(tt.want))
			}
		})
	}
}

// TestRollForwardPrunes: a server that runs across months keeps the
// directory pruned as a fresh start would.
func TestRollForwardPrunes(t *testing.T) {
	c := testkit.NewClock(testkit.Time("2026-01-10T00:00:00Z"))
	w, dir, _ := open(t, c, Options{Keep: 2})
	w.Write(entry(1, "a", OK))
	c.Set(testkit.Time("2026-02-10T00:00:00Z"))
	w.Write(entry(2, "a", OK))
	c.Set(testkit.Time("2026-03-10T00:00:00Z"))
	w.Write(entry(3, "a", OK))
	names, _ := monthFiles(dir)
	if want := []string{"2026-02.jsonl", "2026-03.jsonl"}; fmt.Sprint(names) != fmt.Sprint(want) {
		t.Errorf("files %v, want %v", names, want)
	}
}

// TestUnwritableDirectory: a write failure is reported once per distinct
// error, the caller goes on, and writing resumes when the cause goes away.
func TestUnwritableDirectory(t *testing.T) {
	c := testkit.NewClock(testkit.Time("2026-05-31T23:00:00Z"))
	w, dir, stderr := open(t, c, Options{})
	w.Write(entry(1, "a", OK))

	restore := makeUnwritable(t, dir)
	c.Set(testkit.Time("2026-06-01T00:00:01Z")) // a new month file must be created
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := int64(2); i <= 4; i++ {
			w.Write(entry(i, "a", OK))
		}
	}()
	<-done // Write returned for every entry: the caller went on
	report := stderr.String()
	if n := strings.Count(report, "\n"); n != 1 {
		t.Fatalf("stderr has %d lines, want the failure reported once:\n%s", n, report)
	}
	if !strings.Contains(report, "2026-06.jsonl") || !strings.Contains(report, "tool calls go on") {
		t.Errorf("report %q does not name the file and say serving goes on", report)
	}

	restore()
	w.Write(entry(5, "a", OK))
	w.Write(entry(6, "a", OK))
	if got := stderr.String()[len(report):]; !strings.Contains(got, "resumed; 3 entries were lost") {
		t.Errorf("after recovery stderr says %q, want the resumption and the loss", got)
	}
	var seqs []int64
	for _, e := range decodeAll(t, filepath.Join(dir, "2026-06.jsonl")) {
		seqs = append(seqs, e.Seq)
	}
	if fmt.Sprint(seqs) != "[5 6]" {
		t.Errorf("2026-06 holds seqs %v, want [5 6]", seqs)
	}

	// A second outage with the same cause is reported again.
	before := stderr.String()
	restore = makeUnwritable(t, dir)
	c.Set(testkit.Time("2026-07-01T00:00:00Z"))
	w.Write(entry(7, "a", OK))
	restore()
	if !strings.Contains(stderr.String()[len(before):], "2026-07.jsonl") {
		t.Errorf("second outage not reported: %q", stderr.String()[len(before):])
	}
}

// makeUnwritable makes dir refuse new files and returns the undo. Root
// ignores permissions, so for root the directory is swapped for a file.
func makeUnwritable(t *testing.T, dir string) (restore func()) {
	t.Helper()
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(dir, "probe")
	f, err := os.Create(probe)
	if err != nil {
		return func() {
			if err := os.Chmod(dir, 0o700); err != nil {
				t.Fatal(err)
			}
		}
	}
	f.Close()
	os.Remove(probe)
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	aside := dir + ".aside"
	if err := os.Rename(dir, aside); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "not a directory")
	return func() {
		if err := os.Remove(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(aside, dir); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWriteFailureOnOpenFile: a write that fails on the open file (here a
// full disk, via /dev/full) is reported once and retried on a reopened file.
func TestWriteFailureOnOpenFile(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /dev/full")
	}
	c := testkit.NewClock(testkit.Time("2026-05-10T00:00:00Z"))
	dir := filepath.Join(t.TempDir(), "agent")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "2026-05.jsonl")
	if err := os.Symlink("/dev/full", path); err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	w, err := Open(dir, Options{Now: c.Now, Stderr: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for i := range int64(3) {
		w.Write(entry(i, "a", OK))
	}
	if s := stderr.String(); strings.Count(s, "no space left on device") != 1 {
		t.Fatalf("stderr %q, want one report of the full disk", s)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	w.Write(entry(3, "a", OK))
	if s := stderr.String(); !strings.Contains(s, "resumed; 3 entries were lost") {
		t.Errorf("stderr %q, want the resumption", s)
	}
	if got := decodeAll(t, path); len(got) != 1 || got[0].Seq != 3 {
		t.Errorf("file holds %v, want seq 3 only", got)
	}
}

// TestOversizedEntryDropsArgs: an entry over 64 KiB loses its args, not its
// row.
func TestOversizedEntryDropsArgs(t *testing.T) {
	c := testkit.NewClock(testkit.Time("2026-05-10T00:00:00Z"))
	w, dir, _ := open(t, c, Options{})
	big := entry(1, "run_backtest", OK)
	big.Args = json.RawMessage(fmt.Sprintf(`{"source":%q}`, strings.Repeat("a", MaxLine)))
	w.Write(big)
	fits := entry(2, "run_backtest", OK)
	fits.Args = json.RawMessage(fmt.Sprintf(`{"source":%q}`, strings.Repeat("a", MaxLine-200)))
	w.Write(fits)
	// Even the text fields are cut when the row would not fit without
	// its args: the row survives.
	huge := entry(3, strings.Repeat("t", MaxLine), Refused)
	huge.Error = strings.Repeat("\x01", MaxLine) // six bytes each once escaped
	huge.Denied = make([]string, 1000)
	for i := range huge.Denied {
		huge.Denied[i] = strings.Repeat("d", 100)
	}
	w.Write(huge)

	path := filepath.Join(dir, "2026-05.jsonl")
	ls := lines(t, path)
	got := decodeAll(t, path)
	if len(got) != 3 {
		t.Fatalf("%d entries, want 3", len(got))
	}
	for i, l := range ls {
		if len(l)+1 > MaxLine {
			t.Errorf("line %d is %d bytes, over MaxLine", i+1, len(l)+1)
		}
	}
	if got[0].Args != nil || !got[0].ArgsDropped || !strings.Contains(ls[0], `"args_dropped":true`) {
		t.Errorf("big entry: args %d bytes, dropped %v; want dropped", len(got[0].Args), got[0].ArgsDropped)
	}
	if got[1].ArgsDropped || len(got[1].Args) == 0 || strings.Contains(ls[1], "args_dropped") {
		t.Errorf("entry under the limit lost its args")
	}
	if !got[2].ArgsDropped || got[2].Verdict != Refused || !strings.HasSuffix(got[2].Error, "…") || !strings.HasPrefix(got[2].Tool, "ttt") {
		t.Errorf("huge entry not degraded as expected: dropped %v verdict %v", got[2].ArgsDropped, got[2].Verdict)
	}
}

// TestCallerMistakes: a missing verdict or arguments that are not JSON are
// recorded (the row survives) and reported once.
func TestCallerMistakes(t *testing.T) {
	c := testkit.NewClock(testkit.Time("2026-05-10T00:00:00Z"))
	w, dir, stderr := open(t, c, Options{})
	for range 2 {
		w.Write(Entry{Session: "s", Seq: 1, Tool: "submit_order", Args: json.RawMessage(`{}`)})
		w.Write(Entry{Session: "s", Seq: 2, Tool: "node_snapshot", Args: json.RawMessage(`{"venue":`), Verdict: OK})
	}
	got := decodeAll(t, filepath.Join(dir, "2026-05.jsonl"))
	if len(got) != 4 {
		t.Fatalf("%d entries, want 4", len(got))
	}
	if got[0].Verdict != Error || !strings.Contains(got[0].Error, "no verdict") {
		t.Errorf("no-verdict entry recorded as %v %q", got[0].Verdict, got[0].Error)
	}
	if got[1].Args != nil || !got[1].ArgsDropped {
		t.Errorf("bad-args entry: args %q dropped %v", got[1].Args, got[1].ArgsDropped)
	}
	report := stderr.String()
	if strings.Count(report, "no verdict") != 1 || strings.Count(report, "not JSON") != 1 {
		t.Errorf("stderr %q, want each mistake reported once", report)
	}
}

func TestWriteAfterClose(t *testing.T) {
	c := testkit.NewClock(testkit.Time("2026-05-10T00:00:00Z"))
	w, dir, stderr := open(t, c, Options{})
	w.Write(entry(1, "a", OK))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	w.Write(entry(2, "a", OK))
	if got := decodeAll(t, filepath.Join(dir, "2026-05.jsonl")); len(got) != 1 {
		t.Errorf("%d entries after Close, want 1", len(got))
	}
	if !strings.Contains(stderr.String(), "after Close") {
		t.Errorf("stderr %q, want the lost write reported", stderr.String())
	}
}

// TestTornTailIsTerminated: a file that ends in a fragment (a write cut
// short) gets a newline before the next line, so the next entry survives.
func TestTornTailIsTerminated(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "2026-05.jsonl")
	write(t, path, `{"ts":"2026-05-01T00:00:00.000Z","session":"s","seq":1,"tool":"a","write":false,"profile":"full","verdict":"ok","ms":1}`+"\n"+`{"ts":"2026-05-01T00:00:01.000Z","sess`)
	w, err := Open(dir, Options{Now: testkit.NewClock(testkit.Time("2026-05-10T00:00:00Z")).Now})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(entry(2, "a", OK))
	w.Close()
	r := &Reader{Dir: dir}
	var skipped []error
	r.Skipped = func(err error) { skipped = append(skipped, err) }
	got, err := r.Read(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1].Seq != 2 || len(skipped) != 1 {
		t.Errorf("read %d entries, skipped %v; want seq 1 and 2 and the fragment skipped", len(got), skipped)
	}
}

func TestSyncWrites(t *testing.T) {
	c := testkit.NewClock(testkit.Time("2026-05-31T23:59:59Z"))
	w, dir, stderr := open(t, c, Options{Sync: true})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				w.Write(entry(int64(i), fmt.Sprintf("tool%d", g), OK))
			}
		}()
	}
	wg.Wait()
	c.Set(testkit.Time("2026-06-01T00:00:00Z")) // a roll closes the synced file
	w.Write(entry(20, "tool0", OK))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	checkComplete(t, decodeAll(t, filepath.Join(dir, "2026-05.jsonl")), 4, 20)
	if s := stderr.String(); s != "" {
		t.Errorf("stderr: %s", s)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func withExt(months []string) []string {
	out := make([]string, len(months))
	for i, m := range months {
		out[i] = m + ".jsonl"
	}
	sort.Strings(out)
	return out
}
