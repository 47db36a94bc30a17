package script

import (
	"os"
	"testing"

	"wicket/strategy"
	"wicket/strategy/ta"
)

func templateSource(b *testing.B, name string) string {
	text, err := os.ReadFile("../templates/star/" + name + ".star")
	if err != nil {
		b.Fatal(err)
	}
	return string(text)
}

// BenchmarkOnBarSMACross is the per-bar cost of the event-driven SMA-cross
// template over 1,000,000 bars on one goroutine: one on_bar call per bar
// with the account updated as a backtest would (target of 500k bars/s).
func BenchmarkOnBarSMACross(b *testing.B) {
	const n = 1_000_000
	bars := SmokeBars(n)
	s, err := Load(bg(b), Source{Name: "sma_cross_bar.star", Text: templateSource(b, "sma_cross_bar")}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		st, err := s.Begin(bg(b), bars)
		if err != nil {
			b.Fatal(err)
		}
		acct := strategy.Account{Cash: 10000, Equity: 10000}
		for i := 0; i < n; i++ {
			in, err := st.Step(i, acct)
			if err != nil {
				b.Fatal(err)
			}
			if in.Kind == strategy.Target {
				acct.Position = in.Value * acct.Equity / bars.Close[i]
			}
		}
		st.Close()
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "bars/s")
}

// BenchmarkSignalsSMACross is the vectorised template over 1,000,000 bars,
// indicators computed afresh each time (a new memo per run).
func BenchmarkSignalsSMACross(b *testing.B) {
	const n = 1_000_000
	bars := SmokeBars(n)
	src := Source{Name: "sma_cross.star", Text: templateSource(b, "sma_cross")}
	b.ReportAllocs()
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		s, err := Load(bg(b), src, Options{Memo: ta.NewMemo(0)})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Signals(bg(b), bars); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "bars/s")
}

// BenchmarkValidate is a full validation of a template: compile, top
// level, smoke run over SmokeLength bars.
func BenchmarkValidate(b *testing.B) {
	src := Source{Name: "macd_trend.star", Text: templateSource(b, "macd_trend")}
	for it := 0; it < b.N; it++ {
		if rep := Validate(bg(b), src, Options{}); !rep.Valid {
			b.Fatal(rep.Problems)
		}
	}
}
