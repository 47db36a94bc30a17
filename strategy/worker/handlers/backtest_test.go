package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"wicket/strategy/history/historytest"

	"wicket/internal/golden"
	"wicket/strategy/backtest"
	"wicket/strategy/history"
	"wicket/strategy/script"
	"wicket/strategy/ta"
	"wicket/strategy/templates"
	"wicket/strategy/worker"
)

var update = flag.Bool("update", false, "rewrite the backtest golden files under testdata/backtest")

var (
	demoOnce sync.Once
	demoPath string
	demoErr  error
)

// demoStore seeds the demo history once per test binary into a temporary
// file and returns its path.
func demoStore(t testing.TB) string {
	t.Helper()
	demoOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wicket-backtest-")
		if err != nil {
			demoErr = err
			return
		}
		demoPath = filepath.Join(dir, "history.db")
		s, err := history.Open(demoPath)
		if err != nil {
			demoErr = err
			return
		}
		defer s.Close()
		_, demoErr = history.SeedDemo(context.Background(), s)
	})
	if demoErr != nil {
		t.Fatal(demoErr)
	}
	return demoPath
}

func templateRequest(t testing.TB, name, series string) backtest.Request {
	t.Helper()
	src, err := templates.Source(name)
	if err != nil {
		t.Fatal(err)
	}
	// A fixed proof seed: identical requests give identical reports.
	return backtest.Request{Name: name + ".star", Source: src, Series: series, HistoryPath: demoStore(t), ProofSeed: 1}
}

func goldenFile(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("..", "..", "..", "testdata", "backtest", name), got, *update, "go test ./strategy/worker/handlers -run Golden -update")
}

// TestBacktestTemplatesGolden backtests every template on the demo
// BTC-USD@1d series and pins the whole report.
func TestBacktestTemplatesGolden(t *testing.T) {
	for _, name := range templates.Names() {
		t.Run(name, func(t *testing.T) {
			req, run := templateRequest(t, name, "BTC-USD@1d"), Backtest
			if s, err := script.Load(context.Background(), script.Source{Name: req.Name, Text: req.Source}, script.Options{}); err == nil && s.IsPortfolio() {
				req.Series, run = "", Portfolio // over the universe the template declares (portfolio.go)
			}
			resp, err := run(context.Background(), req, ta.NewMemo(0))
			if err != nil {
				t.Fatal(err)
			}
			var r struct {
				Metrics  struct{ Trades int }
				Warnings []string
			}
			if err := json.Unmarshal(resp.Result, &r); err != nil {
				t.Fatal(err)
			}
			if held := req.Series == "" && !strings.Contains(strings.Join(r.Warnings, "\n"), "never held"); r.Metrics.Trades == 0 && !held {
				t.Errorf("template %s made no trades in ten years of demo data: %q", name, r.Warnings)
			}
			var indented bytes.Buffer
			if err := json.Indent(&indented, resp.Result, "", "  "); err != nil {
				t.Fatal(err)
			}
			indented.WriteByte('\n')
			goldenFile(t, filepath.Join("templates", name+".json"), indented.Bytes())
			goldenFile(t, filepath.Join("templates", name+".txt"), []byte(resp.Text))
		})
	}
}

