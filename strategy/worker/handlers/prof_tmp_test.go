package handlers

import (
	"context"
	"testing"
	"wicket/strategy/worker"

	"wicket/strategy/ta"
	"wicket/strategy/templates"
)

func BenchmarkProfChunk(b *testing.B) {
	path := writeBench(b, benchN)
	src, _ := templates.Source("sma_cross")
	req := worker.SweepChunk{Name: "sma_cross.star", Source: src, HistoryPath: path, Series: "BENCH@1h", Capital: "10000", FeeBps: 10, SlippageBps: 5}
	for f := 5; f <= 50; f += 5 {
		for s := 20; s <= 200; s += 20 {
			req.Combos = append(req.Combos, map[string]any{"fast": int64(f), "slow": int64(s)})
		}
	}
	cache := &barCache{}
	for b.Loop() {
		memo := ta.NewMemo(0)
		if _, err := evalChunk(context.Background(), req, memo, cache); err != nil {
			b.Fatal(err)
		}
	}
}

var benchN = 17544
