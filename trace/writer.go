package trace

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultKeep is how many month files a Writer keeps when it opens.
const DefaultKeep = 24

// Options configure a Writer. The zero value is ready to use.
type Options struct {
	// Now stamps entries whose TS is zero and picks the month file to create
	// at Open. Default time.Now.
	Now func() time.Time
	// Stderr receives the reports of write failures (once per distinct
	// error) and of the caller's mistakes. Default os.Stderr.
	Stderr io.Writer
	// Sync makes Write fsync the month file after its line, so that an
	// entry survives a power loss, at the price of a disk flush per call.
	// Off, a line is in the kernel when Write returns: it survives a crash
	// or kill of the process, not of the machine.
	Sync bool
	// Keep is how many month files Open leaves in the directory (the
	// newest, by name); 0 means DefaultKeep, a negative value keeps all.
	Keep int
}

// Writer appends entries to the month files of one directory. It is safe
// for concurrent use, and several Writers (in one or several processes) may
// share a directory: every line goes to its file in a single O_APPEND
// write(2), so lines never interleave.
type Writer struct {
	dir    string
	now    func() time.Time
	stderr io.Writer
	sync   bool
	keep   int

	mu     sync.RWMutex // guards f, month, newest, closed; held shared while writing a line
	f      *os.File
	month  string // the month of f, "2006-01"
	newest string // the newest month this Writer has opened
	closed bool

	failing atomic.Bool // a write failed and none has succeeded since
	rmu     sync.Mutex  // guards reported, lost and writes to stderr
	lost    int64       // entries lost since the last success
	report  map[string]bool
}

// Open prepares dir for writing: it creates it (and its parents) if needed,
// creates or opens the file of the current month (so that an unwritable
// directory is an error now rather than a report later), and prunes dir to
// the newest opts.Keep month files, by name. Only regular files named
// YYYY-MM.jsonl are ever removed; one that cannot be is reported on Stderr.
func Open(dir string, opts Options) (*Writer, error) {
	if dir == "" {
		return nil, &Problem{Kind: KindInvalid, Err: errors.New("no trace directory given")}
	}
	w := &Writer{
		dir: dir, now: opts.Now, stderr: opts.Stderr, sync: opts.Sync, keep: opts.Keep,
		report: make(map[string]bool),
	}
	if w.now == nil {
		w.now = time.Now
	}
	if w.stderr == nil {
		w.stderr = os.Stderr
	}
	if w.keep == 0 {
		w.keep = DefaultKeep
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, &Problem{Kind: KindIO, Path: dir, Err: err}
	}
	w.mu.Lock()
	err := w.openLocked(monthOf(w.now()))
	w.mu.Unlock()
	if err != nil {
		return nil, &Problem{Kind: KindIO, Path: dir, Err: err}
	}
	if err := prune(dir, w.keep, w.month); err != nil {
		// The trace itself works; an old month that stays is no reason
		// to refuse to serve.
		w.note("trace: pruning: " + err.Error())
	}
	return w, nil
}

// Dir is the directory the Writer writes to.
func (w *Writer) Dir() string { return w.dir }

// Write appends e to the file of its UTC month, stamping TS from Now when it
// is zero. It never returns an error and never waits on anything but its own
// write (and fsync, with Options.Sync): a failure is reported on Stderr, once
// per distinct error, the entry is lost, and the next Write tries again.
//
// An entry with no verdict is written with verdict error and the mistake is
// reported; arguments that are not JSON are dropped (args_dropped) and
// reported; an entry over MaxLine drops its arguments.
func (w *Writer) Write(e Entry) {
	if e.TS.IsZero() {
		e.TS = w.now()
	}
	e.TS = e.TS.UTC()
	if e.Verdict.IsZero() {
		e.Verdict = Error
		const note = "the caller gave no verdict"
		if e.Error == "" {
			e.Error = "trace: " + note
		} else {
			e.Error = "trace: " + note + "; " + e.Error
		}
		w.note(fmt.Sprintf("trace: an entry for tool %q had no verdict; recorded it as error (a bug in the caller)", e.Tool))
	}
	if len(e.Args) > 0 && !json.Valid(e.Args) {
		e.Args, e.ArgsDropped = nil, true
		w.note(fmt.Sprintf("trace: the arguments of an entry for tool %q are not JSON; recorded it without them (a bug in the caller)", e.Tool))
	}
	line, err := encodeLine(nil, &e)
	if err != nil {
		w.failed(err)
		return
	}
	if err := w.append(monthOf(e.TS), line); err != nil {
		if errors.Is(err, errClosed) {
			w.note(fmt.Sprintf("trace: an entry for tool %q arrived after Close and was not written (a bug in the caller)", e.Tool))
			return
		}
		w.failed(err)
		return
	}
	w.succeeded()
}