// TestBacktestStylesAgree: the vectorised sma_cross template and its
// event-driven twin sma_cross_bar give identical trades and figures.
func TestBacktestStylesAgree(t *testing.T) {
	for _, tc := range []struct {
		series string
		params map[string]any
	}{
		{"BTC-USD@1h", nil},
		{"ETH-USD@1d", map[string]any{"fast": 5, "slow": 20, "size": 0.5}},
		{"SPY@1h", map[string]any{"fast": "3", "slow": "50"}},
	} {
		vec := templateRequest(t, "sma_cross", tc.series)
		ev := templateRequest(t, "sma_cross_bar", tc.series)
		vec.Params, ev.Params = tc.params, tc.params
		a, err := Backtest(context.Background(), vec, ta.NewMemo(0))
		if err != nil {
			t.Fatal(err)
		}
		b, err := Backtest(context.Background(), ev, ta.NewMemo(0))
		if err != nil {
			t.Fatal(err)
		}
		var ra, rb map[string]json.RawMessage
		if err := json.Unmarshal(a.Result, &ra); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b.Result, &rb); err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(ra["metrics"], []byte(`"trades":`)) || bytes.Contains(ra["metrics"], []byte(`"trades":0,`)) {
			t.Fatalf("%s: no trades to compare: %s", tc.series, ra["metrics"])
		}
		for _, k := range []string{"metrics", "trades", "open_position", "equity", "trades_clamped"} {
			if !bytes.Equal(ra[k], rb[k]) {
				t.Errorf("%s: %s differ between sma_cross and sma_cross_bar:\n%s\n%s", tc.series, k, ra[k], rb[k])
			}
		}
	}
}

// TestBacktestThroughPool runs a backtest across the worker pipe: the
// report, the chart and the printed output arrive, and identical requests
// give identical bytes.
func TestBacktestThroughPool(t *testing.T) {
	p := newPool(t, worker.Config{Size: 1})
	req := templateRequest(t, "rsi_reversion", "ETH-USD@1h")
	req.Source += "\nprint(\"loaded\")\n"
	req.From, req.To = "2024-01-01", "2024-06-30"
	req.Plot = true
	req.TradesLimit = 3
	fee, slip := 20.0, 0.0
	req.FeeBps, req.SlippageBps = &fee, &slip
	req.Capital = "2500"
	a, err := p.Backtest(ctxT(t), req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Backtest(ctxT(t), req)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Result, b.Result) || a.Text != b.Text || !bytes.Equal(a.PNG, b.PNG) {
		t.Error("identical requests gave different responses")
	}
	if _, err := png.Decode(bytes.NewReader(a.PNG)); err != nil {
		t.Errorf("chart: %v", err)
	}
	if a.Output != "loaded\n" {
		t.Errorf("output %q", a.Output)
	}
	var r struct {
		Settings struct {
			Capital  string
			FeeBps   float64 `json:"fee_bps"`
			From, To string
			Params   map[string]any
		}
		Metrics struct {
			Start, End string
			Trades     int
		}
		Trades        []json.RawMessage
		TradesClamped string `json:"trades_clamped"`
	}
	if err := json.Unmarshal(a.Result, &r); err != nil {
		t.Fatal(err)
	}
	if r.Settings.Capital != "2500.00" || r.Settings.FeeBps != 20 || r.Settings.From != "2024-01-01T00:00:00Z" || r.Settings.To != "2024-06-30T23:59:59Z" {
		t.Errorf("settings %+v", r.Settings)
	}
	if r.Metrics.Start != "2024-01-01T00:00:00Z" || r.Metrics.End != "2024-06-30T23:00:00Z" {
		t.Errorf("range %s to %s", r.Metrics.Start, r.Metrics.End)
	}
	if len(r.Settings.Params) == 0 {
		t.Error("the knob values are not echoed")
	}
	if r.Metrics.Trades > 3 && (len(r.Trades) != 3 || !strings.Contains(r.TradesClamped, "showing the first 3")) {
		t.Errorf("%d trades listed of %d, note %q", len(r.Trades), r.Metrics.Trades, r.TradesClamped)
	}
	if !strings.Contains(a.Text, "ETH-USD@1h") || !strings.Contains(a.Text, "total return") {
		t.Errorf("text:\n%s", a.Text)
	}
}

