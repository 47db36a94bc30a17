package deploy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"wicket/internal/project"
	"wicket/strategy"
	"wicket/strategy/scriptapi"
	"wicket/strategy/worker"
)

// resolve checks a spec and makes its deployment, with its warm-up bars
// from the history store and the preview of the checks it passed.
func (r *Runner) resolve(ctx context.Context, spec Spec) (*Deployment, strategy.Bars, *Preview, error) {
	d, err := r.resolveSpec(ctx, spec)
	if err != nil {
		return nil, strategy.Bars{}, nil, err
	}
	bars := strategy.Bars{Series: d.Series}
	if vc, _ := r.cfg.Project.Venue(d.Venue); r.cfg.Candles != nil {
		if err := r.cfg.Candles.Prepare(ctx, vc, d.Series, r.cfg.Now(), max(d.Warmup, 1)); err != nil {
			return nil, strategy.Bars{}, nil, err
		}
	}
	if r.cfg.History != nil {
		if bars, err = r.cfg.History(ctx, d.Series, r.cfg.Now(), max(d.Warmup, 1)); err != nil {
			return nil, strategy.Bars{}, nil, errorf(KindBadRequest, "series %s: its warm-up could not be read from the history store (%v): run wicket data fetch %s", d.Series, err, d.Series)
		}
		bars.Series = d.Series
		if bars.Len() == 0 { // nothing to warm up on or to check with: its decisions could not equal a backtest's
			return nil, strategy.Bars{}, nil, errorf(KindBadRequest, "series %s has no bars in the node's history store before now, so the deployment would have no warm-up and nothing to check it with: record or fetch it first (wicket data fetch %s, or wicket data record %s), then deploy",
				d.Series, d.Series, d.Series)
		}
	}
	if err := r.checkCapital(ctx, d); err != nil {
		return nil, strategy.Bars{}, nil, err
	}
	if bars.Len() > 0 { // the loop's own call, once: what it would refuse at every bar is refused now
		req, err := r.decideRequest(&Deployment{Style: d.Style, Capital: d.Capital, Strategy: d.Strategy, Source: d.Source, Params: d.Params, Series: d.Series}, bars, nil)
		if err != nil {
			return nil, strategy.Bars{}, nil, errorf(KindInternal, "%v", err)
		}
		dec, err := r.cfg.Strategies.Decide(ctx, req)
		if err != nil {
			return nil, strategy.Bars{}, nil, errorf(KindBadRequest, "strategy %s cannot decide over its warm-up bars: %v", d.Strategy, err)
		}
		d.Exits = exitsOf(dec)
		if err := r.checkExits(ctx, d, bars.Close[bars.Len()-1]); err != nil {
			return nil, strategy.Bars{}, nil, err
		}
	}
	pv, err := r.preview(ctx, d, bars)
	if err != nil {
		return nil, strategy.Bars{}, nil, err
	}
	return d, bars, pv, nil
}

