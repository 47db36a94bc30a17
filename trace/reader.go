package trace

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Filter selects entries. The zero Filter selects everything.
type Filter struct {
	Since   time.Time // entries at or after Since; zero: from the beginning
	Until   time.Time // entries before Until; zero: no end
	Tool    string    // the tool name, exactly
	Verdict Verdict   // the zero Verdict selects any
	Session string    // a session id, or a prefix of one
	Token   string    // a preview token id, or a prefix of one
	Caller  string    // the caller's name, exactly
}

// Match reports whether e passes f.
func (f Filter) Match(e Entry) bool {
	switch {
	case !f.Since.IsZero() && e.TS.Before(f.Since),
		!f.Until.IsZero() && !e.TS.Before(f.Until),
		f.Tool != "" && e.Tool != f.Tool,
		!f.Verdict.IsZero() && e.Verdict != f.Verdict,
		f.Session != "" && !strings.HasPrefix(e.Session, f.Session),
		f.Token != "" && (e.Token == "" || !strings.HasPrefix(e.Token, f.Token)),
		f.Caller != "" && e.Caller != f.Caller:
		return false
	}
	return true
}

// inRange reports whether the month file name can hold entries in f's time
// range.
func (f Filter) inRange(name string) bool {
	start, err := time.Parse("2006-01.jsonl", name)
	if err != nil {
		return false
	}
	end := start.AddDate(0, 1, 0)
	return (f.Until.IsZero() || start.Before(f.Until)) && (f.Since.IsZero() || end.After(f.Since))
}

// Reader reads the month files of a trace directory.
type Reader struct {
	Dir string
	// Skipped is called for each line the Reader skips, with a *Problem of
	// kind KindTorn or KindMalformed naming the file and line. Nil ignores
	// them.
	Skipped func(error)
	// Poll is how often Follow looks for new lines; zero means 500ms.
	Poll time.Duration
}

// Read returns the entries that match f from every month file in f's time
// range, ordered by TS (entries with equal TS in file order). A directory
// that does not exist is a *Problem of kind KindNotFound.
func (r *Reader) Read(f Filter) ([]Entry, error) {
	names, err := r.files(f)
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, name := range names {
		path := filepath.Join(r.Dir, name)
		file, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue // pruned since it was listed
		}
		if err != nil {
			return nil, &Problem{Kind: KindIO, Path: path, Err: err}
		}
		d := NewDecoder(file)
		for {
			e, err := d.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				var p *Problem
				if errors.As(err, &p) && (p.Kind == KindTorn || p.Kind == KindMalformed) {
					p.Path = path
					r.skip(p)
					continue
				}
				file.Close()
				if errors.As(err, &p) {
					p.Path = path
				}
				return nil, err
			}
			if f.Match(e) {
				out = append(out, e)
			}
		}
		file.Close()
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].TS.Before(out[j].TS) })
	return out, nil
}

// files lists the month files in f's range, oldest first.
func (r *Reader) files(f Filter) ([]string, error) {
	all, err := monthFiles(r.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &Problem{Kind: KindNotFound, Path: r.Dir, Err: err}
	}
	if err != nil {
		return nil, &Problem{Kind: KindIO, Path: r.Dir, Err: err}
	}
	var names []string
	for _, name := range all {
		if f.inRange(name) {
			names = append(names, name)
		}
	}
	return names, nil
}

func (r *Reader) skip(p *Problem) {
	if r.Skipped != nil {
		r.Skipped(p)
	}
}

// Follow calls fn with each entry that matches f as it is appended to the
// month files, until ctx is done (it then returns ctx.Err()) or fn returns an
// error (which Follow returns). When f.Since is set, Follow first calls fn
// with the matching entries already written; otherwise it starts at the
// current end of the files. It polls every r.Poll, picks up a new month file
// when one appears, waits for a directory that does not exist yet, and holds
// back a last line until its newline arrives. Entries come in file order.
func (r *Reader) Follow(ctx context.Context, f Filter, fn func(Entry) error) error {
	return r.follow(ctx, f, fn, nil)
}

// follow is Follow; ready, when set, is called once the starting positions
// are taken.
func (r *Reader) follow(ctx context.Context, f Filter, fn func(Entry) error, ready func()) error {
	poll := r.Poll
	if poll <= 0 {
		poll = 500 * time.Millisecond
	}
	fl := &follower{r: r, f: f, pos: make(map[string]position)}
	if f.Since.IsZero() {
		if err := fl.skipToEnd(); err != nil {
			return err
		}
	}
	if ready != nil {
		ready()
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
		}
		if err := fl.scan(ctx, fn); err != nil {
			return err
		}
		timer.Reset(poll)
	}
}

// position is how far Follow has read a file: bytes through the last
// complete line, and that line's number.
type position struct {
	off  int64
	line int
}

type follower struct {
	r   *Reader
	f   Filter
	pos map[string]position
}

func (fl *follower) names() ([]string, error) {
	names, err := fl.r.files(fl.f)
	var p *Problem
	if errors.As(err, &p) && p.Kind == KindNotFound {
		return nil, nil
	}
	return names, err
}

// skipToEnd sets every existing file's position to the end of its last
// complete line.
func (fl *follower) skipToEnd() error {
	names, err := fl.names()
	if err != nil {
		return err
	}
	for _, name := range names {
		if err := fl.read(name, nil); err != nil {
			return err
		}
	}
	return nil
}

// scan reads what was appended to every file since the last scan.
func (fl *follower) scan(ctx context.Context, fn func(Entry) error) error {
	names, err := fl.names()
	if err != nil {
		return err
	}
	for _, name := range names {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := fl.read(name, fn); err != nil {
			return err
		}
	}
	return nil
}

// read consumes the complete lines of name past its position, calling fn
// (when not nil) for each matching entry.
func (fl *follower) read(name string, fn func(Entry) error) error {
	path := filepath.Join(fl.r.Dir, name)
	file, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		delete(fl.pos, name)
		return nil
	}
	if err != nil {
		return &Problem{Kind: KindIO, Path: path, Err: err}
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return &Problem{Kind: KindIO, Path: path, Err: err}
	}
	pos := fl.pos[name]
	if fi.Size() < pos.off {
		pos = position{} // the file was replaced or cut: start over
	}
	if fi.Size() == pos.off {
		fl.pos[name] = pos
		return nil
	}
	d := NewDecoder(io.NewSectionReader(file, pos.off, fi.Size()-pos.off))
	d.line = pos.line
	for {
		raw, n, nl, long, err := d.readLine()
		if err == io.EOF || (err == nil && !nl) {
			break // a last line without its newline may still be being written
		}
		if err != nil {
			var p *Problem
			if errors.As(err, &p) {
				p.Path = path
			}
			return err
		}
		pos.off += int64(n)
		pos.line = d.line
		if fn == nil {
			continue
		}
		e, has, perr := d.decode(raw, nl, long)
		if perr != nil {
			var p *Problem
			if errors.As(perr, &p) {
				p.Path = path
				fl.r.skip(p)
			}
		}
		if has && fl.f.Match(e) {
			if err := fn(e); err != nil {
				fl.pos[name] = pos
				return err
			}
		}
	}
	fl.pos[name] = pos
	return nil
}
