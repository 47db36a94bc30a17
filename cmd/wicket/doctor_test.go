package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wicket/node/nodetest"
)

// doctorRun runs wicket with args and --json, and decodes the report.
func doctorRun(t *testing.T, args ...string) (int, doctorReport, string) {
	t.Helper()
	code, stdout, stderr := wicket(t, append(args, "--json")...)
	var rep doctorReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("doctor --json printed no JSON (%v): code %d\n%s\n%s", err, code, stdout, stderr)
	}
	return code, rep, stdout + stderr
}

// checkOf finds the check named name, failing the test when there is none.
func checkOf(t *testing.T, rep doctorReport, name string) doctorCheck {
	t.Helper()
	for _, c := range rep.Checks {
		if c.Check == name {
			return c
		}
	}
	t.Fatalf("no check %q in %+v", name, rep.Checks)
	return doctorCheck{}
}

// TestDoctor runs wicket doctor against a real node on an ephemeral
// loopback port with a running deployment: each problem is found and its
// fix named, the exit code says whether something must be fixed, and no
// key is ever printed.
func TestDoctor(t *testing.T) {
	if testing.Short() {
		t.Skip("deploys a strategy on a node with a worker process")
	}
	n, proj := deployNode(t)
	base := []string{"--project", proj}
	deployArgs := append(append([]string{}, base...), "deploy", "flip", "--series", "BTC-USD@1m", "--venue", "paper",
		"--capital", "1000", "--max-orders-per-day", "10", "--warmup", "2", "--addr", n.Addr, "--yes")
	if code, stdout, stderr := wicket(t, deployArgs...); code != 0 {
		t.Fatalf("deploy: code %d\n%s\n%s", code, stdout, stderr)
	}
	doctorAt := func() (int, doctorReport, string) {
		t.Helper()
		return doctorRun(t, "--project", proj, "doctor", "--addr", n.Addr)
	}
	secrets, err := os.ReadFile(filepath.Join(proj, "settings", "secrets.env"))
	if err != nil {
		t.Fatal(err)
	}
	operatorFile, err := os.ReadFile(filepath.Join(proj, "settings", "operator.key"))
	if err != nil {
		t.Fatal(err)
	}
	noKeys := func(out string) {
		t.Helper()
		for _, line := range strings.Split(string(secrets)+string(operatorFile), "\n") {
			if _, v, ok := strings.Cut(line, "="); ok && len(v) > 8 && strings.Contains(out, v) {
				t.Fatalf("doctor printed a key from secrets.env:\n%s", out)
			}
			if line != "" && !strings.HasPrefix(line, "#") && !strings.Contains(line, "=") && strings.Contains(out, line) {
				t.Fatalf("doctor printed the operator key:\n%s", out)
			}
		}
		for _, k := range []string{n.ObserveKey, n.ControlKey} {
			if strings.Contains(out, k) {
				t.Fatalf("doctor printed a node key:\n%s", out)
			}
		}
	}

	// The deployed series has no bars: a failure naming the fix, exit 1.
	code, rep, out := doctorAt()
	noKeys(out)
	if code != 1 || rep.Fails != 1 {
		t.Fatalf("no data for a deployed series: code %d, %d fails\n%s", code, rep.Fails, out)
	}
	for name, status := range map[string]string{"secrets.env": checkOK, "node keys": checkOK, "operator key": checkOK,
		"node": checkOK, "clock": checkOK, "venue paper": checkOK, "disk": checkOK} {
		if c := checkOf(t, rep, name); c.Status != status {
			t.Errorf("%s: %s, want %s: %+v", name, c.Status, status, c)
		}
	}
	if c := checkOf(t, rep, "data BTC-USD@1m"); c.Status != checkFail || !strings.Contains(c.Fix, "wicket data fetch BTC-USD@1m") {
		t.Errorf("data: %+v", c)
	}

	// Bars up to the current minute: fresh, and nothing fails (exit 0).
	now := time.Now().UTC().Truncate(time.Minute)
	csv := "time,open,high,low,close,volume\n"
	for i := 4; i >= 0; i-- {
		csv += fmt.Sprintf("%s,100,101,99,100.5,10\n", now.Add(-time.Duration(i)*time.Minute).Format(time.RFC3339))
	}
	file := filepath.Join(t.TempDir(), "bars.csv")
	if err := os.WriteFile(file, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := wicket(t, append(append([]string{}, base...), "data", "import", file, "--series", "BTC-USD@1m")...); code != 0 {
		t.Fatalf("import: %s", stderr)
	}
	code, rep, out = doctorAt()
	if code != 0 || rep.Fails != 0 || checkOf(t, rep, "data BTC-USD@1m").Status != checkOK {
		t.Fatalf("fresh data: code %d\n%s", code, out)
	}

	// The text form names the same findings.
	code, text, _ := wicket(t, append(append([]string{}, base...), "doctor", "--addr", n.Addr)...)
	if code != 0 || !strings.Contains(text, "ok      venue paper") || !strings.Contains(text, "0 failed") {
		t.Fatalf("text: code %d\n%s", code, text)
	}

	// secrets.env readable by others: a failure whose fix is chmod 600.
	path := filepath.Join(proj, "settings", "secrets.env")
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	code, rep, out = doctorAt()
	noKeys(out)
	if c := checkOf(t, rep, "secrets.env"); code != 1 || c.Status != checkFail || c.Fix != "chmod 600 "+path {
		t.Fatalf("loose secrets.env: code %d, %+v", code, c)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}

	// The operator key moved out of the project (only operator.pub left):
	// separated, which is fine.
	if err := os.Rename(filepath.Join(proj, "settings", "operator.key"), filepath.Join(t.TempDir(), "operator.key")); err != nil {
		t.Fatal(err)
	}
	code, rep, _ = doctorAt()
	if c := checkOf(t, rep, "operator key"); code != 0 || c.Status != checkOK || !strings.Contains(c.Detail, "separated") {
		t.Fatalf("separated operator key: code %d, %+v", code, c)
	}

	// No node there: a failure naming how to start one; the checks that
	// need it are not run.
	code, rep, _ = doctorRun(t, "--project", proj, "doctor", "--addr", nodetest.DeadAddr(t))
	if c := checkOf(t, rep, "node"); code != 1 || c.Status != checkFail || !strings.Contains(c.Fix, "wicket node serve") {
		t.Fatalf("dead node: code %d, %+v", code, c)
	}
	for _, c := range rep.Checks {
		if c.Check == "clock" || strings.HasPrefix(c.Check, "venue ") {
			t.Errorf("checked %s without a node: %+v", c.Check, c)
		}
	}
}

// TestDoctorRealVenues: against a node serving real venues (Binance's
// fake), doctor reports each one's arming: the armed one ok with its end,
// a disarmed one with `wicket node arm` as the fix, one that may never be
// armed with the wicket.toml edit; warnings alone exit 0.
func TestDoctorRealVenues(t *testing.T) {
	vp, _, c := startArmedVenueNode(t)
	addr := strings.TrimSuffix(strings.TrimPrefix(c.String(), "node.Client("), ")")
	out, err := vp.cli(t, addr, "doctor", "--addr", addr, "--json")
	if err != nil {
		t.Fatalf("doctor: %v\n%s", err, out)
	}
	var rep doctorReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Fails != 0 || rep.Warns < 2 {
		t.Fatalf("%d fails, %d warnings:\n%s", rep.Fails, rep.Warns, out)
	}
	if ck := checkOf(t, rep, "venue bn"); ck.Status != checkOK || !strings.Contains(ck.Detail, "armed until ") || !strings.Contains(ck.Detail, "BTCUSDT") {
		t.Errorf("armed bn: %+v", ck)
	}
	if ck := checkOf(t, rep, "venue bnnope"); ck.Status != checkWarn || !strings.Contains(ck.Fix, "may_arm = true") {
		t.Errorf("bnnope: %+v", ck)
	}
	if ck := checkOf(t, rep, "venue bnlive"); ck.Status != checkWarn || !strings.Contains(ck.Detail, "live (real money)") {
		t.Errorf("bnlive: %+v", ck)
	}
	if strings.Contains(out, vp.fake.Secret) || strings.Contains(out, vp.fake.APIKey) || strings.Contains(out, vp.control) {
		t.Fatalf("doctor printed a key:\n%s", out)
	}
}
