package backtest

import (
	"context"
	"testing"
	"time"

	"wicket/internal/intrabar"
	"wicket/strategy"
)

// ohlc builds bars from open, high, low, close quadruples.
func ohlc(p ...float64) strategy.Bars {
	n := len(p) / 4
	b := strategy.Bars{Series: "TEST-USD@1h", Time: make([]int64, n), Open: make([]float64, n), High: make([]float64, n),
		Low: make([]float64, n), Close: make([]float64, n), Volume: make([]float64, n)}
	for i := range n {
		b.Time[i] = t0.Add(time.Duration(i) * time.Hour).Unix()
		b.Open[i], b.High[i], b.Low[i], b.Close[i], b.Volume[i] = p[4*i], p[4*i+1], p[4*i+2], p[4*i+3], 1
	}
	return b
}

// longAt is signals that go long at bar 0 only, resting with exits.
func longAt(n int, e strategy.Exits) *strategy.Signals {
	long := make([]bool, n)
	long[0] = true
	return &strategy.Signals{Long: long, Exits: e}
}

// TestProtectiveExits checks hand-computed exits: 10,000 of capital, no
// fee; the long enters at bar 1's open (100, or 100.1 with 10 bps of
// slippage) with a 2 % stop-loss and a 5 % take-profit.
func TestProtectiveExits(t *testing.T) {
	bracket := strategy.Exits{StopLoss: 0.02, TakeProfit: 0.05}
	for _, c := range []struct {
		name      string
		rule      intrabar.Rule
		slip      float64
		bar2      [4]float64
		exit      string
		exitPrice float64
		pnl       float64
	}{
		// Up 5, down .5: the path goes to 100.5 first, then through 105.
		{"take-profit on the path", intrabar.Path, 0, [4]float64{101, 106, 100.5, 104}, "take_profit", 105, 500},
		// Up 4.5, down 5: the path meets 105 before 98 ...
		{"both touched, path", intrabar.Path, 0, [4]float64{101, 105.5, 96, 104}, "take_profit", 105, 500},
		// ... and pessimistic fills the stop.
		{"both touched, pessimistic", intrabar.Pessimistic, 0, [4]float64{101, 105.5, 96, 104}, "stop_loss", 98, -200},
		// A gap through the stop fills at the open.
		{"gap through the stop", intrabar.Path, 0, [4]float64{97, 99, 96, 98}, "stop_loss", 97, -300},
		// With slippage the entry is 100.1: the take-profit is a limit at
		// 105.105 (no slippage), the stop at 98.098 fills 10 bps worse.
		{"take-profit is a maker", intrabar.Path, 10, [4]float64{101, 106, 100.5, 104}, "take_profit", 105.105, 0},
		{"stop-loss is a taker", intrabar.Path, 10, [4]float64{99, 99.5, 97, 98}, "stop_loss", 98.098 * 0.999, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			bars := ohlc(100, 101, 99, 100, 100, 102, 99.5, 101, c.bar2[0], c.bar2[1], c.bar2[2], c.bar2[3], 104, 104, 104, 104)
			cfg := cfgWith(10000, 0, c.slip)
			cfg.Intrabar = c.rule
			r, err := Run(context.Background(), bars, cfg, Decisions{Signals: longAt(bars.Len(), bracket)})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Trades) != 1 {
				t.Fatalf("%d trades, want 1: %+v", len(r.Trades), r.Trades)
			}
			tr := r.Trades[0]
			if tr.Exit != c.exit || tr.ExitBar != 2 || !near(tr.ExitPrice, c.exitPrice) {
				t.Errorf("exit %q at bar %d price %v, want %q at bar 2 price %v", tr.Exit, tr.ExitBar, tr.ExitPrice, c.exit, c.exitPrice)
			}
			if c.slip == 0 && !near(tr.PnL, c.pnl) {
				t.Errorf("pnl %v, want %v", tr.PnL, c.pnl)
			}
			if r.OpenPosition != nil {
				t.Errorf("a position is still open after its exit: %+v", r.OpenPosition)
			}
		})
	}
}

// TestTrailingExit: a long at 100 with a 5 % trailing stop; the highs
// climb to 120 over three bars, so the stop follows to 114, where the
// fourth bar's fall meets it.
func TestTrailingExit(t *testing.T) {
	bars := ohlc(
		100, 100, 100, 100,
		100, 104, 99, 103, // enter at 100: best 104, stop 98.8
		103, 112, 102, 111, // best 112, stop 106.4
		111, 120, 110, 119, // best 120, stop 114
		119, 119.5, 108, 109, // up .5, down 11: 119 -> 119.5 -> 108, the stop at 114
		109, 109, 109, 109,
	)
	cfg := cfgWith(10000, 0, 0)
	r, err := Run(context.Background(), bars, cfg, Decisions{Signals: longAt(bars.Len(), strategy.Exits{TrailingStop: 0.05})})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Trades) != 1 || r.Trades[0].Exit != "trailing_stop" || r.Trades[0].ExitBar != 4 || !near(r.Trades[0].ExitPrice, 114) {
		t.Fatalf("trades %+v, want one trailing_stop exit at bar 4, 114", r.Trades)
	}
}

