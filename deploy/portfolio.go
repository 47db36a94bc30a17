package deploy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/node/command"
	"wicket/strategy"
	"wicket/strategy/backtest"
	"wicket/strategy/book"
	"wicket/strategy/portfolio"
	"wicket/strategy/research"
	"wicket/strategy/scriptapi"
	"wicket/strategy/worker"
)

// Portfolio deployments. A strategy that declares a universe deploys as
// one deployment over its assets (its legs), trading each asset's symbol
// from one capital: at every closed calendar bar (the union of the
// assets' bar times, as the backtest's calendar) the worker decides the
// weights by the portfolio backtest's decision function over the legs'
// warm-up and live bars, portfolio.Schedule (the engine's own rule) says
// which assets take their weight there (the rebalance schedule, and the
// calendar rule: an asset without a bar at t does not trade at t), and
// each new weight becomes an order for that asset sized as the engine
// sizes it on the equity at the close, clipped by the allowance (whose
// sizing limits apply per symbol, its order count and breakers to the
// whole deployment), through the node's one write path.

// Leg is one asset of a portfolio deployment.
type Leg struct {
	Series string `json:"series"` // SYMBOL@GRAN as wicket writes it
	Symbol string `json:"symbol"` // as the venue lists it
	// Position, EntryQty and EntryValue are the leg's holding and its
	// round trip's increases, booked from its fills by the one book.
	Position   decimal.Decimal `json:"position"`
	EntryQty   decimal.Decimal `json:"entry_qty,omitzero"`
	EntryValue decimal.Decimal `json:"entry_value,omitzero"`
	Mark       decimal.Decimal `json:"mark,omitzero"` // its last close
	// Weight is the target weight it last took (HasWeight false: none
	// yet); Value its position at its mark.
	Weight    float64         `json:"weight"`
	HasWeight bool            `json:"has_weight,omitempty"`
	Value     decimal.Decimal `json:"value"`
	LastBar   time.Time       `json:"last_bar,omitzero"` // its last bar
	// Late counts its bars that arrived after their calendar bar was
	// decided without them (recorded, never traded late; counted in the
	// deployment's missed bars too), and LateNote says why the last one
	// was (portfolio_loop.go).
	Late     int    `json:"late_bars,omitempty"`
	LateNote string `json:"late_note,omitempty"`
	// LateAt are the times of its latest late bars (at most maxLateKept):
	// the report replays the decision at each without it, as live made it.
	LateAt []int64 `json:"late_at,omitempty"`
}

// maxLateKept bounds Leg.LateAt.
const maxLateKept = 64

// PortfolioStrategies is what runs a portfolio strategy's decision in a
// worker (*worker.Pool is one).
type PortfolioStrategies interface {
	DecidePortfolio(ctx context.Context, req worker.PortfolioDecideRequest) (worker.PortfolioDecision, error)
}

// portfolioOf describes spec's strategy when it declares a universe (ok),
// asking a worker; a strategy of one series is not one (ok false, no
// error).
func (r *Runner) portfolioOf(ctx context.Context, spec Spec) (worker.PortfolioDecision, bool, error) {
	ps, ok := r.cfg.Strategies.(PortfolioStrategies)
	if !ok || strings.TrimSpace(spec.Source) == "" || !declaresUniverse(spec.Source) {
		return worker.PortfolioDecision{}, false, nil
	}
	desc, err := ps.DecidePortfolio(ctx, worker.PortfolioDecideRequest{StrategyRequest: r.strategyRequest(spec.Strategy, spec.Source, spec.Params)})
	if err != nil {
		var we *worker.Error
		if errors.As(err, &we) && strings.Contains(we.Msg, "declares no universe") {
			return worker.PortfolioDecision{}, false, nil
		}
		return worker.PortfolioDecision{}, true, errorf(KindBadRequest, "strategy %s could not be loaded: %v (run wicket strategy validate %s)", spec.Strategy, err, strings.TrimSuffix(spec.Strategy, ".star"))
	}
	return desc, true, nil
}

