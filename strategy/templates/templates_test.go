package templates

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"wicket/strategy/script"
)

var update = flag.Bool("update", false, "rewrite index.json and the knob golden files from the templates")

// discover loads every embedded template and describes it from what the
// runtime reports.
func discover(t *testing.T) []Template {
	t.Helper()
	entries, err := fs.ReadDir(files, "star")
	if err != nil {
		t.Fatal(err)
	}
	var ts []Template
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".star")
		text, _ := files.ReadFile("star/" + e.Name())
		s, err := script.Load(context.Background(), script.Source{Name: e.Name(), Text: string(text)}, script.Options{})
		if err != nil {
			t.Fatalf("template %s does not load: %v", name, err)
		}
		tm := Template{Name: name, Summary: s.Summary(), Style: s.Style(), Params: s.Knobs()}
		if s.IsPortfolio() {
			tm.Style, tm.Universe, tm.Rebalance = StylePortfolio, s.Universe(), s.Rebalance()
		}
		ts = append(ts, tm)
	}
	return ts
}

// TestIndex keeps index.json equal to what loading the templates reports
// (go test -update rewrites it), and checks each knob is documented.
func TestIndex(t *testing.T) {
	got := discover(t)
	if *update {
		b, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("index.json", append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(got, List()); diff != "" {
		t.Fatalf("index.json is stale (run go test ./strategy/templates -update):\n%s", diff)
	}
	if len(got) < 8 {
		t.Fatalf("%d templates, want at least 8", len(got))
	}
	styles := map[script.Style]int{}
	for _, tm := range got {
		styles[tm.Style]++
		if tm.Summary == "" {
			t.Errorf("%s: no docstring summary", tm.Name)
		}
		if len(tm.Params) == 0 {
			t.Errorf("%s: no knobs", tm.Name)
		}
		for _, k := range tm.Params {
			if k.Doc == "" {
				t.Errorf("%s: knob %s has no doc", tm.Name, k.Name)
			}
		}
	}
	if styles[script.StyleOnBar] == 0 || styles[script.StyleSignals] == 0 {
		t.Errorf("styles %v: want both signals and on_bar templates", styles)
	}
}

// TestPortfolioTemplates: the portfolio templates are listed with style
// portfolio, their universe and their rebalance schedule; the others
// name neither.
func TestPortfolioTemplates(t *testing.T) {
	want := map[string]bool{"equal_weight": true, "momentum_rotation": true, "pairs_zscore": true}
	for _, tm := range List() {
		switch {
		case want[tm.Name] && (tm.Style != StylePortfolio || len(tm.Universe) == 0 || tm.Rebalance == ""):
			t.Errorf("%s: style %q, universe %v, rebalance %q", tm.Name, tm.Style, tm.Universe, tm.Rebalance)
		case !want[tm.Name] && (tm.Style == StylePortfolio || tm.Universe != nil || tm.Rebalance != ""):
			t.Errorf("%s is listed as a portfolio: %+v", tm.Name, tm)
		}
	}
	if tm, err := Get("equal_weight"); err != nil || !slices.Equal(tm.Universe, []string{"*-USD@1d"}) || tm.Rebalance != "weekly" {
		t.Errorf("equal_weight: %+v %v", tm, err)
	}
}

// TestTemplatesValidate runs every template through validation, smoke run
// included: no problems, a warm-up, the lookahead proof passed, and no
// warning but the start-point check's. That one is expected of a
// recursive indicator (an EMA, RSI or ATR needs several times its period
// before its seed stops mattering) and must agree with the reported check.
func TestTemplatesValidate(t *testing.T) {
	for _, tm := range List() {
		src, err := Source(tm.Name)
		if err != nil {
			t.Fatal(err)
		}
		rep := script.Validate(context.Background(), script.Source{Name: tm.Name + ".star", Text: src}, script.Options{})
		if !rep.Valid || len(rep.Problems) > 0 {
			t.Errorf("%s: %+v", tm.Name, rep)
		}
		for _, w := range rep.Warnings {
			if !strings.HasPrefix(w, "start-point check ") || rep.StartPoint == nil || rep.StartPoint.Needed <= rep.Warmup {
				t.Errorf("%s: warning %q (start point %+v, warm-up %d)", tm.Name, w, rep.StartPoint, rep.Warmup)
			}
		}
		if rep.Warmup == 0 && tm.Name != "equal_weight" { // equal weight holds every asset from the first bar
			t.Errorf("%s: warm-up 0; every template but equal_weight uses indicators", tm.Name)
		}
		if !script.Passed(rep.LookaheadCheck) {
			t.Errorf("%s: lookahead_check %q", tm.Name, rep.LookaheadCheck)
		}
	}
}

// TestKnobsGolden pins each template's knob discovery output
// (testdata/knobs/<name>.json; -update rewrites).
func TestKnobsGolden(t *testing.T) {
	for _, tm := range discover(t) {
		got, err := json.MarshalIndent(tm.Params, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		path := "testdata/knobs/" + tm.Name + ".json"
		if *update {
			os.MkdirAll("testdata/knobs", 0o755)
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./strategy/templates -update)", err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%s knobs differ from %s:\n%s", tm.Name, path, diff)
		}
	}
}

func TestSourceNames(t *testing.T) {
	for _, bad := range []string{"../templates", "sma_cross/../x", "", "star/sma_cross", "nope"} {
		if _, err := Source(bad); err == nil {
			t.Errorf("Source(%q) succeeded", bad)
		}
	}
	if _, err := Source("nope"); err == nil || !strings.Contains(err.Error(), "templates: atr_trailing_stop,") {
		t.Errorf("unknown template error does not list the templates: %v", err)
	}
	src, err := Source("sma_cross")
	if err != nil || !strings.Contains(src, "def signals(bars)") {
		t.Fatalf("sma_cross: %v", err)
	}
}

func ExampleSource() {
	src, _ := Source("sma_cross")
	first, _, _ := strings.Cut(src, "\n")
	fmt.Println(first)
	// Output: """SMA crossover: long when the fast SMA crosses above the slow SMA, flat when it crosses below.
}

func ExampleGet() {
	tm, _ := Get("sma_cross_bar")
	fmt.Println(tm.Style)
	for _, k := range tm.Params {
		fmt.Printf("%s %s default %v in [%v, %v]\n", k.Name, k.Type, k.Default, *k.Min, *k.Max)
	}
	// Output:
	// on_bar
	// fast int default 10 in [2, 200]
	// slow int default 30 in [3, 400]
	// size float default 1 in [0, 1]
}
