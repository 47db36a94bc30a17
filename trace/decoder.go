package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// maxReadLine bounds a line a Decoder accepts. Writers never write more than
// MaxLine; anything longer is not an entry and is skipped without being held
// in memory.
const maxReadLine = 1 << 20

// Decoder reads trace entries from a stream of lines. It accepts input in
// chunks of any size and tolerates bad lines: each is reported by Next as a
// *Problem, after which Next can be called again.
type Decoder struct {
	r       *bufio.Reader
	buf     []byte
	line    int    // lines read so far
	err     error  // sticky read error
	pending *Entry // an entry recovered from behind a fragment, for the next Next
}

// NewDecoder returns a Decoder reading from r.
func NewDecoder(r io.Reader) *Decoder {
	return &Decoder{r: bufio.NewReaderSize(r, 64<<10)}
}

// Next returns the next entry, skipping blank lines. At the end of the
// stream it returns io.EOF. A complete line that is not an entry returns a
// *Problem of kind KindMalformed; a last line with no newline that does not
// decode returns KindTorn (a last line that lacks only its newline is an
// entry). After either, Next moves on. A read error returns KindIO and
// ends the stream.
//
// A line that starts with the fragment of a write cut short and goes on with
// a whole entry (another write, appended before the fragment was ended)
// returns a *Problem of kind KindTorn for the fragment, then the entry.
func (d *Decoder) Next() (Entry, error) {
	if e := d.pending; e != nil {
		d.pending = nil
		return *e, nil
	}
	for {
		raw, _, nl, long, err := d.readLine()
		if err != nil {
			return Entry{}, err
		}
		e, has, perr := d.decode(raw, nl, long)
		switch {
		case has && perr != nil:
			d.pending = &e
			return Entry{}, perr
		case has || perr != nil:
			return e, perr
		}
	}
}

// readLine reads one line. It returns the line without its newline, the
// bytes it consumed, whether the line ended with a newline, and whether it
// was longer than maxReadLine (its content is then dropped). At the end of
// the stream it returns io.EOF.
func (d *Decoder) readLine() (line []byte, n int, nl, long bool, err error) {
	if d.err != nil {
		return nil, 0, false, false, d.err
	}
	d.buf = d.buf[:0]
	for {
		frag, rerr := d.r.ReadSlice('\n')
		n += len(frag)
		if !long {
			if len(d.buf)+len(frag) > maxReadLine {
				long, d.buf = true, d.buf[:0]
			} else {
				d.buf = append(d.buf, frag...)
			}
		}
		switch {
		case rerr == nil:
			d.line++
			return bytes.TrimSuffix(d.buf, []byte("\n")), n, true, long, nil
		case errors.Is(rerr, bufio.ErrBufferFull):
			continue
		case errors.Is(rerr, io.EOF):
			if n == 0 {
				d.err = io.EOF
				return nil, 0, false, false, io.EOF
			}
			d.line++
			return d.buf, n, false, long, nil
		default:
			d.err = &Problem{Kind: KindIO, Err: rerr}
			return nil, 0, false, false, d.err
		}
	}
}

// decode turns one line into an entry: has is set when it holds one, and
// neither has nor err for an empty line, which is no entry and no
// problem. A line that is the fragment of a write cut short followed by a
// whole entry returns both the entry and a KindTorn problem for the
// fragment.
func (d *Decoder) decode(raw []byte, nl, long bool) (e Entry, has bool, err error) {
	if long {
		return Entry{}, false, &Problem{Kind: KindMalformed, Line: d.line,
			Err: fmt.Errorf("line longer than %d bytes", maxReadLine)}
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return Entry{}, false, nil
	}
	err = json.Unmarshal(raw, &e)
	if err == nil {
		return e, true, nil
	}
	if glued, at, ok := afterFragment(raw); ok {
		return glued, true, &Problem{Kind: KindTorn, Line: d.line, Err: &fragment{n: at}}
	}
	if !nl {
		return Entry{}, false, &Problem{Kind: KindTorn, Line: d.line, Err: err}
	}
	return Entry{}, false, &Problem{Kind: KindMalformed, Line: d.line, Err: err}
}

// entryStart is how every line a Writer writes begins (ts is the first
// field of an entry).
var entryStart = []byte(`{"ts":"`)

// afterFragment looks in a line that does not decode for a whole entry
// glued behind the fragment of a write cut short: the first later start of
// an entry whose rest of the line decodes as one, with a time, a tool and
// a verdict. A nested object in a fragment's arguments that happens to
// start the same way does not decode to the end of the line.
func afterFragment(raw []byte) (Entry, int, bool) {
	for at := 1; at < len(raw); at++ {
		i := bytes.Index(raw[at:], entryStart)
		if i < 0 {
			break
		}
		at += i
		var e Entry
		if json.Unmarshal(raw[at:], &e) == nil && !e.TS.IsZero() && e.Tool != "" && !e.Verdict.IsZero() {
			return e, at, true
		}
	}
	return Entry{}, 0, false
}

// fragment is the cause of a KindTorn problem for the n bytes of a write
// cut short that begin a line holding a whole entry after them.
type fragment struct{ n int }

func (f *fragment) Error() string {
	return fmt.Sprintf("the first %d bytes are a write cut short, with a whole entry glued after them (that entry was read)", f.n)
}
