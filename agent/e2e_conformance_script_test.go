package agent_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestConformanceVerdictFirst (issue 31, item 13): testdata/conformance/
// run.sh, run against the real binary with a stand-in for the suite (the
// suite itself needs npm), says PASSED or FAILED before the suite's own
// counts, so a reader never meets "Failed: 15" before learning they are
// all expected.
func TestConformanceVerdictFirst(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("run.sh is a POSIX shell script")
	}
	script, err := filepath.Abs("../testdata/conformance/run.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		exit    string
		verdict string
	}{{"0", "conformance: PASSED"}, {"1", "conformance: FAILED"}} {
		dir := t.TempDir()
		suite := filepath.Join(dir, "node_modules", ".bin", "conformance")
		if err := os.MkdirAll(filepath.Dir(suite), 0o755); err != nil {
			t.Fatal(err)
		}
		fake := "#!/bin/sh\necho 'scenario output'\necho '=== SUMMARY ==='\necho 'Passed: 20'\necho 'Failed: 15'\nexit " + tc.exit + "\n"
		if err := os.WriteFile(suite, []byte(fake), 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("sh", script, wicketBin, dir, "60")
		cmd.Env = append(os.Environ(), cleanEnv...)
		out, _ := cmd.CombinedOutput()
		verdict := strings.Index(string(out), tc.verdict)
		count := strings.Index(string(out), "Failed: 15")
		if verdict < 0 || count < 0 || verdict > count {
			t.Errorf("suite exiting %s: the verdict %q is not before the counts:\n%s", tc.exit, tc.verdict, out)
		}
		if tc.exit == "0" && !strings.Contains(string(out), "failures below are all expected") {
			t.Errorf("a passing run does not say its failures are expected:\n%s", out)
		}
	}
}
