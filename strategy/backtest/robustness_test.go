package backtest

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"wicket/strategy"
	"wicket/strategy/robust"
)

// TestAssess: the figures a run's robustness report carries agree with the
// run: reshuffled trades end where the run ended (it ends flat, so its
// equity moved only by its trades), a strategy always fully long against
// its own series has a beta and a correlation near 1, and the report is
// deterministic for a seed.
func TestAssess(t *testing.T) {
	bars := walk(4000, 11)
	targets := crossTargets(bars.Close, 5, 20)
	targets[len(targets)-2] = 0 // end flat
	cfg := cfgWith(10000, 10, 5)
	r, err := Run(context.Background(), bars, cfg, Decisions{Targets: targets})
	if err != nil {
		t.Fatal(err)
	}
	if r.OpenPosition != nil {
		t.Fatal("the fixture should end flat")
	}
	rep, err := Assess(r, Robustness{Paths: 500, Seed: 9}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.MonteCarlo) != 3 || rep.MonteCarlo[0].Method != robust.Reshuffle {
		t.Fatalf("monte carlo %+v", rep.MonteCarlo)
	}
	want := r.Metrics.FinalEquity / 10000
	if got := rep.MonteCarlo[0].FinalEquity.P50; math.Abs(got-want) > 1e-9 {
		t.Errorf("reshuffled trades end at %v, the run at %v", got, want)
	}
	if !(rep.PSR >= 0 && rep.PSR <= 1) || rep.Years <= 0 {
		t.Errorf("psr %v years %v", rep.PSR, rep.Years)
	}
	again, _ := Assess(r, Robustness{Paths: 500, Seed: 9}, nil)
	a, _ := json.Marshal(rep)
	b, _ := json.Marshal(again)
	if string(a) != string(b) || !strings.Contains(string(a), `"method":"block"`) {
		t.Errorf("reports differ for one seed, or lack the block bootstrap:\n%s\n%s", a, b)
	}

	long := make([]float64, bars.Len())
	for i := range long {
		long[i] = math.NaN()
	}
	long[0] = 1
	hold, err := Run(context.Background(), bars, cfgWith(10000, 0, 0), Decisions{Targets: long})
	if err != nil {
		t.Fatal(err)
	}
	rel, err := Assess(hold, Robustness{Benchmark: bars.Series, Paths: 100}, &bars)
	if err != nil {
		t.Fatal(err)
	}
	if rel.Relative == nil || math.Abs(rel.Relative.Beta-1) > 0.01 || rel.Relative.Correlation < 0.999 {
		t.Errorf("buy and hold against its own series: %+v", rel.Relative)
	}
	if rel.Relative.Periods != bars.Len()-1 {
		t.Errorf("%d aligned periods, want %d", rel.Relative.Periods, bars.Len()-1)
	}
	if _, err := Assess(r, Robustness{Paths: 5}, nil); err == nil || !strings.Contains(err.Error(), "paths 5 must be between 100") {
		t.Errorf("err = %v", err)
	}
	empty := strategy.Bars{}
	if _, err := Assess(r, Robustness{Benchmark: "X@1h"}, &empty); err == nil {
		t.Error("a benchmark without bars at the run's times was compared")
	}
}
