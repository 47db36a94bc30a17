package research

import (
	"errors"
	"strings"
	"testing"
)

// TestModeOf: a blank series is a portfolio strategy's own universe, one
// name one series, a list or a pattern a universe; a malformed name is
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
		{"BTC-USD@1d,ETH-USD@1d", "universe"},
		{"*@1d", "universe"},
		{"nope", "error"},
	} {
		m, err := l.modeOf(tc.series)
		got := "error"
		switch m.(type) {
		case portfolioMode:
			got = "portfolio"
		case seriesMode:
			got = "series"
		case universeMode:
			got = "universe"
		}
		if got != tc.want || (got == "error") != (err != nil) {
			t.Errorf("modeOf(%q) = %s, %v; want %s", tc.series, got, err, tc.want)
		}
	}
	if m, _ := l.modeOf("*@1d"); m != nil && len(m.(universeMode).names) < 2 {
		t.Errorf("*@1d names %v, want the stored daily series", m.(universeMode).names)
	}
}

// TestOptimizeRefusesUniverseAndPortfolio: the optimiser runs over one
// series; the other modes refuse it with the fix named.
func TestOptimizeRefusesUniverseAndPortfolio(t *testing.T) {
	l := newLocal(t, 1)
	for series, want := range map[string]string{
		"*@1d": "names a universe; optimise on one series",
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
