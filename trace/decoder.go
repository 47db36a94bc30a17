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
	r    *bufio.Reader
	buf  []byte
	line int   // lines read so far
	err  error // sticky read error
}

// NewDecoder returns a Decoder reading from r.
func NewDecoder(r io.Reader) *Decoder {
	return &Decoder{r: bufio.NewReaderSize(r, 64<<10)}
}

// Line is the number of the line Next last read, counting from 1.
func (d *Decoder) Line() int { return d.line }

// Next returns the next entry, skipping blank lines. At the end of the
// stream it returns io.EOF. A complete line that is not an entry returns a
// *Problem of kind KindMalformed; a last line with no newline that does not
// decode returns KindTorn (a last line that lacks only its newline is an
// entry). After either, Next moves on. A read error returns KindIO and
// ends the stream.
func (d *Decoder) Next() (Entry, error) {
	for {
		raw, _, nl, long, err := d.readLine()
		if err != nil {
			return Entry{}, err
		}
		e, blank, perr := d.decode(raw, nl, long)
		if blank {
			continue
		}
		return e, perr
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

// decode turns one line into an entry. blank is set for an empty line,
// which is no entry and no problem.
func (d *Decoder) decode(raw []byte, nl, long bool) (e Entry, blank bool, err error) {
	if long {
		return Entry{}, false, &Problem{Kind: KindMalformed, Line: d.line,
			Err: fmt.Errorf("line longer than %d bytes", maxReadLine)}
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return Entry{}, true, nil
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		if !nl {
			return Entry{}, false, &Problem{Kind: KindTorn, Line: d.line, Err: err}
		}
		return Entry{}, false, &Problem{Kind: KindMalformed, Line: d.line, Err: err}
	}
	return e, false, nil
}