// TestExitsSameInEveryStyle: the same decisions with the same exits give
// the same run whether they come as signals or from a stepper, and
// Evaluate's metrics are Run's, bit for bit; bars where no exit can fill
// are skipped by the tight loop, and the results say it changed nothing.
func TestExitsSameInEveryStyle(t *testing.T) {
	bars := walk(3000, 7)
	for i := range bars.Len() { // give the bars a range for the exits to meet
		bars.High[i] = max(bars.Open[i], bars.Close[i]) * 1.004
		bars.Low[i] = min(bars.Open[i], bars.Close[i]) * 0.996
	}
	targets := crossTargets(bars.Close, 5, 20)
	long := make([]bool, bars.Len())
	exit := make([]bool, bars.Len())
	for i, v := range targets {
		long[i], exit[i] = v == 1, v == 0
	}
	for _, e := range []strategy.Exits{{StopLoss: 0.01, TakeProfit: 0.02}, {TrailingStop: 0.015}, {StopLoss: 0.005}} {
		cfg := cfgWith(10000, 10, 5)
		sig := &strategy.Signals{Long: long, Exit: exit, Exits: e}
		rs, err := Run(context.Background(), bars, cfg, Decisions{Signals: sig})
		if err != nil {
			t.Fatal(err)
		}
		st := stepFunc(func(i int, a strategy.Account) (strategy.Intent, error) {
			switch {
			case long[i]:
				return strategy.Intent{Kind: strategy.Target, Value: 1, Exits: e}, nil
			case exit[i]:
				return strategy.Intent{Kind: strategy.Target, Value: 0, Exits: e}, nil
			}
			return strategy.Intent{}, nil
		})
		rt, err := Run(context.Background(), bars, cfg, Decisions{Stepper: st})
		if err != nil {
			t.Fatal(err)
		}
		exits := 0
		for _, tr := range rs.Trades {
			if tr.Exit != "" {
				exits++
			}
		}
		if exits == 0 {
			t.Fatalf("%+v: no trade closed by an exit; the fixture should meet some", e)
		}
		if rs.Metrics != rt.Metrics {
			t.Errorf("%+v: signals and stepper differ:\n%+v\n%+v", e, rs.Metrics, rt.Metrics)
		}
		ev, err := Evaluate(context.Background(), bars, cfg, Decisions{Signals: sig}, &Scratch{})
		if err != nil {
			t.Fatal(err)
		}
		if ev.Metrics != rs.Metrics {
			t.Errorf("%+v: Evaluate differs from Run:\n%+v\n%+v", e, ev.Metrics, rs.Metrics)
		}
	}
}

func TestExitsRefused(t *testing.T) {
	bars := ohlc(100, 101, 99, 100, 100, 101, 99, 100)
	_, err := Run(context.Background(), bars, cfgWith(10000, 0, 0), Decisions{Signals: longAt(2, strategy.Exits{StopLoss: 1.5})})
	if err == nil || err.Error() != "signals: stop_loss 1.5 must be a fraction of the entry price above 0 and below 1 (0.02 is 2 %), or 0 for none" {
		t.Errorf("err = %v", err)
	}
	bad := ohlc(100, 101, 99, 100, 100, 99, 101, 100) // high below low
	_, err = Run(context.Background(), bad, cfgWith(10000, 0, 0), Decisions{Signals: longAt(2, strategy.Exits{StopLoss: 0.01})})
	if err == nil {
		t.Error("a bar whose high is below its low ran with protective orders")
	}
}

// BenchmarkBracketVsMarket prints the ratio issue 26 bounds (target <=
// 1.3x): the sma cross over a million bars with every entry bracketed (a
// 1 % stop-loss and a 2 % take-profit, walked by the intrabar rule)
// against the same signals with market exits only.
func BenchmarkBracketVsMarket(b *testing.B) {
	bars := walk(benchBars, 1)
	for i := range bars.Len() {
		bars.High[i] = max(bars.Open[i], bars.Close[i]) * 1.002
		bars.Low[i] = min(bars.Open[i], bars.Close[i]) * 0.998
	}
	targets := crossTargets(bars.Close, 10, 30)
	long, exit := make([]bool, len(targets)), make([]bool, len(targets))
	for i, v := range targets {
		long[i], exit[i] = v == 1, v == 0
	}
	market := &strategy.Signals{Long: long, Exit: exit}
	bracket := &strategy.Signals{Long: long, Exit: exit, Exits: strategy.Exits{StopLoss: 0.01, TakeProfit: 0.02}}
	cfg := DefaultConfig()
	var sc Scratch
	run := func(sig *strategy.Signals) (time.Duration, Metrics) {
		t := time.Now()
		ev, err := Evaluate(context.Background(), bars, cfg, Decisions{Signals: sig}, &sc)
		if err != nil {
			b.Fatal(err)
		}
		return time.Since(t), ev.Metrics
	}
	var tm, tb time.Duration
	for b.Loop() {
		d, _ := run(market)
		tm += d
		d, m := run(bracket)
		tb += d
		if m.Trades == 0 {
			b.Fatal("no trades")
		}
	}
	reportRatio(b, "bracketed backtest/market exits (target <= 1.3)", float64(tb)/float64(tm))
}
