package research

import (
	"errors"
	"strings"
	"testing"
)

// TestModeOf: a blank series is a portfolio strategy's own universe, one
// name one series, a list or a pattern a series set; a malformed name is
// refused before any mode runs.
func TestModeOf(t *testing.T) {
	l := newLocal(t, 1)
	for _, tc := range []struct {
		series string
		want   string
	}{
		{"", "portfolio"},
		{"  ", "portfolio"},
		{"ETH-USD@1d", "series"},
		{"BTC-USD@1d,ETH-USD@1d", "series set"},
		{"*@1d", "series set"},
		{"nope", "error"},
	} {
		m, err := l.modeOf(tc.series)
		got := "error"
		switch m.(type) {
		case portfolioMode:
			got = "portfolio"
		case seriesMode:
			got = "series"
		case seriesSetMode:
			got = "series set"
		}
		if got != tc.want || (got == "error") != (err != nil) {
			t.Errorf("modeOf(%q) = %s, %v; want %s", tc.series, got, err, tc.want)
		}
	}
	if m, _ := l.modeOf("*@1d"); m != nil && len(m.(seriesSetMode).names) < 2 {
		t.Errorf("*@1d names %v, want the stored daily series", m.(seriesSetMode).names)
	}
}

// TestOptimizeRefusesSeriesSetAndPortfolio: the optimiser runs over one
// series; the other modes refuse it with the fix named.
func TestOptimizeRefusesSeriesSetAndPortfolio(t *testing.T) {
	l := newLocal(t, 1)
	for series, want := range map[string]string{
		"*@1d": "names a series set; optimise on one series",
		"":     "series is missing",
	} {
		req := optRequest(t, 4)
		req.Series = series
		_, err := l.Optimize(ctxT(t), req, nil)
		var re *Error
		if !errors.As(err, &re) || re.Kind != KindInvalid || !strings.Contains(err.Error(), want) {
			t.Errorf("optimize over %q: %v, want an invalid error containing %q", series, err, want)
		}
	}
}
