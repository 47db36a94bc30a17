package binancefuturesfake

import (
	"time"

	"github.com/shopspring/decimal"
)

// SettleFunding settles one funding round of symbol at rate, as the
// venue does at each funding time (Binance's "Funding Rate" page: funding
// amount = position size × mark price × funding rate, longs paying a
// positive rate to shorts): the position pays its amount × the mark price
// now × rate, booked into the wallet and the income history as a
// FUNDING_FEE at at, in the 8 decimals the venue writes income with. The
// rate becomes the one premiumIndex shows. Without a position nothing is
// paid. It returns the amount booked (received positive) and its tranId,
// 0 when none was booked.
func (f *Fake) SettleFunding(symbol, rate string, at time.Time) (decimal.Decimal, int64) {
	f.mu.Lock()
	s, p := f.symbols[symbol], f.positions[symbol]
	s.FundingRate = rate
	amt := p.Amount.Mul(decimal.RequireFromString(s.Price)).Mul(decimal.RequireFromString(rate)).Neg().Round(8)
	f.mu.Unlock()
	if amt.IsZero() {
		return decimal.Zero, 0
	}
	return amt, f.AddFunding(symbol, amt.String(), at)
}

// Commissions is the commission, in USDT, of every trade of symbol.
func (f *Fake) Commissions(symbol string) decimal.Decimal {
	f.mu.Lock()
	defer f.mu.Unlock()
	var sum decimal.Decimal
	for _, t := range f.trades {
		if t.symbol == symbol {
			sum = sum.Add(t.commission)
		}
	}
	return sum
}
