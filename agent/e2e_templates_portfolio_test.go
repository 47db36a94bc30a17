package agent_test

import (
	"slices"
	"testing"
)

// TestListTemplatesPortfolio: list_templates lists the portfolio
// templates with style portfolio, their universe and rebalance schedule,
// in the list and in one template's answer; a single-series template
// names no universe.
func TestListTemplatesPortfolio(t *testing.T) {
	s := startMCP(t, nil, newProject(t))
	list := object(t, s.call(t, "list_templates", `{}`))["templates"].([]any)
	byName := map[string]map[string]any{}
	for _, tm := range list {
		m := tm.(map[string]any)
		byName[m["name"].(string)] = m
	}
	for name, rebalance := range map[string]string{"equal_weight": "weekly", "momentum_rotation": "monthly", "pairs_zscore": "bar"} {
		m := byName[name]
		if m == nil || m["style"] != "portfolio" || m["rebalance"] != rebalance || len(m["universe"].([]any)) == 0 {
			t.Errorf("%s: %v", name, m)
		}
	}
	if m := byName["sma_cross"]; m == nil || m["style"] != "signals" || m["universe"] != nil {
		t.Errorf("sma_cross: %v", m)
	}
	one := object(t, s.call(t, "list_templates", `{"name":"pairs_zscore"}`))
	u, _ := one["universe"].([]any)
	if one["style"] != "portfolio" || one["rebalance"] != "bar" || !slices.Equal(u, []any{"BTC-USD@1d", "ETH-USD@1d"}) || one["source"] == "" {
		t.Errorf("pairs_zscore: style %v, universe %v, rebalance %v", one["style"], one["universe"], one["rebalance"])
	}
}
