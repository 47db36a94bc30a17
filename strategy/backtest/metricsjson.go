package backtest

import (
	"encoding/json"
	"math"
	"strconv"
	"time"

	"github.com/shopspring/decimal"
)

// The metrics' JSON written directly: a sweep writes it once a
// combination, and json.Marshal's reflection and the decimal package's
// big integers were a twentieth of a combination's cost at 17,544 bars.
// The bytes are json.Marshal's of Reported (TestMetricsJSONIsMarshal) and
// the money strings Money's through decimal (TestMoneyIsDecimal).

// appendMetricsJSON appends m's JSON as json.Marshal writes Reported's,
// without its pointers and strings on the heap, or reports false where a
// value needs what it does not do (a string to escape, a number JSON
// cannot hold): json.Marshal then writes it, or says why not.
func appendMetricsJSON(b []byte, m *Metrics) ([]byte, bool) {
	ok := true
	ratio := func(name string, x float64) {
		b = append(b, name...)
		r, defined := ratioOf(x)
		if !defined {
			b = append(b, "null"...)
			return
		}
		var good bool
		b, good = appendJSONFloat(b, r)
		ok = ok && good
	}
	cash := func(name string, x float64) {
		b = append(b, name...)
		b = append(b, '"')
		b = appendMoney(b, x)
		b = append(b, '"')
	}
	cashOrNull := func(name string, x float64) {
		if math.IsNaN(x) {
			b = append(b, name...)
			b = append(b, "null"...)
			return
		}
		cash(name, x)
	}
	when := func(name string, t time.Time) {
		b = append(b, name...)
		b = append(b, '"')
		n := len(b)
		b = t.UTC().AppendFormat(b, time.RFC3339)
		for _, c := range b[n:] {
			if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
				ok = false
			}
		}
		b = append(b, '"')
	}
	integer := func(name string, n int) {
		b = append(b, name...)
		b = strconv.AppendInt(b, int64(n), 10)
	}
	ratio(`{"total_return":`, m.TotalReturn)
	ratio(`,"cagr":`, Bounded(m.CAGR))
	ratio(`,"sharpe":`, Bounded(m.Sharpe))
	ratio(`,"sortino":`, Bounded(m.Sortino))
	ratio(`,"max_drawdown":`, m.MaxDrawdown)
	integer(`,"max_drawdown_duration_bars":`, m.MaxDrawdownBars)
	ratio(`,"max_drawdown_duration_days":`, m.MaxDrawdownDuration.Hours()/24)
	ratio(`,"calmar":`, Bounded(m.Calmar))
	ratio(`,"win_rate":`, m.WinRate)
	ratio(`,"profit_factor":`, m.ProfitFactor)
	cashOrNull(`,"expectancy":`, m.Expectancy)
	integer(`,"trades":`, m.Trades)
	ratio(`,"exposure":`, m.Exposure)
	cash(`,"fees_paid":`, m.FeesPaid)
	cash(`,"slippage_cost":`, m.SlippageCost)
	if m.Charged&ChargedFunding != 0 && !math.IsNaN(m.FundingPaid) {
		cash(`,"funding_paid":`, m.FundingPaid)
	}
	if m.Charged&ChargedBorrow != 0 && !math.IsNaN(m.BorrowPaid) {
		cash(`,"borrow_paid":`, m.BorrowPaid)
	}
	if m.Charged&ChargedMargin != 0 {
		integer(`,"liquidations":`, m.Liquidations)
	}
	if m.Charged&ChargedVolume != 0 {
		integer(`,"volume_capped_fills":`, m.VolumeCappedFills)
	}
	cash(`,"final_equity":`, m.FinalEquity)
	integer(`,"bars":`, m.Bars)
	when(`,"start":`, m.Start)
	when(`,"end":`, m.End)
	b = append(b, `,"periods_per_year":`...)
	var good bool
	b, good = appendJSONFloat(b, m.PeriodsPerYear)
	ok = ok && good
	ratio(`,"buy_and_hold_return":`, m.BuyAndHoldReturn)
	b = append(b, '}')
	return b, ok
}

// appendJSONFloat appends x as encoding/json writes a float64, or reports
// false for a NaN or an infinity, which it refuses.
func appendJSONFloat(b []byte, x float64) ([]byte, bool) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return b, false
	}
	format := byte('f')
	if a := math.Abs(x); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, x, format, -1, 64)
	if format == 'e' {
		// e-09 is written e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

// appendMoney appends Money(x): x's shortest decimal form
// (decimal.NewFromFloat's) rounded half away from zero to moneyPlaces
// (StringFixed's), from strconv's digits rather than through big
// integers. A NaN or an infinity goes to decimal, which refuses it as
// Money always did.
func appendMoney(b []byte, x float64) []byte {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return append(b, decimal.NewFromFloat(x).StringFixed(moneyPlaces)...)
	}
	var buf [32]byte
	// d.ddddde±XX: the shortest digits that read back as x.
	e := strconv.AppendFloat(buf[:0], math.Abs(x), 'e', -1, 64)
	var digits [24]byte
	nd, i := 0, 0
	for ; e[i] != 'e'; i++ {
		if e[i] != '.' {
			digits[nd] = e[i]
			nd++
		}
	}
	exp, _ := strconv.Atoi(string(e[i+1:])) // x = d.ddd × 10^exp
	// x is 0.digits × 10^(exp+1). Keep the digits down to the hundredths,
	// as an integer of hundredths, rounding on the first digit dropped.
	// At most 309 digits before the point, and 2 after.
	var store [320]byte
	cents := store[1:1]           // the hundredths' digits, most significant first; store[0] for a carry out
	keep := exp + 1 + moneyPlaces // digits kept, from the first
	up := false
	switch {
	case keep <= 0:
		// every digit dropped: half a hundredth or more only where the
		// first is 5 or more right after the hundredths
		up = keep == 0 && digits[0] >= '5'
	case keep >= nd:
		cents = append(cents, digits[:nd]...)
		for range keep - nd {
			cents = append(cents, '0')
		}
	default:
		cents = append(cents, digits[:keep]...)
		up = digits[keep] >= '5'
	}
	if up {
		j := len(cents) - 1
		for ; j >= 0 && cents[j] == '9'; j-- {
			cents[j] = '0'
		}
		if j >= 0 {
			cents[j]++
		} else {
			store[0] = '1'
			cents = store[:len(cents)+1]
		}
	}
	zero := true
	for _, c := range cents {
		if c != '0' {
			zero = false
			break
		}
	}
	if x < 0 && !zero {
		b = append(b, '-')
	}
	if whole := len(cents) - moneyPlaces; whole > 0 {
		b = append(b, cents[:whole]...)
		b = append(b, '.')
		return append(b, cents[whole:]...)
	}
	// below one: 0.0d or 0.dd
	b = append(b, "0."...)
	for range moneyPlaces - len(cents) {
		b = append(b, '0')
	}
	return append(b, cents...)
}

// marshalMetrics is Metrics' MarshalJSON.
func marshalMetrics(m Metrics) ([]byte, error) {
	if b, ok := appendMetricsJSON(make([]byte, 0, 768), &m); ok {
		return b, nil
	}
	return json.Marshal(m.Reported())
}
