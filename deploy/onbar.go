package deploy

import (
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/strategy"
	"wicket/strategy/scriptapi"
	"wicket/strategy/worker"
)

// on_bar strategies. An on_bar strategy's ctx reads its account (position,
// cash, equity); a deployment's is its own share of the venue's account,
// as booked from its fills. Each evaluation steps on_bar through the
// warm-up and the bars after it with the account the deployment had at
// each bar's close (journaled with the bar; the capital, flat, before the
// deployment began), as a backtest steps it with its own account, so
// on_bar's state and its intent at the bar decided are the backtest's
// when the fills are. Its intents become orders as a signals strategy's
// targets do: ctx.target and ctx.flat a target, ctx.buy and ctx.sell a
// quantity, each with the exits it attaches.

// decideRequest is the worker's request for d's decision at the last of
// bars; now, for an on_bar strategy, is its account at that bar (nil:
// the journaled one).
func (r *Runner) decideRequest(d *Deployment, bars strategy.Bars, now *Account) (worker.DecideRequest, error) {
	req := worker.DecideRequest{
		StrategyRequest: worker.StrategyRequest{Name: d.Strategy, Source: d.Source, IndicatorsDir: r.cfg.IndicatorsDir, Overrides: d.Params},
		Series:          d.Series, Bars: bars.Encode()}
	n := bars.Len()
	if d.Style != string(scriptapi.StyleOnBar) || n == 0 {
		return req, nil
	}
	var stored map[int64]Account
	if d.ID != "" && r.cfg.Store != nil {
		var err error
		if stored, err = r.cfg.Store.Accounts(d.ID, time.Unix(bars.Time[0], 0)); err != nil {
			return req, err
		}
	}
	f := func(v decimal.Decimal) float64 { x, _ := v.Float64(); return x }
	cur := worker.Account{Cash: f(d.Capital), Equity: f(d.Capital)}
	req.Accounts = make([]worker.Account, n)
	for i, t := range bars.Time {
		if a, ok := stored[t]; ok {
			cur = worker.Account{Position: f(a.Position), Cash: f(a.Cash), Equity: f(a.Equity)}
		}
		req.Accounts[i] = cur // a bar missed carries the account before it
	}
	if now != nil {
		req.Accounts[n-1] = worker.Account{Position: f(now.Position), Cash: f(now.Cash), Equity: f(now.Equity)}
	}
	return req, nil
}

// changed reports whether dec asks d for an order: a new target, or a
// quantity.
func changed(d *Deployment, dec worker.Decision) bool {
	switch {
	case dec.HasQty:
		return dec.Qty != 0
	case dec.HasTarget:
		return d.NoTarget || dec.Target != d.Target
	}
	return false
}

// order is the signed quantity dec asks d to trade at price px: a
// target sized as the backtest sizes it; a quantity as asked, held by the
// same sizing limits (size, through the target that quantity reaches;
// within one quantity step it is the quantity asked).
func (r *Runner) order(d *Deployment, vc project.Venue, dec worker.Decision, px, step decimal.Decimal) decimal.Decimal {
	if !dec.HasQty {
		return r.size(d, vc, dec.Target, px, step)
	}
	want := decimal.NewFromFloat(dec.Qty)
	eq := d.Cash.Add(d.Position.Mul(px))
	if !eq.IsPositive() || !px.IsPositive() {
		return decimal.Zero
	}
	one := decimal.NewFromInt(1)
	sizing := one.Add(decimal.NewFromFloat(vc.SlippageBps).Shift(-4)).Mul(one.Add(decimal.NewFromFloat(vc.FeeBps).Shift(-4)))
	target, _ := d.Position.Add(want).Mul(px).Mul(sizing).DivRound(eq, 16).Float64()
	got := r.size(d, vc, target, px, step)
	unit := step
	if !unit.IsPositive() {
		unit = decimal.New(1, -vc.QuantityDecimals)
	}
	if got.Sub(want).Abs().LessThanOrEqual(unit) {
		if step.IsPositive() {
			return want.Div(step).Truncate(0).Mul(step)
		}
		return want.Truncate(vc.QuantityDecimals)
	}
	return got
}
