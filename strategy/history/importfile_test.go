package history

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportFileBounds: a regular file within the bound reads whole; one
// over it is refused before a byte is read; a directory is not a file; and
// a file that grows past the bound while it is read stops there.
func TestImportFileBounds(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bars.csv")
	body := "time,open,high,low,close,volume\n2024-01-01T00:00:00Z,1,1,1,1,1\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := ImportFile(path, int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(f)
	f.Close()
	if err != nil || string(got) != body {
		t.Fatalf("read %q, %v", got, err)
	}
	if _, err := ImportFile(path, int64(len(body))-1); err == nil || !strings.Contains(err.Error(), "is 63 bytes, over the 62-byte import bound; split it, or raise the bound with --max-size") {
		t.Errorf("over the bound: %v", err)
	}
	if _, err := ImportFile(dir, 0); err == nil || !strings.Contains(err.Error(), "is a directory, not a regular file") {
		t.Errorf("a directory: %v", err)
	}
	if _, err := ImportFile(filepath.Join(dir, "nope.csv"), 0); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}

	// Grows after the check: the reader stops at the bound with an error,
	// never a silent cut.
	f, err = ImportFile(path, int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.WriteFile(path, []byte(body+body), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err = Import(f, ImportOptions{})
	var he *Error
	if !errors.As(err, &he) || he.Kind != KindInvalid || !strings.Contains(err.Error(), "grew past the 63-byte import bound while it was read") {
		t.Errorf("a growing file: %v", err)
	}
}

// TestLongFieldsAreCutInMessages: a 10 MB field in any place an error
// quotes (a value, a time, the header) makes a message of a few hundred
// bytes that says how long the field was.
func TestLongFieldsAreCutInMessages(t *testing.T) {
	huge := strings.Repeat("9x", 5<<20) // 10 MiB
	for name, file := range map[string]string{
		"value":  "time,open,high,low,close,volume\n2024-01-01T00:00:00Z," + huge + ",1,1,1,1\n",
		"time":   "time,open,high,low,close,volume\n" + huge[:1<<20] + ",1,1,1,1,1\n",
		"header": "time,open," + huge[:1<<20] + ",low,close,volume\n",
		"wide":   strings.Repeat("abc,", 1000) + "\n",
	} {
		_, _, err := Import(strings.NewReader(file), ImportOptions{Format: FormatAuto})
		if err == nil {
			t.Fatalf("%s: imported", name)
		}
		msg := err.Error()
		if len(msg) > 2000 {
			t.Errorf("%s: a %d-byte message: %.300s", name, len(msg), msg)
		}
		if n := map[string]string{"value": "…(10485760 bytes)", "time": "…(1048576 bytes)", "header": "…(1048576 bytes)"}[name]; n != "" && !strings.Contains(msg, n) {
			t.Errorf("%s: the message does not give the field's length: %.400s", name, msg)
		}
		if name == "wide" && !strings.Contains(msg, "more fields)") {
			t.Errorf("wide: %.400s", msg)
		}
	}
	_, _, err := Import(strings.NewReader("time,open,high,low,close,volume\n"+huge[:40]+",1,1,1,1,1\n"), ImportOptions{})
	if err == nil || !strings.Contains(err.Error(), `time "`+huge[:40]+`" is neither`) {
		t.Errorf("a short field is quoted whole: %v", err)
	}
	if got := quoteField(strings.Repeat("é", 60)); got != `"`+strings.Repeat("é", 40)+`"…(120 bytes)` {
		t.Errorf("cut on a rune boundary: %s", got)
	}
}

// TestLongLinesAreRefused: a line past 16 MiB (no CSV of bars has one) is
// refused with its line number once the bound is reached, before the CSV
// reader holds more of it.
func TestLongLinesAreRefused(t *testing.T) {
	file := "time,open,high,low,close,volume\n" + strings.Repeat("1", maxLineBytes+1) + "\n2024-01-01T00:00:00Z,1,1,1,1,1\n"
	_, _, err := Import(strings.NewReader(file), ImportOptions{})
	if err == nil || !strings.Contains(err.Error(), "line 2 is longer than 16 MiB; a bar row is a few dozen bytes, so this is not a CSV file of bars") {
		t.Errorf("a 16 MiB line: %.300v", err)
	}
	// 16 MiB exactly is still read (and then refused as a row, shortly)
	file = "time,open,high,low,close,volume\n" + strings.Repeat("1", maxLineBytes) + "\n"
	if _, _, err := Import(strings.NewReader(file), ImportOptions{}); err == nil || !strings.Contains(err.Error(), "row 2: has 1 fields, want 6") {
		t.Errorf("a line of exactly the bound: %.300v", err)
	}
}
