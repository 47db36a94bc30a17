package history

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"wicket/internal/project"
)

// DefaultMaxImportBytes is the largest file ImportFile reads unless told
// otherwise: 2 GiB, some thirty million hourly bars.
const DefaultMaxImportBytes int64 = 2 << 30

// maxFieldInMessage is how many bytes of a file's field an error quotes;
// the rest is counted, never echoed.
const maxFieldInMessage = 80

// quoteField quotes a field of an imported file for an error message, cut
// to maxFieldInMessage bytes (on a rune boundary) with its full length
// after, so a 10 MB field makes a short message.
func quoteField(s string) string {
	head, more := cutField(s)
	return strconv.Quote(head) + more
}

// cutField is s, or its first maxFieldInMessage bytes (on a rune boundary)
// and "…(N bytes)" giving its length.
func cutField(s string) (head, more string) {
	if len(s) <= maxFieldInMessage {
		return s, ""
	}
	cut := maxFieldInMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], "…(" + strconv.Itoa(len(s)) + " bytes)"
}

// maxHeaderInMessage is about how many bytes of a header an error quotes.
const maxHeaderInMessage = 200

// quoteHeader quotes a file's first record for an error message: its
// fields joined by commas, each cut as cutField cuts it, and the list cut
// after maxHeaderInMessage bytes with the count of fields left out.
func quoteHeader(raw []string) string {
	var b strings.Builder
	for i, f := range raw {
		if b.Len() >= maxHeaderInMessage {
			fmt.Fprintf(&b, ",…(and %d more fields)", len(raw)-i)
			break
		}
		if i > 0 {
			b.WriteByte(',')
		}
		head, more := cutField(f)
		b.WriteString(head + more)
	}
	return strconv.Quote(b.String())
}

// ImportFile opens path for Import: a regular file (a symlink counts as
// what it leads to) of at most maxBytes (DefaultMaxImportBytes when 0 or
// less). A FIFO, a device (/dev/zero, even through a symlink), a socket or
// a directory is refused without blocking on it: the file is opened
// non-blocking where the system has that, and checked on its open handle.
// The reader stops with an Invalid *Error if the file grows past maxBytes
// while it is read, so nothing past the bound is ever taken in.
func ImportFile(path string, maxBytes int64) (io.ReadCloser, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxImportBytes
	}
	// Refuse what is not a regular file before opening it at all; the
	// check on the open handle below covers a file swapped in between.
	if st, err := os.Stat(path); err != nil {
		return nil, err
	} else if err := checkImportFile(path, st, maxBytes); err != nil {
		return nil, err
	}
	f, err := openNonBlocking(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil {
		err = checkImportFile(path, st, maxBytes)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &boundedFile{f: f, r: io.LimitReader(f, maxBytes+1), max: maxBytes}, nil
}

// checkImportFile refuses a file that is not regular or is over maxBytes.
func checkImportFile(path string, st os.FileInfo, maxBytes int64) error {
	if !st.Mode().IsRegular() {
		what := project.FileKind(st.Mode())
		if target, err := filepath.EvalSymlinks(path); err == nil && target != filepath.Clean(path) {
			what = fmt.Sprintf("a symlink to %s, %s", target, what)
		}
		return &Error{Kind: KindInvalid, Msg: fmt.Sprintf("%s is %s, not a regular file; import reads regular files only (copy the data into a file first)", path, what)}
	}
	if st.Size() > maxBytes {
		return &Error{Kind: KindInvalid, Msg: fmt.Sprintf("%s is %d bytes, over the %d-byte import bound; split it, or raise the bound with --max-size", path, st.Size(), maxBytes)}
	}
	return nil
}

// boundedFile reads an import file up to its bound and refuses one that
// grew past it.
type boundedFile struct {
	f   *os.File
	r   io.Reader
	n   int64
	max int64
}

func (b *boundedFile) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	if b.n > b.max {
		return 0, &Error{Kind: KindInvalid, Msg: fmt.Sprintf("%s grew past the %d-byte import bound while it was read; import a file that is not being written", b.f.Name(), b.max)}
	}
	return n, err
}

func (b *boundedFile) Close() error { return b.f.Close() }

// maxLineBytes bounds one line of an imported file. A bar row is a few
// dozen bytes; a longer line is no CSV of bars (a compressed or binary
// file), and the CSV reader would hold all of it in memory.
const maxLineBytes = 16 << 20

// lineGuard passes a file through, failing once a line runs past
// maxLineBytes without a newline.
type lineGuard struct {
	r    io.Reader
	line int   // lines finished so far
	run  int64 // bytes since the last newline
}

func (g *lineGuard) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	for b := p[:n]; ; {
		i := bytes.IndexByte(b, '\n')
		end := int64(i)
		if i < 0 {
			end = int64(len(b))
		}
		if g.run+end > maxLineBytes {
			return 0, &Error{Kind: KindInvalid, Msg: fmt.Sprintf("line %d is longer than %d MiB; a bar row is a few dozen bytes, so this is not a CSV file of bars (a compressed or binary file?)",
				g.line+1, maxLineBytes>>20)}
		}
		if i < 0 {
			g.run += end
			break
		}
		g.line++
		g.run, b = 0, b[i+1:]
	}
	return n, err
}
