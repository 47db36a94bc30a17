package journal

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
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

// anchorKeySuffix names the node's anchor key beside the journal: 32
// random bytes in hex (mode 0600), made with the first anchor that
// carries a mark. The anchor's line carries an HMAC-SHA256 under it, so
// an anchor rewritten to match a journal rolled back, which a checksum
// would let through, needs the key; the agent's process never reads it.
const anchorKeySuffix = ".anchor-key"

// anchorLine is the anchor's one line: the two numbers and the HMAC of
// the text before " mac". An anchor written before the mark (" crc ", a
// CRC-32) is read once, on a journal that had no key yet, and rewritten
// with the mark.
const anchorLine = "wicket journal anchor: commands %012d events %012d"

// level is how far a journal has committed: its highest command (audit
// row) and event numbers.
type level struct{ commands, events int64 }

// behind reports whether l lacks anything at holds.
func (l level) behind(at level) bool { return l.commands < at.commands || l.events < at.events }

type anchor struct {
	f   *os.File
	key []byte
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
	key, made, err := anchorKey(path + anchorKeySuffix)
	if err != nil {
		f.Close()
		return nil, err
	}
	a := &anchor{f: f, key: key}
	if a.at, err = readAnchor(f, key, made); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal anchor %s is unreadable (%w); if %s is the journal you mean to run on, move the anchor aside and the node writes a new one from the journal", name, err, path)
	}
	return a, nil
}

// anchorKey reads the anchor key at name, or makes one; made says it was
// made now.
func anchorKey(name string) (key []byte, made bool, err error) {
	text, err := os.ReadFile(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		key = make([]byte, 32)
		_, _ = rand.Read(key) // crypto/rand.Read never fails
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, false, fmt.Errorf("make the journal's anchor key: %w", err)
		}
		if _, err := f.WriteString(hex.EncodeToString(key) + "\n"); err != nil {
			f.Close()
			return nil, false, fmt.Errorf("make the journal's anchor key: %w", err)
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, false, fmt.Errorf("make the journal's anchor key: %w", err)
		}
		return key, true, f.Close()
	case err != nil:
		return nil, false, fmt.Errorf("read the journal's anchor key: %w", err)
	}
	key, err = hex.DecodeString(strings.TrimSpace(string(text)))
	if err != nil || len(key) != 32 {
		return nil, false, fmt.Errorf("the journal's anchor key %s is not 64 hex digits: restore it, or move it and the anchor aside (the node makes both anew)", name)
	}
	return key, false, nil
}

// anchorMAC is the mark of an anchor's text under key.
func anchorMAC(key []byte, body string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(body))
	return hex.EncodeToString(m.Sum(nil))
}

// readAnchor reads the anchor's line; a line without the mark is read only
// when the key was made just now (an anchor written before marks).
func readAnchor(f *os.File, key []byte, keyNew bool) (level, error) {
	buf := make([]byte, 256)
	n, err := f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return level{}, err
	}
	text := strings.TrimRight(string(buf[:n]), "\n")
	if text == "" {
		return level{}, nil
	}
	var l level
	if body, mac, ok := strings.Cut(text, " mac "); ok {
		if !hmac.Equal([]byte(mac), []byte(anchorMAC(key, body))) {
			return level{}, errors.New("its mark does not verify with the journal's anchor key: the anchor was edited, or the key is not the one it was written with")
		}
		text = body
	} else {
		body, sum, ok := strings.Cut(text, " crc ")
		var crc uint32
		switch {
		case !ok:
			return level{}, errors.New("no checksum")
		case !keyNew:
			return level{}, errors.New("it carries no mark of the journal's anchor key, which every anchor since the key was made carries: it was rewritten")
		}
		if _, err := fmt.Sscanf(sum, "%08x", &crc); err != nil || crc != crc32.ChecksumIEEE([]byte(body)) {
			return level{}, errors.New("its checksum does not match")
		}
		text = body
	}
	body := text
	if _, err := fmt.Sscanf(body, anchorLine, &l.commands, &l.events); err != nil {
		return level{}, fmt.Errorf("not an anchor: %w", err)
	}
	return l, nil
}

// write stores l and syncs it. The line has a fixed width, so it always
// overwrites the whole of the last one, in one write.
func (a *anchor) write(l level) error {
	body := fmt.Sprintf(anchorLine, l.commands, l.events)
	line := fmt.Sprintf("%s mac %s\n", body, anchorMAC(a.key, body))
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
