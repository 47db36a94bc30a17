package backtest

import (
	"context"
	"testing"

	"wicket/internal/intrabar"
	"wicket/strategy"
)

// onBarLong is the on_bar style of longAt: a stepper that targets 1 with
// exits e at bar 0 and decides nothing after.
func onBarLong(e strategy.Exits) Stepper {
	return stepFunc(func(i int, _ strategy.Account) (strategy.Intent, error) {
		if i == 0 {
			return strategy.Intent{Kind: strategy.Target, Value: 1, Exits: e}, nil
		}
		return strategy.Intent{}, nil
	})
}

// TestStopLimitAndOCOBothStyles, by hand: 10,000 long from 100 at bar 1's
// open, no fee, with a stop-limit (stop 98, limit 97) in an OCO with a
// 5 % take-profit. Signals and on_bar run the same orders.
//   - a fall through 98 to 97.5 fills the stop-limit at its stop, 98, as
//     a limit (no slippage);
//   - a gap to 96 triggers it at the open below its limit: it rests as a
//     limit at 97 and fills when bar 3 comes back to 97;
//   - a plain stop-loss at 98 in the same gap fills at the open, 96;
//   - a rise through 105 fills the take-profit and cancels the stop-limit
//     (no second exit).
func TestStopLimitAndOCOBothStyles(t *testing.T) {
	oco := strategy.Exits{StopLoss: 0.02, StopLimit: 0.03, TakeProfit: 0.05}
	for _, c := range []struct {
		name      string
		exits     strategy.Exits
		bar2      [4]float64
		exit      string
		exitBar   int
		exitPrice float64
	}{
		{"stop-limit met on the way down", oco, [4]float64{99, 99.5, 97.5, 98.5}, "stop_limit", 2, 98},
		{"stop-limit gapped: rests as a limit", oco, [4]float64{96, 96.5, 95, 96}, "stop_limit", 3, 97},
		{"stop-loss gapped: fills at the open", strategy.Exits{StopLoss: 0.02, TakeProfit: 0.05}, [4]float64{96, 96.5, 95, 96}, "stop_loss", 2, 96},
		{"take-profit cancels the stop-limit", oco, [4]float64{101, 106, 100.5, 104}, "take_profit", 2, 105},
	} {
		bars := ohlc(100, 101, 99, 100, 100, 102, 99.5, 101, c.bar2[0], c.bar2[1], c.bar2[2], c.bar2[3], 96, 97.5, 95.5, 96, 96, 96, 96, 96)
		for style, d := range map[string]Decisions{
			"signals": {Signals: longAt(bars.Len(), c.exits)},
			"on_bar":  {Stepper: onBarLong(c.exits)},
		} {
			cfg := cfgWith(10000, 0, 10)
			r, err := Run(context.Background(), bars, cfg, d)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Trades) != 1 {
				t.Fatalf("%s %s: %d trades, want 1: %+v", c.name, style, len(r.Trades), r.Trades)
			}
			tr := r.Trades[0]
			want := c.exitPrice * (1 + 0.001) // the entry's 10 bps of slippage moves every level
			if c.exit == "stop_loss" {
				want = 96 * (1 - 0.001) // a gap fills at the open, a taker: slipped
			}
			if tr.Exit != c.exit || tr.ExitBar != c.exitBar || !near(tr.ExitPrice, want) {
				t.Errorf("%s %s: exit %q at bar %d price %v, want %q at bar %d price %v", c.name, style, tr.Exit, tr.ExitBar, tr.ExitPrice, c.exit, c.exitBar, want)
			}
		}
	}
}

// TestPessimisticTrailingAdverse: a long at 100 (bar 1's open) with a 3 %
// trailing stop, which bar 1's high of 100.5 moves to 97.485; bar 2 goes
// up 2 and down 6.5. The path goes to the high first (best 102, stop
// 98.94) and exits there on the way down; pessimistic meets the low
// first, where the stop still is 97.485.
func TestPessimisticTrailingAdverse(t *testing.T) {
	bars := ohlc(100, 100, 100, 100, 100, 100.5, 99.8, 100, 100, 102, 95.5, 101, 101, 101, 101, 101)
	for rule, want := range map[intrabar.Rule]float64{intrabar.Path: 102 * 0.97, intrabar.Pessimistic: 100.5 * 0.97} {
		cfg := cfgWith(10000, 0, 0)
		cfg.Intrabar = rule
		r, err := Run(context.Background(), bars, cfg, Decisions{Signals: longAt(bars.Len(), strategy.Exits{TrailingStop: 0.03})})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Trades) != 1 || r.Trades[0].Exit != "trailing_stop" || r.Trades[0].ExitBar != 2 || !near(r.Trades[0].ExitPrice, want) {
			t.Errorf("%v: trades %+v, want a trailing_stop exit at bar 2, %v", rule, r.Trades, want)
		}
	}
}
