package gate_test

import (
	"testing"

	"wicket/gate"
)

// BenchmarkIssueTake measures one preview and its confirm: Issue, then Take
// with the confirming command (client id omitted, quantity spelled another
// way), on the default clock and random ids.
func BenchmarkIssueTake(b *testing.B) {
	g := gate.New[gate.Fields](gate.Options{})
	stored := order()
	confirming := with(with(order(), "client_order_id", "-"), "quantity", "0.5")
	issueTakeLoop(b, g, stored, confirming)
}

// BenchmarkIssueTakeBusy is BenchmarkIssueTake with 1,000 other previews
// outstanding and the remembered set full.
func BenchmarkIssueTakeBusy(b *testing.B) {
	g := gate.New[gate.Fields](gate.Options{Max: 1001})
	for range 1000 {
		if _, _, err := g.Issue("submit_order", order()); err != nil {
			b.Fatal(err)
		}
	}
	stored := order()
	for range gate.DefaultMaxRemembered {
		tok, _, _ := g.Issue("submit_order", stored)
		g.Take("submit_order", tok, stored)
	}
	confirming := with(with(order(), "client_order_id", "-"), "quantity", "0.5")
	issueTakeLoop(b, g, stored, confirming)
}

// BenchmarkIssueTakeParallel runs Issue+Take from GOMAXPROCS goroutines on
// one gate, to show the cost of its single lock under contention.
func BenchmarkIssueTakeParallel(b *testing.B) {
	g := gate.New[gate.Fields](gate.Options{})
	stored := order()
	confirming := with(order(), "client_order_id", "-")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			tok, _, err := g.Issue("submit_order", stored)
			if err != nil {
				b.Error(err)
				return
			}
			if _, err := g.Take("submit_order", tok, confirming); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// issueTakeLoop times one Issue and one confirming Take per iteration.
func issueTakeLoop(b *testing.B, g *gate.PendingPreviews[gate.Fields], stored, confirming gate.Fields) {
	b.ReportAllocs()
	for b.Loop() {
		tok, _, err := g.Issue("submit_order", stored)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := g.Take("submit_order", tok, confirming); err != nil {
			b.Fatal(err)
		}
	}
}
