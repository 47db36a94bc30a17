package deploy

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/strategy"
	"wicket/strategy/history"
	"wicket/strategy/research"
	"wicket/strategy/worker"
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

	// A series that is not the universe.
	s := spec(rotation)
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

// TestDeployPortfolioPreview: checking a portfolio deployment runs the
// portfolio backtest of its universe over what the history store holds,
// with the deployment's capital and the venue's costs, and shows it with
// its lookahead verdict; a portfolio strategy that reads a later bar is
// refused, naming the line, in the check and at create.
func TestDeployPortfolioPreview(t *testing.T) {
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	all := portfolioHistory(start, "BTC-USD@1m", "ETH-USD@1m", "SOL-USD@1m")
	g := newPortfolioRig(t, start, all, &multiTape{})
	p := project.Project{Root: t.TempDir()}
	hs, err := history.Open(p.HistoryPath())
	if err != nil {
		t.Fatal(err)
	}
	for s, b := range all {
		if err := hs.Write(context.Background(), s, b, history.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	hs.Close()
	g.cfg.Research = research.NewLocal(research.Config{Project: p, Pool: g.cfg.Strategies.(*worker.Pool)})
	g.restart()
	spec := Spec{Strategy: "rotation.star", Source: rotation, Series: "universe", Venue: "paper", Mode: ModeAuto, Capital: decimal.NewFromInt(10000), Warmup: 60}
	d, err := g.r.Check(ctxT(t), spec)
	if err != nil {
		t.Fatal(err)
	}
	pv := d.Preview
	if pv == nil || pv.Backtest == nil || pv.Backtest.Error != "" || pv.Backtest.TotalReturn == nil || !strings.HasPrefix(pv.Lookahead, "passed") {
		t.Fatalf("preview %+v (backtest %+v)", pv, pv.Backtest)
	}
	peek := strings.Replace(rotation, "ta.roc(u[a].close, lookback)", "ta.shift(u[a].close, -1) - u[a].close", 1)
	spec.Source = peek
	_, err = g.r.Check(ctxT(t), spec)
	wantErr(t, err, "line 7", "into the future", "wicket strategy validate rotation")
	if _, err := g.r.Create(ctxT(t), spec); err == nil || len(g.r.List()) != 0 {
		t.Fatalf("a portfolio that reads a later bar was deployed (%v)", err)
	}
}
