package main

import (
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"wicket/internal/project"
)

// TestWalkForwardPurgeEmbargo: --purge and --embargo reach a portfolio
// walk-forward (bars and a duration), the result names them in its
// settings and each window's purged and embargoed spans, the text header
// states them, --report writes the run's tear sheet (a CPCV's too), and
// a purge as long as the in-sample window is refused with the fix.
func TestWalkForwardPurgeEmbargo(t *testing.T) {
	dir := t.TempDir()
	if _, err := project.Init(dir, rand.Reader); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := wicketIn(t, dir, "data", "seed-demo"); code != 0 {
		t.Fatalf("seed-demo: exit %d: %s", code, stderr)
	}
	args := []string{"walk-forward", "momentum_rotation", "--grid", "lookback=10,20", "--from", "2022-01-01", "--windows", "3", "--purge", "5", "--embargo", "3d"}
	code, stdout, stderr := wicketIn(t, dir, append(args, "--json")...)
	if code != 0 {
		t.Fatalf("walk-forward: exit %d: %s", code, stderr)
	}
	type span struct {
		From string `json:"from"`
		Bars int    `json:"bars"`
	}
	var res struct {
		Settings struct {
			Purge   *int `json:"purge_bars"`
			Embargo *int `json:"embargo_bars"`
		} `json:"settings"`
		Windows []struct {
			Purged      *span  `json:"purged"`
			Embargoed   []span `json:"embargoed"`
			OutOfSample span   `json:"out_of_sample"`
		} `json:"windows"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("%v: %.500s", err, stdout)
	}
	if res.Settings.Purge == nil || *res.Settings.Purge != 5 || res.Settings.Embargo == nil || *res.Settings.Embargo != 3 || len(res.Windows) != 3 {
		t.Fatalf("settings %+v, %d windows: %.800s", res.Settings, len(res.Windows), stdout)
	}
	for k, w := range res.Windows {
		if w.Purged == nil || w.Purged.Bars != 5 {
			t.Errorf("window %d: purged %+v", k+1, w.Purged)
		}
	}
	// Rolling windows four folds long: the third holds the first fold's end.
	if e := res.Windows[2].Embargoed; len(e) != 1 || e[0].Bars != 3 || e[0].From != res.Windows[1].OutOfSample.From {
		t.Errorf("window 3: embargoed %+v, want 3 bars from %s", e, res.Windows[1].OutOfSample.From)
	}
	sheet := filepath.Join(dir, "wf.html")
	code, stdout, stderr = wicketIn(t, dir, append(args, "--report", sheet)...)
	if code != 0 || !strings.Contains(stdout, "purge 5 bars before each out-of-sample window, embargo 3 bars after each") {
		t.Errorf("text: exit %d: %s %s", code, stdout, stderr)
	}
	// The tear sheet draws the stitched curve, its drawdown and both
	// scores of every window, and lists the windows.
	html, err := os.ReadFile(sheet)
	if err != nil {
		t.Fatal(err)
	}
	page := string(html)
	for _, want := range []string{`data-chart="equity"`, `data-chart="drawdown"`, `data-chart="window-scores"`, "wicket walk-forward tear sheet", "<td>embargo</td><td class=\"v\">3 bars</td>",
		"<h2>Drawdown periods</h2>", "-point curve, not every bar"} {
		if !strings.Contains(page, want) {
			t.Errorf("tear sheet lacks %s", want)
		}
	}
	for _, m := range regexp.MustCompile(`data-points="(\d+)"`).FindAllStringSubmatch(page, -1) {
		if m[1] == "0" {
			t.Error("an empty curve in the tear sheet")
		}
	}
	if n := strings.Count(page, `<rect class="data"`); n < 4 {
		t.Errorf("%d window score bars for 3 windows", n)
	}
	if code, _, stderr := wicketIn(t, dir, append(args, "--report", sheet)...); code == 0 || !strings.Contains(stderr, "already exists") {
		t.Errorf("--report over an existing file: exit %d: %s", code, stderr)
	}
	cv := filepath.Join(dir, "cpcv.html")
	if code, _, stderr := wicketIn(t, dir, "cpcv", "sma_cross", "--series", "BTC-USD@1d", "--grid", "fast=5,10,20", "--groups", "4", "--report", cv); code != 0 {
		t.Fatalf("cpcv --report: exit %d: %s", code, stderr)
	}
	if html, err := os.ReadFile(cv); err != nil || !strings.Contains(string(html), `data-chart="distribution"`) || strings.Count(string(html), `<rect class="data"`) < 1 ||
		!strings.Contains(string(html), "wicket cpcv tear sheet") {
		t.Errorf("cpcv tear sheet: %v %.300s", err, html)
	}
	code, _, stderr = wicketIn(t, dir, "walk-forward", "sma_cross", "--series", "BTC-USD@1d", "--grid", "fast=5,10", "--in-sample", "200", "--out-of-sample", "50", "--purge", "200")
	if code == 0 || !strings.Contains(stderr, "purge of 200 bars is not shorter than window 1's in-sample window of 200 bars") {
		t.Errorf("purge as long as the in-sample window: exit %d: %s", code, stderr)
	}
}
