package ledger

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Anchor is the head of the chain after one append: its last row's
// sequence number and hash, the batch's run id and size. Anchors live
// outside the database, in the anchor file beside it (AnchorPath), so
// that rows cut from the end of the ledger, which leave a shorter chain
// that is valid in itself, are still missed. A copy of the file kept
// elsewhere vouches for the ledger even against someone who cuts both.
type Anchor struct {
	Seq   int64  `json:"seq"`
	Hash  string `json:"hash"`
	RunID string `json:"run_id"`
	Rows  int    `json:"rows"`
	Time  string `json:"time"`
	// MAC is the line's mark under the ledger key (boundary.go): a line
	// without it, or with a wrong one, at or after the ledger's
	// anchors_keyed_from was not written by a holder of the key.
	MAC string `json:"mac,omitempty"`
}

// maxAnchorLine bounds one line of the anchor file read back.
const maxAnchorLine = 4096

// anchor appends a to the anchor file: one write of one line, O_APPEND,
// so writers in several processes do not interleave.
func (l *Ledger) anchor(a Anchor) error {
	a.MAC = anchorMAC(l.opts.Key, a)
	line, err := json.Marshal(a)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(AnchorPath(l.path), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ReadAnchors reads the anchor file of the ledger at path; a missing file
// is no anchors. Lines that do not read as an anchor (a line torn by a
// crash) are counted in bad, never fatal.
func ReadAnchors(path string) (anchors []Anchor, bad int, err error) {
	return readAnchorFile(AnchorPath(path), true)
}

// readAnchorFile reads one anchor file; a missing one is no anchors when
// optional, else an error.
func readAnchorFile(file string, optional bool) (anchors []Anchor, bad int, err error) {
	f, err := os.Open(file)
	if optional && errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("read the ledger's anchors: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 512), maxAnchorLine)
	for sc.Scan() {
		var a Anchor
		if json.Unmarshal(sc.Bytes(), &a) != nil || a.Seq < 1 || len(a.Hash) != len(Genesis) {
			bad++
			continue
		}
		anchors = append(anchors, a)
	}
	if err := sc.Err(); err != nil {
		return anchors, bad, fmt.Errorf("read the ledger's anchors %s: %w", file, err)
	}
	return anchors, bad, nil
}
