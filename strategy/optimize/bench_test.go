package optimize

import "testing"

// BenchmarkAskTell measures an optimiser's own cost per trial (ask, then
// tell a cheap objective) after a 200-trial history, in trials/s, to set
// against a sweep's combinations/s. The planted space holds 5,106 points,
// which a long run would exhaust (an optimiser asks no point twice): every
// 2,000 trials it starts again from a fresh 200-trial history, off the
// clock.
func BenchmarkAskTell(b *testing.B) {
	s := plantedSpace(b)
	const history, rounds = 200, 2000
	for _, m := range Methods {
		b.Run(m, func(b *testing.B) {
			var o Optimizer
			step := func() {
				ps := o.Ask(1)
				if len(ps) == 0 {
					b.Fatal("no point")
				}
				if err := o.Tell(ps[0], planted(ps[0])); err != nil {
					b.Fatal(err)
				}
			}
			fresh := func() {
				b.StopTimer()
				var err error
				if o, err = New(m, s, 1); err != nil {
					b.Fatal(err)
				}
				for range history {
					step()
				}
				b.StartTimer()
			}
			b.ResetTimer()
			for i := range b.N {
				if i%rounds == 0 {
					fresh()
				}
				step()
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "trials/s")
		})
	}
}
