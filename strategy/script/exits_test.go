package script

import (
	"strings"
	"testing"

	"wicket/strategy"
)

// TestSignalsExits: a signals dict's stop_loss, take_profit and
// trailing_stop are the exits every position rests with; a bad one is
// refused with the key and the range.
func TestSignalsExits(t *testing.T) {
	bars := SmokeBars(200)
	s := mustLoad(t, "def signals(bars):\n    return {'long': bars.close > bars.open, 'exit': bars.close < bars.open, 'stop_loss': 0.02, 'take_profit': 0.05, 'trailing_stop': 0.03}\n", Options{})
	sig, err := s.Signals(bg(t), bars)
	if err != nil {
		t.Fatal(err)
	}
	if want := (strategy.Exits{StopLoss: 0.02, TakeProfit: 0.05, TrailingStop: 0.03}); sig.Exits != want {
		t.Errorf("exits %+v, want %+v", sig.Exits, want)
	}
	for src, want := range map[string]string{
		"def signals(bars):\n    return {'long': bars.close > bars.open, 'stop_loss': 1.2}\n":   `["stop_loss"] stop_loss 1.2 must be a fraction of the entry price above 0 and below 1`,
		"def signals(bars):\n    return {'long': bars.close > bars.open, 'take_profit': 'x'}\n": `["take_profit"] is string; want a number`,
		"def signals(bars):\n    return {'long': bars.close > bars.open, 'stops': 0.1}\n":       `"trailing_stop"`,
	} {
		_, err := mustLoad(t, src, Options{}).Signals(bg(t), bars)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want it to say %s", src, err, want)
		}
	}
}

// TestTargetExits: ctx.target's keyword exits come with the intent.
func TestTargetExits(t *testing.T) {
	bars := SmokeBars(100)
	s := mustLoad(t, "def setup(ctx):\n    pass\ndef on_bar(ctx):\n    ctx.target(0.5, stop_loss=0.01, trailing_stop=0.02)\n", Options{})
	tr := stepAll(t, s, bars)
	if want := (strategy.Intent{Kind: strategy.Target, Value: 0.5, Exits: strategy.Exits{StopLoss: 0.01, TrailingStop: 0.02}}); tr.steps.intent(10) != want {
		t.Errorf("intent %+v, want %+v", tr.steps.intent(10), want)
	}
	bad := mustLoad(t, "def setup(ctx):\n    pass\ndef on_bar(ctx):\n    ctx.target(1, take_profit=-0.1)\n", Options{})
	st, err := bad.Begin(bg(t), bars)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Step(0, strategy.Account{Cash: 1, Equity: 1}); err == nil || !strings.Contains(err.Error(), "take_profit -0.1 must be a fraction") {
		t.Errorf("err = %v", err)
	}
}

// TestProofCoversExits: an on_bar strategy whose stop-loss depends on the
// next bar is caught by the prefix proof, which names the exit.
func TestProofCoversExits(t *testing.T) {
	registerTestBuiltin(t, "peek", leakyPeek)
	bars := SmokeBars(500)
	leaky := mustLoad(t, "def setup(ctx):\n    ctx.n = peek(ctx.close)\ndef on_bar(ctx):\n    up = ctx.n[0] != None and ctx.n[0] > ctx.close[0]\n    ctx.target(1, stop_loss=0.01 if up else 0.02)\n", Options{})
	_, err := leaky.CheckLookahead(bg(t), bars, stepAll(t, leaky, bars))
	e := asError(t, err, KindLookahead)
	if !strings.Contains(e.Msg, "the intent at bar") || !strings.Contains(e.Msg, "stop_loss=") {
		t.Fatalf("got %v", e)
	}
}

// TestStopLimitExits: a stop-limit (stop_limit with stop_loss) and its OCO
// with a take-profit are declared in both styles; a stop_limit without a
// stop-loss, or inside it, is refused saying why.
func TestStopLimitExits(t *testing.T) {
	bars := SmokeBars(100)
	want := strategy.Exits{StopLoss: 0.02, StopLimit: 0.03, TakeProfit: 0.05}
	sig, err := mustLoad(t, "def signals(bars):\n    return {'long': bars.close > bars.open, 'stop_loss': 0.02, 'stop_limit': 0.03, 'take_profit': 0.05}\n", Options{}).Signals(bg(t), bars)
	if err != nil || sig.Exits != want {
		t.Errorf("signals exits %+v (%v), want %+v", sig.Exits, err, want)
	}
	s := mustLoad(t, "def setup(ctx):\n    pass\ndef on_bar(ctx):\n    ctx.target(1, stop_loss=0.02, stop_limit=0.03, take_profit=0.05)\n", Options{})
	if got := stepAll(t, s, bars).steps.intent(10); got != (strategy.Intent{Kind: strategy.Target, Value: 1, Exits: want}) {
		t.Errorf("on_bar intent %+v, want exits %+v", got, want)
	}
	for src, msg := range map[string]string{
		"def signals(bars):\n    return {'long': bars.close > bars.open, 'stop_limit': 0.03}\n":                    "stop_limit 0.03 needs stop_loss",
		"def signals(bars):\n    return {'long': bars.close > bars.open, 'stop_loss': 0.05, 'stop_limit': 0.03}\n": "stop_limit 0.03 is inside stop_loss 0.05",
	} {
		_, err := mustLoad(t, src, Options{}).Signals(bg(t), bars)
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: err %v, want %q", src, err, msg)
		}
	}
	bad := mustLoad(t, "def setup(ctx):\n    pass\ndef on_bar(ctx):\n    ctx.target(1, stop_limit=0.03)\n", Options{})
	st, err := bad.Begin(bg(t), bars)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Step(0, strategy.Account{Cash: 1, Equity: 1}); err == nil || !strings.Contains(err.Error(), "stop_limit 0.03 needs stop_loss") {
		t.Errorf("on_bar stop_limit alone: %v", err)
	}
}
