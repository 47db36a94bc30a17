package script_test

import (
	"context"
	"fmt"

	"wicket/strategy"
	"wicket/strategy/script"
)

func Example() {
	src := `"""Long above the 3-bar average."""
n = param.int("n", 3, min=2, max=50, doc="average length")

def signals(bars):
    avg = ta.sma(bars.close, n)
    return {"long": bars.close > avg, "exit": bars.close < avg}
`
	ctx := context.Background()
	s, err := script.Load(ctx, script.Source{Name: "above.star", Text: src}, script.Options{Overrides: map[string]any{"n": 2}})
	if err != nil {
		fmt.Println(err)
		return
	}
	bars := strategy.Bars{
		Time:  []int64{1, 2, 3, 4, 5},
		Close: []float64{10, 11, 12, 11, 10},
		Open:  make([]float64, 5), High: make([]float64, 5), Low: make([]float64, 5), Volume: make([]float64, 5),
	}
	sig, err := s.Signals(ctx, bars)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Style(), s.Summary(), s.Values()["n"])
	fmt.Println("long:", sig.Long)
	fmt.Println("exit:", sig.Exit)
	fmt.Println("warm-up:", s.Warmup())
	// Output:
	// signals Long above the 3-bar average. 2
	// long: [false true true false false]
	// exit: [false false false true true]
	// warm-up: 1
}

func ExampleValidate() {
	src := "def signals(bars):\n    return {\"long\": bars.close[-1] > bars.close[0]}\n"
	rep := script.Validate(context.Background(), script.Source{Name: "peek.star", Text: src}, script.Options{})
	for _, p := range rep.Problems {
		fmt.Printf("%s:%d:%d: %s\n", p.File, p.Line, p.Column, p.Kind)
	}
	// Output:
	// peek.star:2:31: lookahead
}
