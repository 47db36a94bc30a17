package alpaca

import (
	"context"

	"wicket/node"
)

// Clock is Alpaca's market clock (GET /v2/clock): whether the equity
// market is open, and when it next opens and closes. The node reads it
// for [risk] market_hours.
func (a *Adapter) Clock(_ context.Context) (node.MarketClock, error) {
	c, err := a.c.GetClock()
	if err != nil {
		return node.MarketClock{}, a.classify(err)
	}
	return node.MarketClock{Open: c.IsOpen, NextOpen: c.NextOpen, NextClose: c.NextClose, Read: c.Timestamp}, nil
}

// InSession reports whether symbol trades only in the market's sessions:
// equities do; crypto pairs (BTC-USD) trade around the clock.
func (a *Adapter) InSession(symbol string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return !a.crypto[symbol]
}
