package optimize

import "testing"

// BenchmarkAskTell measures an optimiser's own cost per trial (ask, then
// tell a cheap objective) after a 200-trial history, in trials/s, to set
// against a sweep's combinations/s.
func BenchmarkAskTell(b *testing.B) {
	s := plantedSpace(b)
	for _, m := range Methods {
		b.Run(m, func(b *testing.B) {
			o, err := New(m, s, 1)
			if err != nil {
				b.Fatal(err)
			}
			tell := func(n int) {
				for range n {
					ps := o.Ask(1)
					if len(ps) == 0 {
						b.Fatal("no point")
					}
					if err := o.Tell(ps[0], planted(ps[0])); err != nil {
						b.Fatal(err)
					}
				}
			}
			tell(200)
			b.ResetTimer()
			tell(b.N)
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "trials/s")
		})
	}
}
