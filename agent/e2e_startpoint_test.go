package agent_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestValidateStartPoint: validate_strategy carries the start-point
// check: an EMA-seeded strategy is caught (still valid, with a warning),
// a windowed SMA passes.
func TestValidateStartPoint(t *testing.T) {
	s := startMCP(t, nil, newProject(t), "--profile", "offline")
	check := func(src string) (map[string]any, map[string]any) {
		body, _ := json.Marshal(src)
		rep := object(t, s.call(t, "validate_strategy", `{"source":`+string(body)+`}`))
		sp, _ := rep["start_point"].(map[string]any)
		if rep["valid"] != true || sp == nil {
			t.Fatalf("validate: %v", rep)
		}
		return rep, sp
	}
	rep, ema := check("def signals(bars):\n    m = ta.ema(bars.close, 20)\n    return {'long': bars.close > m}\n")
	if ema["passed"] != false || ema["needed"].(float64) < 100 || !strings.Contains(ema["verdict"].(string), "ta.ema(20)") {
		t.Errorf("EMA start point: %v", ema)
	}
	if w, _ := json.Marshal(rep["warnings"]); !strings.Contains(string(w), "start-point check failed") {
		t.Errorf("EMA warnings: %s", w)
	}
	_, sma := check("def signals(bars):\n    m = ta.sma(bars.close, 20)\n    return {'long': bars.close > m}\n")
	if sma["passed"] != true || sma["needed"].(float64) != 19 {
		t.Errorf("SMA start point: %v", sma)
	}
}
