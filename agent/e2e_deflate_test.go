package agent_test

import (
	"strings"
	"testing"
)

// TestSweepDeflateBy: run_sweep's ledger DSR deflates by every strategy's
// trials on the series unless deflate_by asks for the strategy's own.
func TestSweepDeflateBy(t *testing.T) {
	s := startMCP(t, nil, seededProject(t))
	// Another strategy's trial on the series.
	if r := s.call(t, "run_backtest", `{"name":"ema_cross","series":"ETH-USD@1d"}`); r.IsError {
		t.Fatalf("run_backtest: %s", text(r))
	}
	sweep := `{"name":"sma_cross","series":"ETH-USD@1d","grid":{"fast":[5,10],"slow":[30,40]}`
	for _, c := range []struct {
		arg, scope string
		trials     func(series, own float64) float64
	}{
		{``, "series", func(series, _ float64) float64 { return series }},
		{`,"deflate_by":"strategy"`, "strategy", func(_, own float64) float64 { return own }},
		{`,"deflate_by":"series"`, "series", func(series, _ float64) float64 { return series }},
	} {
		r := s.call(t, "run_sweep", sweep+c.arg+`}`)
		if r.IsError {
			t.Fatalf("run_sweep%s: %s", c.arg, text(r))
		}
		led, _ := object(t, r)["ledger_deflated_sharpe"].(map[string]any)
		series, _ := led["series_trials"].(float64)
		own, _ := led["strategy_trials"].(float64)
		if led["scope"] != c.scope || series <= own || led["trials"] != c.trials(series, own) {
			t.Errorf("run_sweep%s: scope %v, N %v (series %v, the strategy's %v)", c.arg, led["scope"], led["trials"], series, own)
		}
	}
	if r := s.call(t, "run_sweep", sweep+`,"deflate_by":"everyone"}`); !r.IsError || !strings.Contains(text(r), "series") || !strings.Contains(text(r), "strategy") {
		t.Errorf("an unknown deflate_by is not refused naming the scopes: %s", text(r))
	}
}
