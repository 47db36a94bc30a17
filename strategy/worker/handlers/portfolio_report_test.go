package handlers

import (
	"context"
	"strings"
	"testing"
	"time"

	"wicket/strategy/backtest"
	"wicket/strategy/ta"
)

// TestPortfolioReport: a portfolio backtest asked for its report answers
// with the portfolio tear sheet, one not asked answers with none, and a
// sweep's run keeps no per-bar record even when its request carries
// report (its trials pay nothing for the sheet).
func TestPortfolioReport(t *testing.T) {
	ctx := context.Background()
	req := templateRequest(t, "momentum_rotation", "")
	req.From = "2023-01-01"
	resp, err := Portfolio(ctx, req, ta.NewMemo(0))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.HTML) != 0 {
		t.Errorf("a tear sheet of %d bytes not asked for", len(resp.HTML))
	}
	req.Report = true
	if resp, err = Portfolio(ctx, req, ta.NewMemo(0)); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"equity", "weights", "contribution", "turnover"} {
		if !strings.Contains(string(resp.HTML), `data-chart="`+name+`"`) {
			t.Errorf("the tear sheet has no %s chart", name)
		}
	}
	cfg, err := req.Config(backtest.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	res, s, err := portfolioRun(ctx, req, cfg, ta.NewMemo(0), map[string]universe{}, false, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if res.Holdings != nil {
		t.Error("a sweep's run kept the per-bar record")
	}
}
