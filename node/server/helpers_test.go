package server_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/nodetest"
	"wicket/node/paper"
)

func ds(ss ...string) []decimal.Decimal {
	out := make([]decimal.Decimal, len(ss))
	for i, s := range ss {
		out[i] = testkit.D(s)
	}
	return out
}

// replay is a feed whose marks the test dictates: mark n of a symbol is
// its n-th close (the first is the start).
func replay(closes map[string][]decimal.Decimal) nodetest.Option {
	return nodetest.WithFeed(paper.Feed{Seed: 1, Replay: closes})
}

func order(venue, symbol string, side command.Side, typ command.OrderType, qty, price string) command.Command {
	c := command.Command{Verb: command.SubmitOrder, Venue: venue, Symbol: symbol, Side: side, Type: typ, Quantity: testkit.D(qty)}
	if price != "" {
		c.Price = testkit.D(price)
	}
	return c
}

// send submits c and awaits its outcome. Transport and protocol errors
// fail the test; a rejection is returned as an outcome.
func send(t *testing.T, c *node.Client, cmd command.Command, reason string) node.Outcome {
	t.Helper()
	if err := cmd.Validate(); err != nil {
		t.Fatalf("test command is invalid: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := nodetest.Send(ctx, c, command.NewEnvelope(cmd, reason), 5*time.Second)
	var ne *node.Error
	if err != nil && !(errors.As(err, &ne) && ne.Kind == node.KindRejected) {
		t.Fatalf("send %s: %v", cmd, err)
	}
	return out
}

func accepted(t *testing.T, c *node.Client, cmd command.Command) node.Outcome {
	t.Helper()
	out := send(t, c, cmd, "")
	if out.Status != node.Accepted {
		t.Fatalf("%s: %s (%s): %s", cmd, out.Status, out.Code, out.Reason)
	}
	return out
}

func rejected(t *testing.T, c *node.Client, cmd command.Command, code string) node.Outcome {
	t.Helper()
	out := send(t, c, cmd, "")
	if out.Status != node.Rejected || out.Code != code {
		t.Fatalf("%s: got %s (%s: %s), want rejected with code %s", cmd, out.Status, out.Code, out.Reason, code)
	}
	return out
}

func snapshot(t *testing.T, c *node.Client) *node.Snapshot {
	t.Helper()
	s, err := c.Snapshot(context.Background(), "", 500)
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	return s
}

func venueOf(t *testing.T, s *node.Snapshot, name string) node.Venue {
	t.Helper()
	for _, v := range s.Venues {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("snapshot has no venue %s", name)
	return node.Venue{}
}

func position(v node.Venue, symbol string) (node.Position, bool) {
	for _, p := range v.Positions {
		if p.Symbol == symbol {
			return p, true
		}
	}
	return node.Position{}, false
}

func eq(t *testing.T, what string, got decimal.Decimal, want string) {
	t.Helper()
	if !got.Equal(testkit.D(want)) {
		t.Errorf("%s = %s, want %s", what, got, want)
	}
}