// TestBacktestErrors: each bad request fails across the pipe with its
// text and the error type and kind it has in process.
func TestBacktestErrors(t *testing.T) {
	p := newPool(t, worker.Config{Size: 1})
	base := templateRequest(t, "sma_cross", "BTC-USD@1d")
	for _, tc := range []struct {
		name   string
		mutate func(*backtest.Request)
		want   string
		kind   string
	}{
		{"unknown series", func(r *backtest.Request) { r.Series = "DOGE-USD@1d" }, "series DOGE-USD@1d: no such series", "history not found"},
		{"bad series", func(r *backtest.Request) { r.Series = "../x@1d" }, "invalid series name", "history invalid"},
		{"empty range", func(r *backtest.Request) { r.From, r.To = "2030-01-01", "2030-02-01" }, "no bars between", "history invalid"},
		{"bad date", func(r *backtest.Request) { r.From = "last week" }, `from "last week" is neither a date`, "backtest invalid"},
		{"reversed", func(r *backtest.Request) { r.From, r.To = "2024-02-01", "2024-01-01" }, "is before from", "backtest invalid"},
		{"capital", func(r *backtest.Request) { r.Capital = "-5" }, "capital", "backtest invalid"},
		{"fill", func(r *backtest.Request) { r.Fill = "vwap" }, `fill "vwap" is not one of next_open, close`, "backtest invalid"},
		{"knob", func(r *backtest.Request) { r.Params = map[string]any{"fast": 1000} }, "knob fast", "script knob"},
		{"unknown knob", func(r *backtest.Request) { r.Params = map[string]any{"speed": 3} }, "speed", "script knob"},
		{"no store", func(r *backtest.Request) { r.HistoryPath = filepath.Join(t.TempDir(), "none.db") }, "wicket data seed-demo", "history not found"},
	} {
		req := base
		tc.mutate(&req)
		_, err := p.Backtest(ctxT(t), req)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
		if got := errorKind(err); got != tc.kind {
			t.Errorf("%s: %s (%#v), want %s", tc.name, got, err, tc.kind)
		}
	}
	// A runtime error in on_bar arrives as a strategy error with its bar.
	bad := templateRequest(t, "sma_cross_bar", "BTC-USD@1d")
	bad.Source = strings.Replace(bad.Source, "ctx.flat()", "ctx.flat(); x = ctx.f[-1]", 1)
	_, err := p.Backtest(ctxT(t), bad)
	var se *script.Error
	if !errors.As(err, &se) || se.Phase != "on_bar" || se.Bar < 30 {
		t.Errorf("on_bar error: %#v", err)
	}
}