// Close closes the current month file (after an fsync with Options.Sync).
// Writes after Close are lost and reported.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	if w.f == nil {
		return nil
	}
	err := w.closeLocked()
	if err != nil {
		return &Problem{Kind: KindIO, Path: w.dir, Err: err}
	}
	return nil
}

var errClosed = errors.New("write after Close")

// append writes line to the file of month.
func (w *Writer) append(month string, line []byte) error {
	w.mu.RLock()
	if w.f != nil && w.month == month {
		f := w.f
		err := writeLine(f, line)
		w.mu.RUnlock()
		if err == nil && removed(f) {
			return w.rewrite(f, month, line)
		}
		return w.settle(f, err)
	}
	w.mu.RUnlock()

	// Another month, or no file after a failure: switch under the
	// exclusive lock and write there, so the switch cannot be undone by
	// another writer before this line lands.
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return errClosed
	}
	if w.f == nil || w.month != month {
		if err := w.openLocked(month); err != nil {
			w.mu.Unlock()
			return err
		}
	}
	f := w.f
	err := writeLine(f, line)
	w.mu.Unlock()
	if err == nil && removed(f) {
		return w.rewrite(f, month, line)
	}
	return w.settle(f, err)
}

// rewrite writes line again after it went to f, a file that was removed
// (itself, or its directory) while open: the line is in no file anyone can
// read. The first writer to find f gone recreates the month file (and the
// directory, openLocked) and says so once; every line written to f since
// is written again, so no entry is lost.
func (w *Writer) rewrite(f *os.File, month string, line []byte) error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return errClosed
	}
	if w.f == f || w.f == nil || w.month != month {
		if w.f == f {
			f.Close()
			w.f, w.month = nil, ""
		}
		if err := w.openLocked(month); err != nil {
			w.mu.Unlock()
			return err
		}
		w.rmu.Lock()
		fmt.Fprintf(w.stderr, "trace: %s was removed (or its directory) while in use; recreated it, and tracing goes on there\n", f.Name())
		w.rmu.Unlock()
	}
	nf := w.f
	err := writeLine(nf, line)
	w.mu.Unlock()
	return w.settle(nf, err)
}

// shortWrite is a write(2) that took only n of a line's bytes: the file
// now ends in a fragment of an entry.
type shortWrite struct{ n, of int }

func (s *shortWrite) Error() string { return fmt.Sprintf("short write: %d of %d bytes", s.n, s.of) }

// tornWrite is a short write whose fragment could not be ended with a
// newline, because of cause (a full disk, a file size limit). It is
// reported, and deduplicated, as its cause: the writes that fail after it
// fail for the same reason and are the same outage.
type tornWrite struct {
	short *shortWrite
	cause error
}

func (t *tornWrite) Error() string {
	return fmt.Sprintf("%v (an entry was cut short after %d of %d bytes)", t.cause, t.short.n, t.short.of)
}

func (t *tornWrite) Unwrap() error { return t.cause }

// endFragment follows a short write to f at once with a newline, so that
// the next line, this Writer's or another's, starts on its own rather than
// glued to the fragment. When even the newline cannot be written, the
// fragment stays until the next open ends it (terminate), and readers
// recover an entry glued to it (Decoder).
func endFragment(f *os.File, err error) error {
	var sw *shortWrite
	if !errors.As(err, &sw) || sw.n == 0 {
		return err
	}
	if nerr := writeLine(f, []byte("\n")); nerr != nil {
		return &tornWrite{short: sw, cause: nerr}
	}
	return fmt.Errorf("%w; the fragment was ended with a newline", err)
}

// settle finishes a write to f: on failure it ends a torn line and drops f
// so the next Write reopens it; with Sync it flushes f.
func (w *Writer) settle(f *os.File, err error) error {
	err = endFragment(f, err)
	if err == nil && w.sync {
		err = f.Sync()
		if errors.Is(err, os.ErrClosed) {
			err = nil // a month switch closed f, and synced it first
		}
	}
	if err == nil {
		return nil
	}
	w.mu.Lock()
	if w.f == f {
		w.f.Close()
		w.f, w.month = nil, ""
	}
	w.mu.Unlock()
	return err
}

