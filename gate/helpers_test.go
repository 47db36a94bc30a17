package gate_test

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"wicket/gate"
	"wicket/internal/testkit"
)

// epoch is the fake clock's start: a fixed instant, so error texts are stable.
var epoch = time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)

// ids mints canonical uuids in sequence: ...-000000000001, ...-000000000002.
type ids struct {
	mu sync.Mutex
	n  int
}

func (s *ids) Next() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return seqID(s.n)
}

func seqID(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012x", n) }

// newGate returns a gate on a fresh fake clock and sequential ids.
func newGate(opts gate.Options) (*gate.PendingPreviews[gate.Fields], *testkit.Clock) {
	c := testkit.NewClock(epoch)
	opts.Now = c.Now
	if opts.NewID == nil {
		opts.NewID = new(ids).Next
	}
	return gate.New[gate.Fields](opts), c
}

// order is a resolved submit_order as a preview shows it, client id minted.
func order() gate.Fields {
	return gate.Fields{
		gate.Text("venue", "paper"),
		gate.Text("symbol", "BTC-USD"),
		gate.Text("side", "buy"),
		gate.Text("type", "limit"),
		gate.Decimal("quantity", "0.50"),
		gate.Decimal("price", "60000"),
		gate.Text("time_in_force", "gtc"),
		gate.ClientID("client_order_id", "wk-7f3a"),
	}
}

// with returns a copy of f with field name set to value (appended if absent),
// or removed when value is "-".
func with(f gate.Fields, name, value string) gate.Fields {
	out := make(gate.Fields, 0, len(f)+1)
	found := false
	for _, x := range f {
		if x.Name == name {
			found = true
			if value == "-" {
				continue
			}
			x.Value = value
		}
		out = append(out, x)
	}
	if !found && value != "-" {
		out = append(out, gate.Text(name, value))
	}
	return out
}

// kindOf is the gate kind of err, or 0 for nil or a foreign error.
func kindOf(err error) gate.Kind {
	var e *gate.Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}
