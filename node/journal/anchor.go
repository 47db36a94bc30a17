package journal

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"strings"
)

// The anchor is a small file beside the journal (node.db.anchor) holding
// the highest command and event numbers the journal has committed. It is
// written and fsynced after every commit that adds either, before Commit
// returns, so it never runs ahead of the journal. A journal found holding
// less than its anchor has lost acknowledged rows (an older copy put in
// its place, the file deleted or emptied) and is refused at Open, since a
// node replaying it would forget orders and accept their client order ids
// again.

// anchorSuffix names the anchor beside the journal.
const anchorSuffix = ".anchor"

// anchorLine is the anchor's one line: the two numbers and a CRC-32 of the
// text before " crc", so a torn or edited file is told from a real one.
const anchorLine = "wicket journal anchor: commands %012d events %012d"

// level is how far a journal has committed: its highest command (audit
// row) and event numbers.
type level struct{ commands, events int64 }

// behind reports whether l lacks anything at holds.
func (l level) behind(at level) bool { return l.commands < at.commands || l.events < at.events }

type anchor struct {
	f   *os.File
	at  level // what the file holds
	err error // a write that failed, tried again at the next commit
}

// openAnchor opens (or creates) the anchor of the journal at path and
// reads it; a new file holds level zero.
func openAnchor(path string) (*anchor, error) {
	name := path + anchorSuffix
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open journal anchor: %w", err)
	}
	a := &anchor{f: f}
	if a.at, err = readAnchor(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal anchor %s is unreadable (%w); if %s is the journal you mean to run on, move the anchor aside and the node writes a new one from the journal", name, err, path)
	}
	return a, nil
}

func readAnchor(f *os.File) (level, error) {
	buf := make([]byte, 128)
	n, err := f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return level{}, err
	}
	text := strings.TrimRight(string(buf[:n]), "\n")
	if text == "" {
		return level{}, nil
	}
	body, sum, ok := strings.Cut(text, " crc ")
	var l level
	var crc uint32
	if !ok {
		return level{}, errors.New("no checksum")
	}
	if _, err := fmt.Sscanf(sum, "%08x", &crc); err != nil || crc != crc32.ChecksumIEEE([]byte(body)) {
		return level{}, errors.New("its checksum does not match")
	}
	if _, err := fmt.Sscanf(body, anchorLine, &l.commands, &l.events); err != nil {
		return level{}, fmt.Errorf("not an anchor: %w", err)
	}
	return l, nil
}

// write stores l and syncs it. The line has a fixed width, so it always
// overwrites the whole of the last one, in one write.
func (a *anchor) write(l level) error {
	body := fmt.Sprintf(anchorLine, l.commands, l.events)
	line := fmt.Sprintf("%s crc %08x\n", body, crc32.ChecksumIEEE([]byte(body)))
	if _, err := a.f.WriteAt([]byte(line), 0); err != nil {
		return err
	}
	if err := a.f.Sync(); err != nil {
		return err
	}
	a.at = l
	return nil
}

// advance records that the journal reached l, keeping a failure to try
// again at the next commit: the commit itself is durable, so a failed
// anchor only weakens what the next start can check.
func (a *anchor) advance(l level) {
	if l == a.at && a.err == nil {
		return
	}
	a.err = a.write(l)
}

func (a *anchor) close() error {
	return errors.Join(a.err, a.f.Close())
}