// declaresUniverse is a cheap first look before a worker is asked: a
// portfolio strategy assigns universe at top level.
func declaresUniverse(src string) bool {
	for _, line := range strings.Split(src, "\n") {
		if rest, ok := strings.CutPrefix(line, "universe"); ok && strings.HasPrefix(strings.TrimSpace(rest), "=") {
			return true
		}
	}
	return false
}

func (r *Runner) strategyRequest(name, src string, params map[string]any) worker.StrategyRequest {
	return worker.StrategyRequest{Name: name, Source: src, IndicatorsDir: r.cfg.IndicatorsDir, Overrides: params}
}

// resolvePortfolio checks a portfolio strategy's spec and makes its
// deployment, with each leg's warm-up bars. Every refusal names the fix.
func (r *Runner) resolvePortfolio(ctx context.Context, spec Spec, desc worker.PortfolioDecision) (*Deployment, []strategy.Bars, error) {
	vc, ok := r.cfg.Project.Venue(spec.Venue)
	if !ok {
		return nil, nil, errorf(KindBadRequest, "no venue %q on this node: use one of %s (wicket.toml [[venues]])", short(spec.Venue), strings.Join(r.venueNames(), ", "))
	}
	series, err := universeSeries(desc.Universe, vc)
	if err != nil {
		return nil, nil, err
	}
	label := strings.Join(series, ",")
	if s := strings.TrimSpace(spec.Series); s != "" && s != label && s != "universe" {
		return nil, nil, errorf(KindBadRequest, "strategy %s is a portfolio strategy trading its universe %s, not series %s: give --series %s (or leave the series out)",
			spec.Strategy, label, short(s), label)
	}
	if _, err := portfolio.ParseRebalance(desc.Rebalance); err != nil {
		return nil, nil, errorf(KindBadRequest, "strategy %s: %v", spec.Strategy, err)
	}
	// The checks of a deployment of one series (name, venue, mode,
	// capital, allowance within the guardrail, warm-up, arming,
	// validation), run with the universe's first series.
	one := spec
	one.Series = series[0]
	d, err := r.resolveSpec(ctx, one)
	if err != nil {
		return nil, nil, err
	}
	d.Warmup = max(d.Warmup, desc.Warmup)
	d.Series, d.Symbol, d.Rebalance = label, "", desc.Rebalance
	d.Legs = make([]Leg, len(series))
	for k, s := range series {
		sym, _, _ := strategy.ParseSeries(s)
		canon, listed, err := venueSymbol(vc, s, sym)
		if err != nil {
			return nil, nil, err
		}
		_, g, _ := strategy.ParseSeries(s)
		d.Legs[k] = Leg{Series: canon + "@" + string(g), Symbol: listed}
	}
	bars := make([]strategy.Bars, len(d.Legs))
	for k, leg := range d.Legs {
		bars[k] = strategy.Bars{Series: leg.Series}
		if r.cfg.Candles != nil { // a venue whose candles the node records: each leg's stream and warm-up, as for one series
			if err := r.cfg.Candles.Prepare(ctx, vc, leg.Series, r.cfg.Now(), max(d.Warmup, 1)); err != nil {
				return nil, nil, err
			}
		}
		if r.cfg.History == nil {
			continue
		}
		if bars[k], err = r.cfg.History(ctx, leg.Series, r.cfg.Now(), max(d.Warmup, 1)); err != nil {
			return nil, nil, errorf(KindBadRequest, "series %s: its warm-up could not be read from the history store (%v): run wicket data fetch %s", leg.Series, err, leg.Series)
		}
		bars[k].Series = leg.Series
		if bars[k].Len() == 0 {
			return nil, nil, errorf(KindBadRequest, "series %s of the universe has no bars in the node's history store before now, so the deployment would have no warm-up for it: fetch or record it first (wicket data fetch %s), then deploy",
				leg.Series, leg.Series)
		}
	}
	if err := r.checkCapital(ctx, d); err != nil {
		return nil, nil, err
	}
	if bars[0].Len() > 0 { // the loop's own call, once: what it would refuse at every bar is refused now
		if _, err := r.decidePortfolio(ctx, d, bars); err != nil {
			return nil, nil, errorf(KindBadRequest, "strategy %s cannot decide over its warm-up bars: %v", d.Strategy, err)
		}
	}
	pv, err := r.portfolioPreview(ctx, d, bars)
	if err != nil {
		return nil, nil, err
	}
	d.Preview = pv
	return d, bars, nil
}

