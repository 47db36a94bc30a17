package research

import (
	"context"
	"testing"

	"wicket/strategy/script"
	"wicket/strategy/templates"
)

// isPortfolioTemplate reports whether a template declares a universe:
// sweeps and walk-forward take one series, so the goldens that sweep
// every template leave those out (docs/strategies.md, Portfolios).
func isPortfolioTemplate(t testing.TB, name string) bool {
	t.Helper()
	src, err := templates.Source(name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := script.Load(context.Background(), script.Source{Name: name + ".star", Text: src}, script.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s.IsPortfolio()
}