// openLocked makes the file of month the current one.
func (w *Writer) openLocked(month string) error {
	path := filepath.Join(w.dir, month+".jsonl")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		// The directory went away; put it back.
		if mkErr := os.MkdirAll(w.dir, 0o700); mkErr == nil {
			f, err = os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
		}
	}
	if err != nil {
		return err
	}
	if err := terminate(f); err != nil {
		f.Close()
		return err
	}
	if w.f != nil {
		if err := w.closeLocked(); err != nil {
			w.note(fmt.Sprintf("trace: closing %s.jsonl: %v", w.month, err))
		}
	}
	w.f, w.month = f, month
	if month > w.newest {
		if w.newest != "" {
			// A long-running server rolls forward: keep the directory
			// pruned as Open would.
			if err := prune(w.dir, w.keep, month); err != nil {
				w.note("trace: pruning: " + err.Error())
			}
		}
		w.newest = month
	}
	return nil
}

func (w *Writer) closeLocked() error {
	var err error
	if w.sync {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.f, w.month = nil, ""
	return err
}

// terminate ends a file whose last byte is not a newline (the remains of a
// write cut short) with one, so that the next line starts on its own. If the
// fragment was another writer's line still being copied in, the newline
// lands after that line (appends are ordered) and leaves a blank line,
// which readers skip.
func terminate(f *os.File) error {
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return err
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, fi.Size()-1); err != nil {
		return err
	}
	if last[0] == '\n' {
		return nil
	}
	return writeLine(f, []byte("\n"))
}

// failed records a lost entry and reports err unless already reported.
func (w *Writer) failed(err error) {
	w.failing.Store(true)
	w.rmu.Lock()
	defer w.rmu.Unlock()
	w.lost++
	msg, key := err.Error(), err.Error()
	var torn *tornWrite
	if errors.As(err, &torn) {
		key = torn.cause.Error()
	}
	if w.report[key] {
		return
	}
	w.report[key] = true
	fmt.Fprintf(w.stderr, "trace: %s; tool calls go on, untraced until this is fixed\n", strings.TrimPrefix(msg, "trace: "))
}

// succeeded ends a failure spell: it says how much was lost and forgets
// which errors were reported, so that a new outage is reported again.
func (w *Writer) succeeded() {
	if !w.failing.Load() {
		return
	}
	w.rmu.Lock()
	defer w.rmu.Unlock()
	if !w.failing.Load() {
		return
	}
	w.failing.Store(false)
	fmt.Fprintf(w.stderr, "trace: writing to %s resumed; %d entries were lost\n", w.dir, w.lost)
	w.lost = 0
	clear(w.report)
}

// note reports msg once.
func (w *Writer) note(msg string) {
	w.rmu.Lock()
	defer w.rmu.Unlock()
	if w.report[msg] {
		return
	}
	w.report[msg] = true
	fmt.Fprintln(w.stderr, msg)
}

// monthOf is the name (without .jsonl) of the month file for t.
func monthOf(t time.Time) string { return t.UTC().Format("2006-01") }

// isMonthFile reports whether name is YYYY-MM.jsonl with a month 01..12.
func isMonthFile(name string) bool {
	if len(name) != len("2006-01.jsonl") || name[4] != '-' || name[7:] != ".jsonl" {
		return false
	}
	for _, i := range []int{0, 1, 2, 3, 5, 6} {
		if name[i] < '0' || name[i] > '9' {
			return false
		}
	}
	m := int(name[5]-'0')*10 + int(name[6]-'0')
	return m >= 1 && m <= 12
}

// monthFiles lists the month files of dir, oldest first.
func monthFiles(dir string) ([]string, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, de := range des {
		if de.Type().IsRegular() && isMonthFile(de.Name()) {
			names = append(names, de.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// prune removes all but the newest keep month files of dir, never the file
// of month current. It reports a file it cannot remove in its error but
// goes on with the others.
func prune(dir string, keep int, current string) error {
	if keep < 0 {
		return nil
	}
	names, err := monthFiles(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range names[:max(0, len(names)-keep)] {
		if name == current+".jsonl" {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
