package venuefee_test

import (
	"errors"
	"testing"

	"github.com/shopspring/decimal"

	"wicket/node/venuefee"
)

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// TestLedgerBooksEachTradeOnce: a trade learned twice (a stream message,
// then a read) counts once; a read is made only while the booked trades
// cover less than the order filled; a fee in another asset is kept in it.
func TestLedgerBooksEachTradeOnce(t *testing.T) {
	var l venuefee.Ledger
	l.Book(7, venuefee.Trade{ID: 1, Quantity: d("0.1"), Fee: d("2.4")})
	l.Book(7, venuefee.Trade{ID: 1, Quantity: d("0.1"), Fee: d("2.4")})
	reads := 0
	read := func() ([]venuefee.Trade, error) {
		reads++
		return []venuefee.Trade{{ID: 1, Quantity: d("0.1"), Fee: d("2.4")}, {ID: 2, Quantity: d("0.2"), Asset: "BNB", Other: d("0.001")}}, nil
	}
	if err := l.Cover(7, d("0.1"), read); err != nil || reads != 0 {
		t.Fatalf("covered already: %d reads, %v", reads, err)
	}
	if err := l.Cover(7, d("0.3"), read); err != nil || reads != 1 {
		t.Fatalf("short of the fill: %d reads, %v", reads, err)
	}
	if err := l.Cover(7, d("0.3"), read); err != nil || reads != 1 {
		t.Fatalf("covered after the read: %d reads, %v", reads, err)
	}
	fee, asset, other := l.Of(7)
	if !fee.Equal(d("2.4")) || asset != "BNB" || !other.Equal(d("0.001")) {
		t.Errorf("order 7: %s, %s %s", fee, other, asset)
	}
	if fee, asset, other := l.Of(8); !fee.IsZero() || asset != "" || !other.IsZero() {
		t.Errorf("an order never booked: %s, %s %s", fee, other, asset)
	}
	boom := errors.New("venue down")
	if err := l.Cover(9, d("1"), func() ([]venuefee.Trade, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("a failed read: %v", err)
	}
}