// portfolioPreview is what a portfolio deployment's checks found: the
// start-point check of its decisions over the legs' warm-up bars
// (portfolio_startpoint.go), which refuses a warm-up its decisions
// still depend on the start of, and the portfolio backtest over the last
// year of its universe (or what the history store holds) with its
// capital and the venue's fee and slippage, whose failed lookahead proof
// refuses the deployment (as for one series: preview.go). Without
// Research, as for one series, neither runs.
func (r *Runner) portfolioPreview(ctx context.Context, d *Deployment, bars []strategy.Bars) (*Preview, error) {
	pv := &Preview{}
	if r.cfg.Research == nil {
		return pv, nil
	}
	if len(bars) > 0 && bars[0].Len() > 0 {
		sp, refusal, err := r.portfolioStartPoint(ctx, d, bars)
		if err != nil {
			return nil, errorf(KindBadRequest, "strategy %s: %v", d.Strategy, err)
		}
		pv.StartPoint = &sp
		if refusal != "" {
			return nil, errorf(KindBadRequest, "%s", refusal)
		}
	}
	var err error
	pv.Backtest, pv.Lookahead, err = r.backtest(ctx, d, research.StrategyRef{Source: d.Source, Label: d.Strategy})
	if err != nil {
		return nil, err
	}
	return pv, nil
}

// universeSeries resolves a declared universe against venue vc: names
// as written, patterns against the symbols vc lists (a deployment trades
// only what its venue lists). More than scriptapi.MaxUniverse is refused.
func universeSeries(universe []string, vc project.Venue) ([]string, error) {
	var out []string
	for _, e := range universe {
		if !scriptapi.UniversePattern(e) {
			if !contains(out, e) {
				out = append(out, e)
			}
			continue
		}
		sym, g, _ := strings.Cut(e, "@")
		if len(vc.Symbols) == 0 {
			return nil, errorf(KindBadRequest, "the universe's pattern %q cannot be resolved: venue %s lists no symbols to match it against; write the universe's series out (e.g. BTC-USD@%s), or list the venue's symbols in wicket.toml", e, vc.Name, g)
		}
		matched := 0
		for _, s := range vc.Symbols {
			canon := s
			if c, err := vc.Instruments().Canonical(s); err == nil {
				canon = c
			}
			if ok, _ := filepath.Match(sym, canon); ok {
				matched++
				if name := canon + "@" + g; !contains(out, name) {
					out = append(out, name)
				}
			}
		}
		if matched == 0 {
			return nil, errorf(KindBadRequest, "the universe's pattern %q matches none of venue %s's symbols (%s): widen the pattern, or add the symbols to the venue in wicket.toml", e, vc.Name, strings.Join(vc.Symbols, ", "))
		}
	}
	if len(out) > scriptapi.MaxUniverse {
		return nil, errorf(KindBadRequest, "the universe resolves to %d series (%s, ...); a portfolio deployment holds at most %d assets: narrow the universe (fewer series, or a tighter pattern)",
			len(out), strings.Join(out[:5], ", "), scriptapi.MaxUniverse)
	}
	return out, nil
}

