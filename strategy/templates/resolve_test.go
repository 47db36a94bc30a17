package templates

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wicket/internal/project"
)

// TestResolve: the project's strategy wins, a template stands in when
// there is none (also without a project), and an unusable file is an error,
// never a fallback.
func TestResolve(t *testing.T) {
	p := &project.Project{Root: t.TempDir()}
	if err := os.MkdirAll(p.StrategiesDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	tmpl, _ := Source("sma_cross")
	for _, proj := range []*project.Project{p, nil} {
		r, err := Resolve(proj, "sma_cross")
		if err != nil || !r.Template || r.Source != tmpl || r.Label != "sma_cross.star" || r.Name != "sma_cross" {
			t.Fatalf("template fallback (project %v): %+v %v", proj != nil, r, err)
		}
	}
	mine := "def signals(bars):\n    return {'long': bars.close > 0}\n"
	if err := os.WriteFile(filepath.Join(p.StrategiesDir(), "sma_cross.star"), []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err := Resolve(p, "sma_cross"); err != nil || r.Template || r.Source != mine {
		t.Fatalf("the project's file: %+v %v", r, err)
	}
	_, err := Resolve(p, "nosuch")
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "strategies/nosuch.star does not exist and no template has that name") ||
		!strings.Contains(err.Error(), "wicket strategy new nosuch --from TEMPLATE") {
		t.Fatalf("missing: %v", err)
	}
	if _, err := Resolve(nil, "nosuch"); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "there is no project") {
		t.Fatalf("missing without a project: %v", err)
	}
	if _, err := Resolve(p, "../x"); err == nil || errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("bad name: %v", err)
	}
	// A file that exists but is unusable does not fall back to the template.
	if err := os.Truncate(filepath.Join(p.StrategiesDir(), "sma_cross.star"), project.MaxStrategyBytes+1); err != nil {
		t.Fatal(err)
	}
	if _, err := Resolve(p, "sma_cross"); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("oversize file: %v", err)
	}
}