// resolveSpec checks a spec and makes its deployment.
func (r *Runner) resolveSpec(ctx context.Context, spec Spec) (*Deployment, error) {
	if err := project.ValidName("strategy", spec.Strategy); err != nil {
		return nil, errorf(KindBadRequest, "strategy %q is not a valid name: use %s", short(spec.Strategy), project.NameRule)
	}
	if strings.TrimSpace(spec.Source) == "" {
		return nil, errorf(KindBadRequest, "strategy %s came without its source: deploy it with wicket deploy, which reads strategies/%s", spec.Strategy, spec.Strategy)
	}
	sym, g, err := strategy.ParseSeries(spec.Series)
	if err != nil {
		return nil, errorf(KindBadRequest, "%v", err)
	}
	vc, ok := r.cfg.Project.Venue(spec.Venue)
	if !ok {
		return nil, errorf(KindBadRequest, "no venue %q on this node: use one of %s (wicket.toml [[venues]])", short(spec.Venue), strings.Join(r.venueNames(), ", "))
	}
	sym, orderSym, err := venueSymbol(vc, spec.Series, sym)
	if err != nil {
		return nil, err
	}
	mode, err := validMode(spec.Mode)
	if err != nil {
		return nil, err
	}
	approval := spec.Approval
	switch {
	case approval == "":
		approval = ApprovalOperator
	case approval != ApprovalOperator && approval != ApprovalElicit:
		return nil, errorf(KindBadRequest, "approval %q: give operator (an operator approves each proposal at a terminal) or elicit (also the person a wicket mcp --approval elicit server asks)", short(approval))
	case approval == ApprovalElicit && mode != ModePropose:
		return nil, errorf(KindBadRequest, "approval elicit is for propose mode, where each order waits for a person; an auto deployment asks nobody: drop approval or deploy with --mode propose")
	}
	if !spec.Capital.IsPositive() {
		return nil, errorf(KindBadRequest, "capital %s: give the allocation the deployment trades in, e.g. --capital 10000", spec.Capital)
	}
	a := spec.Allowance
	if err := checkAllowance(&a); err != nil {
		return nil, err
	}
	gl := r.cfg.Project.Guardrail
	if gl.MaxOrderNotional.IsPositive() && a.MaxOrderNotional != nil && a.MaxOrderNotional.GreaterThan(gl.MaxOrderNotional) {
		return nil, errorf(KindBadRequest, "allowance max_order_notional %s is above the node's guardrail limit of %s: give at most %s (or raise [guardrail] max_order_notional in wicket.toml)",
			a.MaxOrderNotional, gl.MaxOrderNotional, gl.MaxOrderNotional)
	}
	if gl.MaxPositionNotional.IsPositive() && a.MaxPositionNotional != nil && a.MaxPositionNotional.GreaterThan(gl.MaxPositionNotional) {
		return nil, errorf(KindBadRequest, "allowance max_position_notional %s is above the node's guardrail limit of %s: give at most %s (or raise [guardrail] max_position_notional in wicket.toml)",
			a.MaxPositionNotional, gl.MaxPositionNotional, gl.MaxPositionNotional)
	}
	if vc.MaxDailyLoss.IsPositive() && a.MaxDailyLoss != nil && a.MaxDailyLoss.GreaterThan(vc.MaxDailyLoss) {
		return nil, errorf(KindBadRequest, "allowance max_daily_loss %s is above venue %s's own breaker of %s: give at most %s (or raise max_daily_loss in the venue's [[venues]] table of wicket.toml)",
			a.MaxDailyLoss, vc.Name, vc.MaxDailyLoss, vc.MaxDailyLoss)
	}
	if vc.MaxDrawdownPct.IsPositive() && a.MaxDrawdownPct != nil && a.MaxDrawdownPct.GreaterThan(vc.MaxDrawdownPct) {
		return nil, errorf(KindBadRequest, "allowance max_drawdown_pct %s is above venue %s's own breaker of %s%%: give at most %s (or raise max_drawdown_pct in the venue's [[venues]] table of wicket.toml)",
			a.MaxDrawdownPct, vc.Name, vc.MaxDrawdownPct, vc.MaxDrawdownPct)
	}
	if spec.Warmup < 0 || spec.Warmup > MaxEvalBars {
		return nil, errorf(KindBadRequest, "warm-up %d: give 0 (the strategy's own) up to %d bars", spec.Warmup, MaxEvalBars)
	}
	if mode == ModeAuto && vc.Real() {
		armed, err := r.venueArmed(ctx, vc.Name)
		if err != nil {
			return nil, errorf(KindInternal, "venue %s's arming could not be read from the node: %v", vc.Name, err)
		}
		if !armed {
			return nil, errorf(KindForbidden, "venue %s is a real venue and is disarmed, so an auto deployment could send nothing: an operator arms it first (wicket node arm %s), or deploy with --mode propose",
				vc.Name, vc.Name)
		}
	}
	req := worker.StrategyRequest{Name: spec.Strategy, Source: spec.Source, IndicatorsDir: r.cfg.IndicatorsDir, Overrides: spec.Params}
	rep, err := r.cfg.Strategies.Validate(ctx, req)
	if err != nil {
		return nil, errorf(KindBadRequest, "strategy %s could not be validated: %v", spec.Strategy, err)
	}
	if !rep.Valid {
		var msgs []string
		for _, p := range rep.Problems {
			msgs = append(msgs, fmt.Sprintf("line %d: %s", p.Line, p.Message))
		}
		return nil, errorf(KindBadRequest, "strategy %s fails validation (%s): fix it and run wicket strategy validate %s before deploying", spec.Strategy, strings.Join(msgs, "; "), spec.Strategy)
	}
	if rep.Style != scriptapi.StyleSignals && rep.Style != scriptapi.StyleOnBar {
		return nil, errorf(KindBadRequest, "strategy %s is a %s strategy; a deployment runs signals(bars) and on_bar strategies of one series: deploy one of those", spec.Strategy, rep.Style)
	}
	warm := spec.Warmup
	if warm > 0 && warm < rep.Warmup {
		return nil, errorf(KindBadRequest, "warm-up %d is shorter than the %d bars strategy %s needs before every indicator has a value: give --warmup %d or more (or 0 for its own)",
			warm, rep.Warmup, spec.Strategy, rep.Warmup)
	}
	if warm == 0 {
		warm = max(rep.Warmup, DefaultWarmup)
	}
	sum := sha256.Sum256([]byte(spec.Source))
	now := r.cfg.Now().UTC()
	params := spec.Params
	if len(params) == 0 {
		params = nil
	}
	d := &Deployment{ID: IDPrefix + r.cfg.NewID(), Strategy: spec.Strategy, StrategyHash: hex.EncodeToString(sum[:]), Source: spec.Source,
		Params: params, Series: sym + "@" + string(g), Symbol: orderSym, Venue: vc.Name, Mode: mode, Capital: spec.Capital, Allowance: a,
		Approval: approval, CreatedBy: spec.CreatedBy,
		Warmup: warm, Style: string(rep.Style), State: StateRunning, Created: now, Updated: now,
		Cash: spec.Capital, Equity: spec.Capital, Peak: spec.Capital}
	return d, nil
}

