package journal

import (
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// crcLine is an anchor line in the form before marks: what anyone can
// write, since a CRC-32 needs no key.
func crcLine(commands, events int64) string {
	body := fmt.Sprintf(anchorLine, commands, events)
	return fmt.Sprintf("%s crc %08x\n", body, crc32.ChecksumIEEE([]byte(body)))
}

// TestAnchorIsKeyed is issue 44's item 5 for the node: the journal's
// anchor was checked by CRC-32, so an older copy of the journal put in
// place with an anchor rewritten to match it passed. The anchor carries
// an HMAC under the journal's anchor key now; a line rewritten without
// the key is refused, and an anchor of the form before marks is read
// once, on the journal's first start with a key, and rewritten marked.
func TestAnchorIsKeyed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node.db")
	j := open(t, path)
	submit(t, j, 0, 1)
	submit(t, j, 1, 2)
	j.Close()
	older := filepath.Join(t.TempDir(), "older.db")
	copyFile(t, path, older)
	j = open(t, path)
	submit(t, j, 2, 3)
	j.Close()

	// The rollback: the older journal put back with an anchor made to match.
	copyFile(t, older, path)
	if err := os.WriteFile(path+anchorSuffix, []byte(crcLine(2, 2)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "carries no mark of the journal's anchor key") {
		t.Fatalf("a rolled-back journal with an anchor rewritten by CRC-32 opens: %v", err)
	}
	forged := fmt.Sprintf(anchorLine, 2, 2)
	if err := os.WriteFile(path+anchorSuffix, []byte(forged+" mac "+strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "mark does not verify") {
		t.Fatalf("an anchor with a made-up mark opens: %v", err)
	}

	// A journal anchored before marks: its first start makes the key,
	// reads the CRC line once and rewrites it marked.
	legacy := filepath.Join(t.TempDir(), "node.db")
	j = open(t, legacy)
	submit(t, j, 0, 1)
	j.Close()
	if err := os.Remove(legacy + anchorKeySuffix); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(legacy+anchorSuffix, []byte(crcLine(1, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	j = open(t, legacy)
	submit(t, j, 1, 2)
	j.Close()
	data, err := os.ReadFile(legacy + anchorSuffix)
	if err != nil || !strings.Contains(string(data), " mac ") || strings.Contains(string(data), " crc ") {
		t.Fatalf("the anchor after the first keyed start: %q %v", data, err)
	}
	if fi, err := os.Stat(legacy + anchorKeySuffix); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the anchor key: %v %v", fi, err)
	}
	open(t, legacy).Close()
}
