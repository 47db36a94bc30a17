package trace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wicket/internal/testkit"
)

// goldenDirCopy copies the golden month files into a fresh directory and
// returns it.
func goldenDirCopy(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"2026-04.jsonl", "2026-05.jsonl"} {
		b, err := os.ReadFile(filepath.Join(goldenDir, name))
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, name), string(b))
	}
	write(t, filepath.Join(dir, "notes.txt"), "not a month file\n")
	return dir
}

func ids(entries []Entry) string {
	var s []string
	for _, e := range entries {
		s = append(s, fmt.Sprintf("%s#%d", e.Tool, e.Seq))
	}
	return strings.Join(s, " ")
}

func TestReadFilters(t *testing.T) {
	dir := goldenDirCopy(t)
	// A torn last line in the newest file, and an out-of-order entry.
	f, err := os.OpenFile(filepath.Join(dir, "2026-05.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(f, `{"ts":"2026-04-30T22:00:00.000Z","session":"late","seq":9,"tool":"list_series","write":false,"profile":"full","verdict":"ok","ms":1}`+"\n")
	fmt.Fprint(f, `{"ts":"2026-05-01T00:09:00.000Z","session":"0198f0b9-0000-7b00-8000-00000000beef","seq":5,"tool":"list_ser`)
	f.Close()

	tests := []struct {
		name   string
		filter Filter
		want   string
	}{
		{"all, by time", Filter{},
			"list_series#9 list_templates#1 run_backtest#2 submit_order#3 submit_order#4 flatten#1 plaec_order#2 node_snapshot#3 validate_strategy#4"},
		{"since is inclusive", Filter{Since: testkit.Time("2026-05-01T00:01:01Z")},
			"plaec_order#2 node_snapshot#3 validate_strategy#4"},
		{"until is exclusive", Filter{Until: testkit.Time("2026-05-01T00:00:12.250Z")},
			"list_series#9 list_templates#1 run_backtest#2 submit_order#3"},
		{"one month only", Filter{Until: testkit.Time("2026-05-01T00:00:00Z")},
			"list_templates#1 run_backtest#2"}, // list_series#9 sits in the May file: not read
		{"tool", Filter{Tool: "submit_order"}, "submit_order#3 submit_order#4"},
		{"verdict", Filter{Verdict: Refused}, "flatten#1 plaec_order#2"},
		{"session prefix", Filter{Session: "0198f0b9"}, "flatten#1 plaec_order#2 node_snapshot#3 validate_strategy#4"},
		{"token prefix", Filter{Token: "5f0c2a8e"}, "submit_order#3 submit_order#4"},
		{"combined", Filter{Tool: "submit_order", Verdict: OK}, "submit_order#4"},
		{"nothing", Filter{Tool: "market_exit"}, ""},
		{"out of range", Filter{Since: testkit.Time("2027-01-01T00:00:00Z")}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var skipped []string
			r := &Reader{Dir: dir, Skipped: func(err error) { skipped = append(skipped, err.Error()) }}
			got, err := r.Read(tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			if ids(got) != tt.want {
				t.Errorf("got  %s\nwant %s", ids(got), tt.want)
			}
			readsMay := tt.filter.inRange("2026-05.jsonl")
			if readsMay && (len(skipped) != 1 || !strings.Contains(skipped[0], "2026-05.jsonl line 8: torn last line")) {
				t.Errorf("skipped %q, want the torn last line of 2026-05.jsonl reported", skipped)
			}
		})
	}
}

func TestReadMissingDir(t *testing.T) {
	r := &Reader{Dir: filepath.Join(t.TempDir(), "nope")}
	_, err := r.Read(Filter{})
	var p *Problem
	if !errors.As(err, &p) || p.Kind != KindNotFound || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Read = %v, want KindNotFound", err)
	}
	if !strings.Contains(err.Error(), "wicket mcp --trace") {
		t.Errorf("error %q does not say how to get a trace", err)
	}
}

func TestReadEmptyDir(t *testing.T) {
	got, err := (&Reader{Dir: t.TempDir()}).Read(Filter{})
	if err != nil || len(got) != 0 {
		t.Errorf("Read = %v, %v; want nothing", got, err)
	}
}

// follow runs r.Follow in the background and returns its entries as they
// come, and a stop function that returns Follow's error.
func follow(t *testing.T, r *Reader, f Filter) (<-chan Entry, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan Entry, 100)
	done := make(chan error, 1)
	ready := make(chan struct{})
	go func() {
		done <- r.follow(ctx, f, func(e Entry) error { ch <- e; return nil }, func() { close(ready) })
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("Follow ended before it started: %v", err)
	}
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		return <-done
	}
	t.Cleanup(func() { stop() })
	return ch, stop
}

