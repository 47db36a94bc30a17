package main

import "testing"

// TestFmtPercentBounded (issue 44, item 17): a two-day run's annualised
// figure (1e70) prints in scientific notation, not as a 72-digit number;
// ordinary figures keep their places.
func TestFmtPercentBounded(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		got, want string
	}{
		{fmtPercent(f(1e70)), "1e+72%"},
		{fmtPercent(f(0.1234)), "12.34%"},
		{fmtPercent(f(-0.5)), "-50.00%"},
		{fmtPlaces(f(3.14159), 3), "3.142"},
		{fmtPlaces(f(-2.5e12), 2), "-2.5e+12"},
		{fmtPercent(nil), "-"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