// createPortfolio journals and starts a resolved portfolio deployment.
func (r *Runner) createPortfolio(d *Deployment, bars []strategy.Bars) (Deployment, error) {
	d.Preview = nil // the check's answer only; never journaled
	if err := r.cfg.Store.commitLegBars(d.ID, bars); err != nil {
		return Deployment{}, errorf(KindInternal, "the deployment's warm-up could not be journaled, so it does not exist: %v", err)
	}
	if err := r.cfg.Store.Commit(Batch{Deployment: d}); err != nil {
		return Deployment{}, errorf(KindInternal, "the deployment could not be journaled, so it does not exist: %v", err)
	}
	_, g, _ := strategy.ParseSeries(d.Legs[0].Series)
	l := &live{d: d, gran: g.Duration(), legs: bars}
	r.log.Info("portfolio deployment created", "deployment", d.ID, "strategy", d.Strategy, "hash", d.StrategyHash, "universe", d.Series, "venue", d.Venue, "mode", d.Mode)
	r.mu.Lock()
	r.deps[d.ID] = l
	r.startLoop(l)
	r.mu.Unlock()
	return d.view(), nil
}

// decidePortfolio asks a worker for d's weights at the last calendar bar
// of the legs' bars.
func (r *Runner) decidePortfolio(ctx context.Context, d *Deployment, bars []strategy.Bars) (worker.PortfolioDecision, error) {
	ps, ok := r.cfg.Strategies.(PortfolioStrategies)
	if !ok {
		return worker.PortfolioDecision{}, fmt.Errorf("this node's strategy workers cannot run a portfolio strategy")
	}
	req := worker.PortfolioDecideRequest{StrategyRequest: r.strategyRequest(d.Strategy, d.Source, d.Params)}
	from := int64(math.MaxInt64)
	for _, b := range bars {
		req.Series = append(req.Series, b.Series)
		req.Assets = append(req.Assets, b.Encode())
		if b.Len() > 0 {
			from = min(from, b.Time[0])
		}
	}
	if d.Style == string(scriptapi.StyleOnBar) { // ctx reads the deployment's own account at each bar's close
		req.Capital, _ = d.Capital.Float64()
		if d.ID != "" && r.cfg.Store != nil {
			var err error
			if req.Accounts, err = r.cfg.Store.portfolioAccounts(d.ID, from, len(bars)); err != nil {
				return worker.PortfolioDecision{}, err
			}
		}
	}
	dec, err := ps.DecidePortfolio(ctx, req)
	if err == nil && len(dec.Weights) != len(bars) {
		err = fmt.Errorf("the strategy decided %d weights for %d assets", len(dec.Weights), len(bars))
	}
	return dec, err
}

