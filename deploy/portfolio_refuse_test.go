package deploy

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/strategy"
)

// portfolioHistory is 200 1m bars of each series named, ending before
// start.
func portfolioHistory(start time.Time, series ...string) map[string]strategy.Bars {
	all := map[string]strategy.Bars{}
	for k, s := range series {
		all[s] = walk(s, 200, uint64(7+k), 50, start.Add(-200*time.Minute), nil)
	}
	return all
}

// TestDeployPortfolioRefusals: what a portfolio deployment cannot be is
// refused before anything is journaled, each refusal naming the fix; the
// same strategy, fixed, deploys.
func TestDeployPortfolioRefusals(t *testing.T) {
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	all := portfolioHistory(start, "BTC-USD@1m", "ETH-USD@1m", "SOL-USD@1m", "DOGE-USD@1m")
	g := newPortfolioRig(t, start, all, &multiTape{})
	spec := func(src string) Spec {
		return Spec{Strategy: "rotation.star", Source: src, Venue: "paper", Mode: ModeAuto, Capital: decimal.NewFromInt(10000), Warmup: 60}
	}
	check := func(s Spec, words ...string) {
		t.Helper()
		_, err := g.r.Check(ctxT(t), s)
		wantErr(t, err, words...)
		if _, err := g.r.Create(ctxT(t), s); err == nil {
			t.Fatal("a refused portfolio deployment was created")
		}
	}

	// A symbol the venue does not list: named, with the symbols it does.
	unlisted := strings.Replace(rotation, `"SOL-USD@1m"]`, `"DOGE-USD@1m"]`, 1)
	check(spec(unlisted), "series DOGE-USD@1m is unknown to venue paper", "which trades BTC-USD, ETH-USD, SOL-USD, SPY", "add DOGE-USD to the venue's symbols in wicket.toml")

	// A universe over 64 assets.
	var names []string
	for k := range 65 {
		names = append(names, fmt.Sprintf(`"A%d-USD@1m"`, k))
	}
	wide := strings.Replace(rotation, `["BTC-USD@1m", "ETH-USD@1m", "SOL-USD@1m"]`, "["+strings.Join(names, ", ")+"]", 1)
	check(spec(wide), "universe holds 65 entries; a portfolio holds 1 to 64", "wicket strategy validate rotation")

	// Propose mode, and a series that is not the universe.
	s := spec(rotation)
	s.Mode = ModePropose
	check(s, "auto mode only", "--mode auto")
	s = spec(rotation)
	s.Series = "BTC-USD@1m"
	check(s, "portfolio strategy trading its universe BTC-USD@1m,ETH-USD@1m,SOL-USD@1m, not series BTC-USD@1m", "give --series BTC-USD@1m,ETH-USD@1m,SOL-USD@1m")

	if len(g.r.List()) != 0 {
		t.Fatalf("%d deployments after refusals", len(g.r.List()))
	}
	s.Series = "BTC-USD@1m,ETH-USD@1m,SOL-USD@1m"
	d, err := g.r.Create(ctxT(t), s)
	if err != nil {
		t.Fatal(err)
	}
	if got := g.r.List(); len(got) != 1 || len(got[0].Legs) != 3 || got[0].Legs[2].Symbol != "SOL-USD" {
		t.Fatalf("the list shows %+v; want one deployment with its three legs", got)
	}
	if lines := d.LegLines(); len(lines) != 3 || !strings.HasPrefix(lines[2], "SOL-USD@1m (SOL-USD at paper): position 0") {
		t.Fatalf("legs shown as %q", lines)
	}
}

// TestUniverseSeriesPatterns: a pattern resolves against the symbols the
// venue lists; past 64 assets it is refused naming the fix, and a venue
// listing nothing cannot resolve one.
func TestUniverseSeriesPatterns(t *testing.T) {
	vc := project.Venue{Name: "wide", Kind: "paper"}
	for k := range 70 {
		vc.Symbols = append(vc.Symbols, fmt.Sprintf("A%02d-USD", k))
	}
	vc.Symbols = append(vc.Symbols, "SPY")
	_, err := universeSeries([]string{"*-USD@1h"}, vc)
	wantErr(t, err, "the universe resolves to 70 series", "at most 64 assets", "narrow the universe")
	got, err := universeSeries([]string{"A0?-USD@1h", "SPY@1h"}, vc)
	if err != nil || len(got) != 11 || got[0] != "A00-USD@1h" || got[10] != "SPY@1h" {
		t.Fatalf("A0?-USD@1h and SPY@1h resolved to %v (%v)", got, err)
	}
	_, err = universeSeries([]string{"B*@1h"}, vc)
	wantErr(t, err, `pattern "B*@1h" matches none of venue wide's symbols`)
	_, err = universeSeries([]string{"*-USD@1h"}, project.Venue{Name: "bare"})
	wantErr(t, err, "venue bare lists no symbols", "write the universe's series out")
}
