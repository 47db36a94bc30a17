package ta_test

import (
	"fmt"

	"wicket/strategy/ta"
)

func ExampleCompute() {
	sma, _ := ta.Builtin().Lookup("sma")
	res, err := ta.Compute(sma, [][]float64{{1, 2, 3, 4, 5}}, []float64{3})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Outputs[0], "first value at", res.Start)
	fmt.Println(sma.Signature(), "warm-up", sma.Warmup, "=", sma.WarmupRule)
	// Output:
	// [NaN NaN 2 3 4] first value at 2
	// ta.sma(series, period=30) warm-up 29 = period - 1
}

func ExampleMemo() {
	m := ta.NewMemo(0)
	ema, _ := ta.Builtin().Lookup("ema")
	close := []float64{1, 2, 3, 4, 5, 6}
	key := m.ValuesKey(close)
	for i := 0; i < 3; i++ {
		m.Compute(ema, [][]float64{close}, []ta.Key{key}, []float64{2})
	}
	fmt.Println("ema computed", m.Stats().Computed["ema"], "time(s) for 3 calls")
	// Output:
	// ema computed 1 time(s) for 3 calls
}
