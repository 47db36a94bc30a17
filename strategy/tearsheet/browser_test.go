package tearsheet

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// browser finds Chromium on PATH, or skips the test with one line.
func browser(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("tear sheet browser test SKIPPED: no chromium or chromium-browser on PATH (make chromium installs it, as root with apt)")
	return ""
}

// chartJS measures each chart the page shows (the equity's other scale
// waits behind its toggle) as the browser laid it out: its data
// elements, the box they cover and its benchmark lines' lengths.
const chartJS = `JSON.stringify([...document.querySelectorAll('svg[data-chart]')].filter(svg => svg.checkVisibility()).map(svg => {
  const data = [...svg.querySelectorAll('.data')];
  let w = 0, h = 0, length = 0;
  for (const el of data) {
    const b = el.getBBox();
    w = Math.max(w, b.width); h = Math.max(h, b.height);
    if (el.getTotalLength) length += el.getTotalLength();
  }
  const box = svg.getBoundingClientRect();
  const bench = [...svg.querySelectorAll('[data-bench]')].map(el => el.getTotalLength());
  return {name: svg.dataset.chart, data: data.length, w, h, length, bench, shown: box.width > 0 && box.height > 0};
}))`

// probeJS asks for an image from a loopback server: the page's CSP must
// refuse it (a violation event) before any request is made.
const probeJS = `new Promise(resolve => {
  document.addEventListener('securitypolicyviolation', e => resolve('blocked by ' + e.effectiveDirective), {once: true});
  const img = new Image();
  img.onload = () => resolve('loaded');
  img.src = %q;
  document.body.appendChild(img);
})`

// A 1x1 PNG, so a request the CSP let through would load.
const pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="

// chart is one chart as the browser laid it out (chartJS).
type chart struct {
	Name         string
	Data         int
	W, H, Length float64
	Bench        []float64
	Shown        bool
}

// inBrowser opens html as a file in headless Chromium exe, measures its
// charts and fails t when the page asked for anything beyond itself. It
// returns the browser's context for further checks.
func inBrowser(t *testing.T, exe string, html []byte) ([]chart, context.Context) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sheet.html")
	if err := os.WriteFile(path, html, 0o644); err != nil {
		t.Fatal(err)
	}
	page := (&url.URL{Scheme: "file", Path: path}).String()
	// The deadline bounds a broken browser; nothing waits on time.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelA := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelA)
	bctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(cancelB)

	var mu sync.Mutex
	var requests []string
	err := chromedp.Listen(bctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requests = append(requests, e.Request.URL)
			mu.Unlock()
		}
	})
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	if err := chromedp.Do(bctx, chromedp.Navigate(page)); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	measured, err := chromedp.Run(bctx, chromedp.Evaluate[string](chartJS))
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	mu.Lock()
	asked := slices.Clone(requests)
	mu.Unlock()
	if len(asked) != 1 || asked[0] != page {
		t.Errorf("the page made requests beyond itself: %q", asked)
	}
	var got []chart
	if err := json.Unmarshal([]byte(measured), &got); err != nil {
		t.Fatalf("%v: %s", err, measured)
	}
	return got, bctx
}

// drewData fails t for a chart without data, or a curve without length,
// and returns the charts' names in page order.
func drewData(t *testing.T, got []chart, curves ...string) []string {
	t.Helper()
	var names []string
	for _, c := range got {
		names = append(names, c.Name)
		if c.Data == 0 || c.W <= 0 || c.H <= 0 || !c.Shown {
			t.Errorf("chart %s drew no data: %+v", c.Name, c)
		}
		if slices.Contains(curves, c.Name) && c.Length <= 0 {
			t.Errorf("chart %s: its curve has no length", c.Name)
		}
	}
	return names
}

func TestBrowserRendersSheet(t *testing.T) {
	exe := browser(t)
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		b, _ := base64.StdEncoding.DecodeString(pixel)
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(b)
	}))
	defer srv.Close()
	got, bctx := inBrowser(t, exe, render(t, fixture(t)))
	if names := drewData(t, got, "equity", "drawdown", "rolling-sharpe"); !slices.Equal(names, allCharts) {
		t.Errorf("charts %v, want %v", names, allCharts)
	}

	probe := strings.Replace(probeJS, "%q", `"`+srv.URL+`/probe.png"`, 1)
	verdict, err := chromedp.Run(bctx, chromedp.Evaluate[string](probe, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("csp probe: %v", err)
	}
	if !strings.HasPrefix(verdict, "blocked by img-src") || hits.Load() != 0 {
		t.Errorf("an image from %s: %s, %d requests reached it; the CSP must refuse it", srv.URL, verdict, hits.Load())
	}
}

// TestBrowserRendersRunSheets: a walk-forward's and a CPCV's tear sheets
// render in headless Chromium with every chart holding data.
func TestBrowserRendersRunSheets(t *testing.T) {
	exe := browser(t)
	wf, cv := runFixtures()
	for _, tc := range []struct {
		run  Run
		want []string
	}{{wf, []string{"equity", "drawdown", "window-scores"}}, {cv, []string{"distribution"}}} {
		html, err := RenderRun(tc.run)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := inBrowser(t, exe, html)
		if names := drewData(t, got, "equity", "drawdown"); !slices.Equal(names, tc.want) {
			t.Errorf("%s: charts %v, want %v", tc.run.Kind, names, tc.want)
		}
	}
}

// TestBrowserLogScaleToggle: the equity chart shows on a linear scale
// with its buy-and-hold line drawn; clicking "log scale" (CSS alone, the
// page runs no script) swaps in the log-scale chart, with both its
// lines drawn, and a second click swaps it back.
func TestBrowserLogScaleToggle(t *testing.T) {
	exe := browser(t)
	r, b := fixtureBars(t)
	html, err := Render(r, "trend.star", Hold("buy & hold "+b.Series, b.Time, b.Time, b.Close, r.Settings.Capital))
	if err != nil {
		t.Fatal(err)
	}
	got, bctx := inBrowser(t, exe, html)
	equity := func(got []chart, want string) {
		t.Helper()
		var names []string
		for _, c := range got {
			names = append(names, c.Name)
			if c.Name == want && (c.Data == 0 || c.Length <= 0 || len(c.Bench) != 1 || c.Bench[0] <= 0) {
				t.Errorf("%s: the curve or its buy-and-hold line is not drawn: %+v", want, c)
			}
		}
		if names[0] != want || slices.Contains(names[1:], "equity") || slices.Contains(names[1:], "equity-log") {
			t.Errorf("charts shown %v: want %s alone of the two equity charts, first", names, want)
		}
	}
	equity(drewDataShown(t, got), "equity")
	for _, want := range []string{"equity-log", "equity"} {
		if err := chromedp.Do(bctx, chromedp.Click(`label[for="log-scale"]`)); err != nil {
			t.Fatalf("click: %v", err)
		}
		measured, err := chromedp.Run(bctx, chromedp.Evaluate[string](chartJS))
		if err != nil {
			t.Fatalf("chromium: %v", err)
		}
		var after []chart
		if err := json.Unmarshal([]byte(measured), &after); err != nil {
			t.Fatal(err)
		}
		equity(drewDataShown(t, after), want)
	}
}

// drewDataShown is drewData for its charts, returning them.
func drewDataShown(t *testing.T, got []chart) []chart {
	t.Helper()
	drewData(t, got, "equity", "equity-log", "drawdown", "rolling-sharpe")
	return got
}
