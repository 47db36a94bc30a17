package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// TestDataDeleteAtATerminal runs the wicket binary on a pseudo-terminal:
// data delete asks "delete N bars of S? [y/N]", deletes nothing on n and
// the series on y.
func TestDataDeleteAtATerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the wicket binary on a pseudo-terminal")
	}
	bin, err := exec.LookPath("wicket")
	if err != nil {
		t.Fatalf("the wicket binary is not on PATH (script_test.go's TestMain puts it there): %v", err)
	}
	t.Setenv("WICKET_PROJECT", "")
	proj := filepath.Join(t.TempDir(), "proj")
	if code, _, stderr := wicket(t, "init", proj); code != 0 {
		t.Fatalf("init: %s", stderr)
	}
	csv := filepath.Join(t.TempDir(), "acme.csv")
	if err := os.WriteFile(csv, []byte("time,open,high,low,close,volume\n2024-01-02,1,2,0.5,1.5,10\n2024-01-03,1.5,2,1,1.8,12\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := wicket(t, "--project", proj, "data", "import", csv, "--series", "ACME@1d"); code != 0 {
		t.Fatalf("import: %s", stderr)
	}

	// answer runs data delete at a terminal, types answer at the question
	// and returns what the terminal showed.
	answer := func(answer string) string {
		t.Helper()
		cmd := exec.Command(bin, "--project", proj, "data", "delete", "ACME@1d")
		tty, err := pty.Start(cmd)
		if err != nil {
			t.Fatal(err)
		}
		defer tty.Close()
		timer := time.AfterFunc(15*time.Second, func() { _ = cmd.Process.Kill() })
		defer timer.Stop()
		var seen strings.Builder
		buf := make([]byte, 256)
		for !strings.Contains(seen.String(), "delete 2 bars of ACME@1d? [y/N] ") {
			n, err := tty.Read(buf)
			seen.Write(buf[:n])
			if err != nil {
				t.Fatalf("no question on the terminal (%v):\n%s", err, seen.String())
			}
		}
		if _, err := tty.Write([]byte(answer + "\r")); err != nil {
			t.Fatal(err)
		}
		for {
			n, err := tty.Read(buf) // until the process exits and the terminal closes
			seen.Write(buf[:n])
			if err != nil {
				break
			}
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("data delete answered %q: %v\n%s", answer, err, seen.String())
		}
		return seen.String()
	}

	if out := answer("n"); !strings.Contains(out, "nothing was deleted") {
		t.Fatalf("n deleted something:\n%s", out)
	}
	if _, stdout, _ := wicket(t, "--project", proj, "data", "list"); !strings.Contains(stdout, "ACME@1d") {
		t.Fatalf("the series is gone after n:\n%s", stdout)
	}
	if out := answer("y"); !strings.Contains(out, "deleted ACME@1d (2 bars)") {
		t.Fatalf("y:\n%s", out)
	}
	if _, stdout, _ := wicket(t, "--project", proj, "data", "list"); strings.Contains(stdout, "ACME@1d") {
		t.Fatalf("the series is still there after y:\n%s", stdout)
	}
}