// StepPortfolio handles one closed calendar bar at time at of portfolio
// deployment id, with the bars of the legs that have one there (by
// series): it records them (and the calendar bars missed before), marks
// the deployment's equity at the close, checks the breakers, asks the
// worker for the weights, steps the rebalance schedule and sends an
// order for each asset that takes a new weight, each journaled before it
// is sent with client order id (deployment, bar, asset's index). A bar
// at or before the last handled is not evaluated again; an intent of the
// last one left unsent by a crash is sent with its own id.
func (r *Runner) StepPortfolio(ctx context.Context, id string, at time.Time, set map[string]Bar) error {
	l, err := r.get(id)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	defer func() {
		if r.cfg.OnStep != nil {
			r.cfg.OnStep(id, at)
		}
	}()
	d := l.d
	if len(d.Legs) == 0 {
		return errorf(KindBadRequest, "deployment %s trades one series: its bars go to Step", id)
	}
	at = at.UTC()
	if !d.LastBar.IsZero() && !at.After(d.LastBar) {
		if at.Equal(d.LastBar) {
			return r.resendPortfolio(ctx, d, at)
		}
		return nil
	}
	if len(set) == 0 {
		return nil
	}
	now := r.cfg.Now().UTC()
	vc, _ := r.cfg.Project.Venue(d.Venue)
	var b Batch
	b.Deployment = d
	b.Intents = append(b.Intents, r.settleOpenPortfolio(ctx, d)...)
	last := d.LastBar
	if last.IsZero() { // the first live bar: the calendar bars after the warm-up's last were skipped too
		for _, lb := range l.legs {
			if n := lb.Len(); n > 0 && time.Unix(lb.Time[n-1], 0).After(last) {
				last = time.Unix(lb.Time[n-1], 0).UTC()
			}
		}
	}
	if !last.IsZero() && l.gran > 0 {
		n := 0
		for t := last.Add(l.gran); t.Before(at); t = t.Add(l.gran) {
			if n < maxMissedRows {
				b.Decisions = append(b.Decisions, Decision{Bar: t, Status: DecisionMissed, Note: "missed: no calendar bar was handled at its close; never traded late"})
			}
			n++
		}
		d.Missed += n
	}
	has := make([]bool, len(d.Legs))
	fresh := make([]strategy.Bars, len(d.Legs))
	for k := range d.Legs {
		leg := &d.Legs[k]
		bar, ok := set[leg.Series]
		fresh[k] = strategy.Bars{Series: leg.Series}
		if !ok || bar.Time.Unix() != at.Unix() {
			continue
		}
		lb := &l.legs[k]
		if n := lb.Len(); n > 0 && bar.Time.Unix() <= lb.Time[n-1] {
			continue // the warm-up holds it already
		}
		has[k] = true
		appendBar(lb, at.Unix(), bar.Open, bar.High, bar.Low, bar.Close, bar.Volume)
		appendBar(&fresh[k], at.Unix(), bar.Open, bar.High, bar.Low, bar.Close, bar.Volume)
		if over := lb.Len() - (d.Warmup + 1); over > 0 {
			*lb = lb.Slice(over, lb.Len())
		}
		leg.Mark, leg.LastBar = decimal.NewFromFloat(bar.Close), at
	}
	if err := r.cfg.Store.commitLegBars(d.ID, fresh); err != nil {
		return err
	}
	d.LastBar, d.Updated = at, now
	r.markPortfolio(d, at)
	if d.State != StateRunning {
		b.Intents = append(b.Intents, r.lapseProposals(d, "lapsed: the deployment is "+string(d.State))...)
		b.Decisions = append(b.Decisions, Decision{Bar: at, Status: DecisionNotRunning, Equity: d.Equity, Note: string(d.State) + ": " + d.Reason})
		return r.cfg.Store.Commit(b)
	}
	if r.breakers(d, now) || r.driftedPortfolio(ctx, l, at, now) { // the drift breaker replays the portfolio (attrib_portfolio.go)
		b.Intents = append(b.Intents, r.lapseProposals(d, "lapsed: a breaker paused the deployment")...)
		b.Decisions = append(b.Decisions, Decision{Bar: at, Status: DecisionNotRunning, Equity: d.Equity, Note: d.Reason})
		return r.cfg.Store.Commit(b)
	}
	if d.Style == string(scriptapi.StyleOnBar) { // the account on_bar reads at this close, journaled first
		if err := r.cfg.Store.commitPortfolioAccount(d, at); err != nil {
			return err
		}
	}
	dec, err := r.decidePortfolio(ctx, d, l.legs)
	if err != nil {
		b.Decisions = append(b.Decisions, Decision{Bar: at, Status: DecisionFailed, Equity: d.Equity, Note: "the strategy could not be evaluated: " + err.Error()})
		if cerr := r.cfg.Store.Commit(b); cerr != nil {
			return cerr
		}
		return fmt.Errorf("deployment %s at %s: %w", id, at.Format(time.RFC3339), err)
	}
	names := make([]string, len(d.Legs))
	col := make([]float64, len(d.Legs))
	for k := range d.Legs {
		names[k], col[k] = d.Legs[k].Series, math.NaN()
		if dec.Has[k] {
			col[k] = dec.Weights[k]
		}
	}
	reb, _ := portfolio.ParseRebalance(d.Rebalance)
	sched := portfolio.NewSchedule(reb, names)
	first := d.Schedule == nil
	if !first {
		if err := sched.Restore(*d.Schedule); err != nil {
			return fmt.Errorf("deployment %s: %w", id, err)
		}
	}
	eq := d.Equity
	eqf, _ := eq.Float64()
	if _, err := sched.Step(portfolio.Bar{Index: -1, Time: at.Unix(), First: first, Has: func(a int) bool { return has[a] },
		Held: func(a int) float64 { v, _ := d.Legs[a].Value.Float64(); return v / eqf }}, col); err != nil {
		b.Decisions = append(b.Decisions, Decision{Bar: at, Status: DecisionFailed, Equity: d.Equity, Note: err.Error()})
		if cerr := r.cfg.Store.Commit(b); cerr != nil {
			return cerr
		}
		return fmt.Errorf("deployment %s at %s: %w", id, at.Format(time.RFC3339), err)
	}
	st := sched.State()
	d.Schedule = &st
	b.Decisions = append(b.Decisions, Decision{Bar: at, Status: DecisionDecided, Equity: eq, Note: weightsNote(names, dec)})
	var orders []Intent
	for k := range d.Legs {
		w, ok := sched.Take(k)
		if !ok {
			continue
		}
		leg := &d.Legs[k]
		leg.Weight, leg.HasWeight = w, true
		dq := r.sizeLeg(ctx, d, vc, k, w, eq, leg.Mark)
		if dq.IsZero() {
			continue
		}
		if d.Mode == ModeAuto && !book.MayOrder(d.Allowance.MaxOrdersPerDay, d.OrdersToday+len(orders)) {
			r.pause(d, fmt.Sprintf("%s: %d orders sent in the UTC day %s already, the allowance's limit; the order of %s for weight %v at %s was not sent",
				backtest.AllowMaxOrdersPerDay, d.OrdersToday+len(orders), d.Day, leg.Series, w, at.Format(time.RFC3339)), now)
			break
		}
		in := Intent{ClientOrderID: intentID(vc, d.ID, at, k), Deployment: d.ID, Bar: at, N: k, Side: string(command.Buy),
			Quantity: dq.Abs(), Target: w, Status: IntentSending, Updated: now, Note: "asset " + leg.Series}
		if dq.IsNegative() {
			in.Side = string(command.Sell)
		}
		orders = append(orders, in)
	}
	if d.Mode == ModePropose {
		orders = r.proposeLegs(ctx, d, vc, &b, orders)
	} else if len(orders) > 0 {
		if why := r.unarmed(ctx, d, vc, now); why != "" {
			for i := range orders {
				orders[i].Status, orders[i].Note = IntentRefused, why
			}
			b.Intents = append(b.Intents, orders...)
			return r.cfg.Store.Commit(b)
		}
	}
	if len(orders) == 0 {
		return r.cfg.Store.Commit(b)
	}
	// The intents are durable before the node hears of them.
	b.Intents = append(b.Intents, orders...)
	d.OrdersToday += len(orders)
	if err := r.cfg.Store.Commit(b); err != nil {
		return err
	}
	for i := range orders {
		if err := r.sendLeg(ctx, d, &orders[i]); err != nil {
			return err
		}
	}
	r.markPortfolio(d, at)
	r.breakers(d, r.cfg.Now().UTC())
	return r.cfg.Store.Commit(Batch{Deployment: d})
}

// weightsNote is a decision's weights as its journal row says them:
// each asset's weight at the bar, "-" where it decided none.
func weightsNote(names []string, dec worker.PortfolioDecision) string {
	parts := make([]string, len(names))
	for k, n := range names {
		w := "-"
		if dec.Has[k] {
			w = fmt.Sprint(dec.Weights[k])
		}
		parts[k] = n + "=" + w
	}
	return "weights " + strings.Join(parts, " ")
}
