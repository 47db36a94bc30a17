//go:build unix

package backtest

import (
	"context"
	"math"
	"syscall"
	"testing"
	"time"

	"wicket/strategy"
	"wicket/strategy/ta"
)

// BenchmarkEvaluateSignals is a sweep trial's engine pass as the SMA-cross
// template gives it (long on a cross above, exit on a cross below, 16 PBO
// blocks, no returns kept) over a million bars of BenchmarkSweepChunk's
// sine, where the strategy enters and leaves some 5,600 times: the
// engine alone, nanoseconds a bar.
func BenchmarkEvaluateSignals(b *testing.B) { benchEvaluateSignals(b, 1_000_000) }

// BenchmarkEvaluateSignalsSmall is BenchmarkEvaluateSignals over the
// reference's small case, 17,544 bars (about 100 trades), where the
// columns stay in the cache.
func BenchmarkEvaluateSignalsSmall(b *testing.B) { benchEvaluateSignals(b, 17_544) }

func benchEvaluateSignals(b *testing.B, n int) {
	bars := strategy.Bars{Series: "SINE@1h", Time: make([]int64, n), Open: make([]float64, n), High: make([]float64, n),
		Low: make([]float64, n), Close: make([]float64, n), Volume: make([]float64, n)}
	p := 100.0
	for i := range n {
		o := p
		p = 100 + 20*math.Sin(float64(i)/500) + 3*math.Sin(float64(i)/37) + 0.5*math.Sin(float64(i)*1.7)
		bars.Time[i] = t0.Unix() + int64(i)*3600
		bars.Open[i], bars.Close[i] = o, p
		bars.High[i], bars.Low[i], bars.Volume[i] = max(o, p)+0.1, min(o, p)-0.1, 1
	}
	fast, slow := sma(bars.Close, 10), sma(bars.Close, 60)
	sig := strategy.Signals{Long: make([]bool, n), Exit: make([]bool, n), Size: []float64{1}}
	ta.CrossFlagsBoth(sig.Long, sig.Exit, fast, slow)
	cfg := DefaultConfig()
	cfg.FeeBps, cfg.SlippageBps = 10, 5
	sc := Scratch{Blocks: 16}
	var trades int
	before := cpuTime()
	for b.Loop() {
		ev, err := Evaluate(context.Background(), bars, cfg, Decisions{Signals: &sig}, &sc)
		if err != nil {
			b.Fatal(err)
		}
		trades = ev.Metrics.Trades
	}
	b.ReportMetric(float64((cpuTime()-before).Nanoseconds())/float64(b.N)/float64(n), "cpu-ns/bar")
	b.ReportMetric(float64(trades), "trades")
}

// cpuTime is the process's CPU time, which a busy machine disturbs less
// than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