// next waits for Follow's next entry; the limit only keeps a broken
// Follow from hanging the test run.
func next(t *testing.T, ch <-chan Entry) Entry {
	t.Helper()
	select {
	case e := <-ch:
		return e
	case <-time.After(20 * time.Second):
		t.Fatal("Follow delivered nothing")
		return Entry{}
	}
}

// barrier writes a marker entry with w and waits until Follow delivers it:
// everything written before it has been seen by then.
func barrier(t *testing.T, w *Writer, ch <-chan Entry) []Entry {
	t.Helper()
	w.Write(Entry{Session: "barrier", Tool: "barrier", Verdict: OK})
	var before []Entry
	for {
		e := next(t, ch)
		if e.Session == "barrier" {
			return before
		}
		before = append(before, e)
	}
}

func TestFollowFromNow(t *testing.T) {
	c := testkit.NewClock(testkit.Time("2026-05-31T23:00:00Z"))
	w, dir, _ := open(t, c, Options{})
	w.Write(entry(1, "old", OK)) // before Follow starts: not delivered

	r := &Reader{Dir: dir, Poll: time.Millisecond}
	ch, stop := follow(t, r, Filter{Verdict: OK})
	if got := barrier(t, w, ch); len(got) != 0 {
		t.Fatalf("delivered %s from before Follow started", ids(got))
	}
	w.Write(entry(4, "a", OK))
	w.Write(entry(5, "a", Refused))             // filtered out
	c.Set(testkit.Time("2026-06-01T00:00:00Z")) // a new month file appears
	w.Write(entry(6, "b", OK))
	if got := barrier(t, w, ch); ids(got) != "a#4 b#6" {
		t.Errorf("followed %q, want a#4 b#6", ids(got))
	}
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Errorf("Follow returned %v after cancel, want context.Canceled", err)
	}
}

func TestFollowCompletesALineInProgress(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "2026-05.jsonl")
	line := `{"ts":"2026-05-01T00:00:00.000Z","session":"s","seq":7,"tool":"slow","write":false,"profile":"full","verdict":"ok","ms":1}` + "\n"
	write(t, path, "")
	var skipped []error
	r := &Reader{Dir: dir, Poll: time.Millisecond, Skipped: func(err error) { skipped = append(skipped, err) }}
	ch, stop := follow(t, r, Filter{})
	appendRaw(t, path, line[:40])
	// Let Follow see the fragment: the barrier is a second file, read
	// after this one in the same scan.
	w, err := Open(dir, Options{Now: testkit.NewClock(testkit.Time("2026-06-01T00:00:00Z")).Now})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if got := barrier(t, w, ch); len(got) != 0 {
		t.Fatalf("delivered %s from half a line", ids(got))
	}
	appendRaw(t, path, line[40:]+line)
	if a, b := next(t, ch), next(t, ch); a.Seq != 7 || b.Seq != 7 {
		t.Errorf("got %v and %v, want the line twice", a, b)
	}
	stop()
	if len(skipped) != 0 {
		t.Errorf("skipped %v", skipped)
	}
}

func TestFollowSinceDeliversHistoryFirst(t *testing.T) {
	dir := goldenDirCopy(t)
	r := &Reader{Dir: dir, Poll: time.Millisecond}
	ch, stop := follow(t, r, Filter{Since: testkit.Time("2026-05-01T00:01:00Z")})
	var got []Entry
	for range 4 {
		got = append(got, next(t, ch))
	}
	if want := "flatten#1 plaec_order#2 node_snapshot#3 validate_strategy#4"; ids(got) != want {
		t.Errorf("history %q, want %q", ids(got), want)
	}
	w, err := Open(dir, Options{Now: testkit.NewClock(testkit.Time("2026-05-02T00:00:00Z")).Now})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if got := barrier(t, w, ch); len(got) != 0 {
		t.Errorf("delivered %s twice", ids(got))
	}
	stop()
}

func TestFollowWaitsForTheDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "later")
	r := &Reader{Dir: dir, Poll: time.Millisecond}
	ch, stop := follow(t, r, Filter{})
	w, err := Open(dir, Options{Now: testkit.NewClock(testkit.Time("2026-05-02T00:00:00Z")).Now})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.Write(entry(1, "first", OK))
	if e := next(t, ch); e.Tool != "first" {
		t.Errorf("got %s, want the first entry", e.Tool)
	}
	stop()
}

func TestFollowStopsOnCallbackError(t *testing.T) {
	dir := goldenDirCopy(t)
	r := &Reader{Dir: dir, Poll: time.Millisecond}
	stopErr := errors.New("enough")
	n := 0
	err := r.Follow(context.Background(), Filter{Since: testkit.Time("2026-01-01T00:00:00Z")}, func(Entry) error {
		n++
		if n == 3 {
			return stopErr
		}
		return nil
	})
	if !errors.Is(err, stopErr) || n != 3 {
		t.Errorf("Follow = %v after %d entries, want the callback's error after 3", err, n)
	}
}

func appendRaw(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}
