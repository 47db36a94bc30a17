package backtest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

func TestRequestConfig(t *testing.T) {
	fee, slip := 0.0, 12.5
	cfg, err := Request{Capital: " 2500.50 ", FeeBps: &fee, SlippageBps: &slip, Fill: "close", TradesLimit: 7,
		From: "2024-01-02", To: "2024-03-31"}.Config(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Capital: decimal.RequireFromString("2500.5"), FeeBps: 0, SlippageBps: 12.5, Fill: FillClose, TradesLimit: 7,
		From: time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC), To: time.Date(2024, 3, 31, 23, 59, 59, 0, time.UTC)}
	if !cfg.Capital.Equal(want.Capital) || cfg.FeeBps != 0 || cfg.SlippageBps != 12.5 || cfg.Fill != FillClose ||
		cfg.TradesLimit != 7 || !cfg.From.Equal(want.From) || !cfg.To.Equal(want.To) {
		t.Errorf("config %+v", cfg)
	}
	// Empty fields keep the base.
	cfg, err = Request{From: "2024-01-02T15:00:00+02:00"}.Config(DefaultConfig())
	if err != nil || !cfg.Capital.Equal(decimal.NewFromInt(10000)) || cfg.FeeBps != 10 || cfg.SlippageBps != 5 ||
		!cfg.From.Equal(time.Date(2024, 1, 2, 13, 0, 0, 0, time.UTC)) || !cfg.To.IsZero() {
		t.Errorf("defaults %+v %v", cfg, err)
	}
	neg := -1.0
	for _, tc := range []struct {
		req  Request
		want string
	}{
		{Request{Capital: "0"}, "capital"},
		{Request{Capital: "ten"}, "capital"},
		{Request{FeeBps: &neg}, "fee_bps -1"},
		{Request{SlippageBps: &neg}, "slippage_bps -1"},
		{Request{Fill: "vwap"}, "fill"},
		{Request{TradesLimit: -1}, "trades_limit"},
		{Request{From: "yesterday"}, `from "yesterday"`},
		{Request{To: "2024-13-01"}, `to "2024-13-01"`},
		{Request{From: "2024-02-01", To: "2024-01-01"}, "before from"},
	} {
		_, err := tc.req.Config(DefaultConfig())
		var be *Error
		if !errors.As(err, &be) || be.Kind != KindInvalid || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want Invalid containing %q", tc.req, err, tc.want)
		}
	}
}