// writeBench stores n synthetic hourly bars (a noisy sine) and returns the
// store's path.
func writeBench(b testing.TB, n int) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "history.db")
	s, err := history.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	bars := historytest.Sine("BENCH@1h", n)
	if err := s.Write(context.Background(), "BENCH@1h", bars, history.WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkOnBarSMACross1M runs the sma_cross_bar template (Starlark
// on_bar, once per bar) over a million bars: store load, setup, a million
// on_bar calls and the engine. The spec asks for at least 1,000,000 bars/s.
func BenchmarkOnBarSMACross1M(b *testing.B) {
	benchTemplate(b, "sma_cross_bar", "on_bar bars/s / 1,000,000 (target >= 1)", 1_000_000)
}

// BenchmarkOnBarEngine1M is the on_bar run alone over the same million
// bars, without the store load and the lookahead proof a backtest adds
// (the proof runs on_bar again over four prefixes): Starlark's on_bar
// once per bar and the engine, on one core. quality.md's on_bar figure
// was measured for this before the proof existed.
func BenchmarkOnBarEngine1M(b *testing.B) {
	const n = 1_000_000
	path := writeBench(b, n)
	src, err := templates.Source("sma_cross_bar")
	if err != nil {
		b.Fatal(err)
	}
	bars, err := loadBars(path, "BENCH@1h", time.Time{}, time.Time{})
	if err != nil {
		b.Fatal(err)
	}
	cfg := backtest.DefaultConfig()
	for b.Loop() {
		s, err := script.Load(context.Background(), script.Source{Name: "sma_cross_bar.star", Text: src}, script.Options{Memo: ta.NewMemo(0)})
		if err != nil {
			b.Fatal(err)
		}
		d, warmup, done, err := decide(context.Background(), s, bars, 0)
		if err != nil {
			b.Fatal(err)
		}
		cfg.Warmup = warmup
		if _, err := backtest.Run(context.Background(), bars, cfg, d); err != nil {
			b.Fatal(err)
		}
		done()
	}
	rate := n * float64(b.N) / b.Elapsed().Seconds()
	b.ReportMetric(rate, "bars/s")
	fmt.Printf("ratio on_bar bars/s without the backtest's store load and lookahead proof / 1,000,000: %.2fx\n", rate/1e6) // collected by make bench
}

// BenchmarkSignalsSMACross1M is the same with the vectorised sma_cross.
func BenchmarkSignalsSMACross1M(b *testing.B) {
	benchTemplate(b, "sma_cross", "", 0)
}

func benchTemplate(b *testing.B, name, ratio string, per float64) {
	const n = 1_000_000
	path := writeBench(b, n)
	src, err := templates.Source(name)
	if err != nil {
		b.Fatal(err)
	}
	req := backtest.Request{Name: name + ".star", Source: src, Series: "BENCH@1h", HistoryPath: path}
	var trades int
	for b.Loop() {
		resp, err := Backtest(context.Background(), req, ta.NewMemo(0))
		if err != nil {
			b.Fatal(err)
		}
		var r struct{ Metrics struct{ Trades int } }
		if err := json.Unmarshal(resp.Result, &r); err != nil {
			b.Fatal(err)
		}
		trades = r.Metrics.Trades
	}
	if trades == 0 {
		b.Fatal("no trades: the benchmark series does not cross")
	}
	rate := n * float64(b.N) / b.Elapsed().Seconds()
	b.ReportMetric(rate, "bars/s")
	if ratio != "" {
		b.ReportMetric(rate/per, "ratio")
		fmt.Printf("ratio %s: %.2fx\n", ratio, rate/per) // collected by make bench
	}
}

// errorKind names err's domain and kind, e.g. "history not found".
func errorKind(err error) string {
	var se *script.Error
	var he *history.Error
	var be *backtest.Error
	switch {
	case errors.As(err, &se):
		return "script " + string(se.Kind)
	case errors.As(err, &he):
		return "history " + he.Kind.String()
	case errors.As(err, &be):
		return "backtest " + be.Kind.String()
	}
	return fmt.Sprintf("%T", err)
}

// TestLookaheadOnly: a backtest asked for the lookahead verdict alone (a
// sweep's check of its winner) answers that verdict, the full report's,
// and nothing else; for both styles.
func TestLookaheadOnly(t *testing.T) {
	for _, name := range []string{"sma_cross", "sma_cross_bar"} {
		req := templateRequest(t, name, "BTC-USD@1d")
		full, err := Backtest(t.Context(), req, ta.NewMemo(0))
		if err != nil {
			t.Fatal(err)
		}
		req.LookaheadOnly = true
		only, err := Backtest(t.Context(), req, ta.NewMemo(0))
		if err != nil {
			t.Fatal(err)
		}
		var f, o map[string]any
		if err := json.Unmarshal(full.Result, &f); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(only.Result, &o); err != nil {
			t.Fatal(err)
		}
		// Each run draws its own proof seed: the verdicts agree but in it.
		seed := regexp.MustCompile(`seed [0-9a-f]{16}`)
		oc, fc := seed.ReplaceAllString(fmt.Sprint(o["lookahead_check"]), "seed S"), seed.ReplaceAllString(fmt.Sprint(f["lookahead_check"]), "seed S")
		if len(o) != 1 || oc != fc || !strings.HasPrefix(oc, "passed") {
			t.Errorf("%s: verdict alone %v, full report's %q", name, o, f["lookahead_check"])
		}
		if only.Text != "" || only.PNG != nil {
			t.Errorf("%s: the verdict came with a report", name)
		}
	}
}
