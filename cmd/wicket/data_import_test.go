package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// importProject is a new project for data import tests and a directory for
// its files.
func importProject(t *testing.T) (proj, dir string) {
	t.Helper()
	t.Setenv("WICKET_PROJECT", "")
	dir = t.TempDir()
	proj = filepath.Join(dir, "proj")
	if code, _, stderr := wicket(t, "init", proj); code != 0 {
		t.Fatalf("init: %s", stderr)
	}
	return proj, dir
}

// TestDataImportBounds: a file over --max-size is refused before it is
// read, a 10 MB field makes a one-line error of a few hundred bytes, and a
// bad --max-size says what to give.
func TestDataImportBounds(t *testing.T) {
	proj, dir := importProject(t)
	good := filepath.Join(dir, "good.csv")
	body := "time,open,high,low,close,volume\n2024-01-01T00:00:00Z,1,2,0.5,1.5,10\n2024-01-01T01:00:00Z,1.5,2,1,1.2,11\n"
	if err := os.WriteFile(good, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := wicket(t, "--project", proj, "data", "import", good, "--series", "ACME@1h", "--max-size", "64B")
	if code != exitFailure || !strings.Contains(stderr, "is 104 bytes, over the 64-byte import bound; split it, or raise the bound with --max-size") {
		t.Errorf("over --max-size: %d %s", code, stderr)
	}
	if code, stdout, stderr := wicket(t, "--project", proj, "data", "import", good, "--series", "ACME@1h", "--max-size", "1KiB"); code != 0 || !strings.Contains(stdout, "imported 2 bars into ACME@1h") {
		t.Errorf("within --max-size: %d %s %s", code, stdout, stderr)
	}
	for _, bad := range []string{"lots", "0", "65GiB"} {
		code, _, stderr := wicket(t, "--project", proj, "data", "import", good, "--series", "ACME@1h", "--max-size", bad)
		if code != exitUsage || !strings.Contains(stderr, "--max-size: ") {
			t.Errorf("--max-size %s: %d %s", bad, code, stderr)
		}
	}

	wide := filepath.Join(dir, "wide.csv")
	field := strings.Repeat("7", 10<<20)
	if err := os.WriteFile(wide, []byte("time,open,high,low,close,volume\n2024-01-01T00:00:00Z,1,"+field+"x,1,1,1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = wicket(t, "--project", proj, "data", "import", wide, "--series", "WIDE@1h")
	if code != exitFailure || len(stderr) > 1000 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 ||
		!strings.Contains(stderr, `row 2: high "`+field[:80]+`"…(10485761 bytes) is not a number`) {
		t.Errorf("a 10 MB field: exit %d, %d bytes of stderr: %.400s", code, len(stderr), stderr)
	}
}