// venueSymbol is series' symbol sym as wicket writes it and as venue vc
// lists it, or the refusal naming the fix when vc does not list it.
func venueSymbol(vc project.Venue, series, sym string) (canonical, listed string, err error) {
	if canon, err := vc.Instruments().Canonical(sym); err == nil {
		sym = canon // the series as wicket writes it: BTCUSDT@1m on a binance venue is BTC-USD@1m, the series data fetch fills
	}
	orderSym := sym // the series' symbol as the venue lists it: BTC-USD or BTCUSDT names a listed BTCUSDT or BTC-USD
	if len(vc.Symbols) > 0 && !contains(vc.Symbols, sym) {
		l, ok := vc.Resolve(sym)
		if !ok {
			return "", "", errorf(KindBadRequest, "series %s is unknown to venue %s, which trades %s: pick one of those symbols, or add %s to the venue's symbols in wicket.toml",
				series, vc.Name, strings.Join(vc.Symbols, ", "), sym)
		}
		orderSym = l
	}
	return sym, orderSym, nil
}

// checkCapital refuses a capital above what the venue holds (its equity
// as the node reads it): the deployment would size orders for money the
// account does not have.
func (r *Runner) checkCapital(ctx context.Context, d *Deployment) error {
	snap, err := r.cfg.Node.Snapshot(ctx, d.Venue, 0)
	if err != nil {
		return errorf(KindInternal, "venue %s's account could not be read from the node to check the capital against it: %v", d.Venue, err)
	}
	for _, v := range snap.Venues {
		if v.Name == d.Venue && d.Capital.GreaterThan(v.Equity) {
			return errorf(KindBadRequest, "capital %s is more than venue %s holds (equity %s %s): give at most %s (a deployment trades a share of its venue's account)",
				d.Capital, d.Venue, v.Equity.StringFixed(2), v.Currency, v.Equity.StringFixed(2))
		}
	}
	return nil
}

func (r *Runner) venueNames() []string {
	var out []string
	for _, v := range r.cfg.Project.Venues {
		out = append(out, v.Name)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// venueArmed reads whether the node has venue armed now.
func (r *Runner) venueArmed(ctx context.Context, venue string) (bool, error) {
	snap, err := r.cfg.Node.Snapshot(ctx, venue, 0)
	if err != nil {
		return false, err
	}
	for _, v := range snap.Venues {
		if v.Name == venue {
			return v.Armed, nil
		}
	}
	return false, fmt.Errorf("the node does not show venue %s", venue)
}
