package research

import (
	"wicket/internal/project"
	"wicket/strategy/backtest"
	"wicket/strategy/history"
)

// BorrowDefault gives o the project's borrow rate for series' symbol
// ([research] borrow_rates in wicket.toml) when o names none.
func BorrowDefault(r project.Research, series string, o *backtest.CostOptions) {
	if o.BorrowRate != nil || len(r.BorrowRates) == 0 {
		return
	}
	sym, _, err := history.CheckSeries(series)
	if err != nil {
		return // the series is refused where it is checked
	}
	if v, ok := r.BorrowRates[sym]; ok {
		o.BorrowRate = &v
	}
}

// FundingDefault makes c's funding what a run charges when it names none:
// off. Perpetual funding belongs to a perpetual; the store's series are
// spot bars, which hold their rates only because the pair's perpetual
// funding was fetched beside them, so a run charges funding only when it
// asks (Funding true, or FundingAuto: on when the store holds the rates).
func FundingDefault(c *Costs) {
	if c.Funding == nil && !c.FundingAuto {
		off := false
		c.Funding = &off
	}
}
