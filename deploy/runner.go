package deploy

import (
	"context"
	"crypto/ed25519"
	"errors"
	"io"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/guardrail"
	"wicket/strategy"
	"wicket/strategy/research"
	"wicket/strategy/scriptapi"
	"wicket/strategy/worker"
)

// Strategies runs strategy code, in worker processes (*worker.Pool is one).
type Strategies interface {
	Validate(ctx context.Context, req worker.StrategyRequest) (scriptapi.Report, error)
	Decide(ctx context.Context, req worker.DecideRequest) (worker.Decision, error)
}

// BarSource gives the closed bars of a series: Next returns the first bar
// of series closed after the bar at after (zero after: the latest closed
// bar), waiting for it to close; io.EOF when the source has no more.
type BarSource interface {
	Next(ctx context.Context, series string, after time.Time) (Bar, error)
}

// History reads up to n bars of series that closed before the bar at
// before, oldest first: a deployment's warm-up.
type History func(ctx context.Context, series string, before time.Time, n int) (strategy.Bars, error)

// Research runs the research a deployment is checked with before it
// trades (a *research.Local of the node's project, over the same worker
// pool): the start-point check over its warm-up, and the preview's
// backtest.
type Research interface {
	StartPoint(ctx context.Context, req research.StartPointRequest) (scriptapi.StartPoint, error)
	Backtest(ctx context.Context, req research.BacktestRequest) (research.BacktestResult, error)
}

// Config is what a Runner needs.
type Config struct {
	Project    project.Config // the node's venues and [guardrail]
	Store      *Store
	Node       node.Conn // a client of the node the runner runs in, holding its control key
	Guardrail  *guardrail.Guardrail
	Strategies Strategies
	// Bars gives the bar source of a deployment on venue (paper marks, a
	// recorded tape or the live tape).
	Bars func(venue project.Venue, series string) BarSource
	// Candles, when set, records the provider's bars of every series a
	// deployment on a real venue runs and is that deployment's bar source
	// (Bars serves the others); it fetches a missing warm-up at deploy.
	Candles *Candles
	History History // nil: no warm-up beyond the recorded bars
	// Research, when set, checks each deployment before it trades: the
	// start-point check over its warm-up (a warm-up shorter than the
	// check's need is refused) and the preview's backtest.
	Research Research
	// Plans, when set, reads the research plan binding a strategy's text
	// (preview.go): the preview shows it and its verdict, and an auto
	// deployment on a real venue is armed only under a passed plan or
	// the operator's signed override. Unset: no plan is shown or asked.
	Plans Plans
	// IndicatorsDir is the project's indicators directory, for strategies
	// that load("indicators/...").
	IndicatorsDir string
	// OperatorKey verifies arming, resuming and approving (settings/operator.pub).
	OperatorKey ed25519.PublicKey
	Now         func() time.Time
	NewID       func() string // deployment ids: "dep-" + NewID()
	Logger      *slog.Logger
	// MarkWait bounds how long an order waits for the venue's mark when
	// the node's dry run says it has none yet (after a restart the first
	// price arrives before it is the mark); then it is not sent, with
	// the reason. 0: DefaultMarkWait; negative: no wait.
	MarkWait time.Duration
	// NextOpen, when set, is the price an order decided at the close of
	// series' bar at bar fills at before slippage, when it is known then:
	// the next bar's open on a recorded tape (TapeRun.NextOpen). Nil or
	// false: the bar's close, the next open of a 24/7 market.
	NextOpen func(series string, bar time.Time) (decimal.Decimal, bool)
	// FundingRates, when set, reads research's stored funding rates: a
	// futures deployment's replay charges them (attrib_funding.go).
	FundingRates FundingRates
	// OnStep, when set, is called after each bar a deployment handled
	// (tests and benchmarks wait on it instead of on time).
	OnStep func(id string, bar time.Time)
	// QuietBound is how long after a calendar bar's close a portfolio
	// deployment waits for the legs that have not reported a bar at or
	// after it (a venue that skips empty minutes sends none for a quiet
	// asset) before it decides the bar without them (portfolio.go).
	// 0: DefaultQuietBound.
	QuietBound time.Duration
	// After waits on the wall clock for that bound (time.After when
	// nil); tests inject one with a stepping clock.
	After func(time.Duration) <-chan time.Time
}

// DefaultMarkWait is Config.MarkWait's default.
const DefaultMarkWait = 5 * time.Second

// Runner runs the deployments of one node.
type Runner struct {
	cfg   Config
	log   *slog.Logger
	chall *challenges

	mu    sync.Mutex
	deps  map[string]*live
	ctx   context.Context // set by Start
	loops sync.WaitGroup
}

// live is one deployment in memory: its journaled state and the bars it
// evaluates over.
type live struct {
	mu     sync.Mutex
	d      *Deployment
	bars   strategy.Bars   // warm-up and recorded bars
	legs   []strategy.Bars // a portfolio's: each leg's warm-up and recorded bars
	gran   time.Duration
	cancel context.CancelFunc
	drift  driftWindow // the drift breaker's window (attrib.go)
	// pdrift is a portfolio's drift breaker replay input (attrib_portfolio.go).
	pdrift portfolioDrift
}

// New loads the journaled deployments, reconciles their unsettled intents
// with the node (by client order id) and lapses what cannot stand across a
// restart: proposals, and auto arming.
func New(ctx context.Context, cfg Config) (*Runner, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NewID == nil {
		cfg.NewID = command.NewID
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Guardrail == nil {
		cfg.Guardrail = guardrail.New(cfg.Project)
	}
	if cfg.MarkWait == 0 {
		cfg.MarkWait = DefaultMarkWait
	}
	r := &Runner{cfg: cfg, log: cfg.Logger, chall: newChallenges(), deps: map[string]*live{}}
	ds, err := cfg.Store.Deployments()
	if err != nil {
		return nil, err
	}
	for _, d := range ds {
		_, g, _ := strategy.ParseSeries(d.Series)
		l := &live{d: d, gran: g.Duration()}
		if l.bars, err = cfg.Store.Bars(d.ID, d.Series, d.Warmup+1); err != nil {
			return nil, err
		}
		r.deps[d.ID] = l
		if len(d.Legs) > 0 { // a portfolio (portfolio.go)
			if err := r.loadLegs(l); err != nil {
				return nil, err
			}
			if err := r.restorePortfolio(ctx, l); err != nil {
				return nil, err
			}
			continue
		}
		if err := r.restore(ctx, l); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// restore settles a loaded deployment's open intents with the node and
// lapses its proposals and arming.
func (r *Runner) restore(ctx context.Context, l *live) error {
	d := l.d
	d.ArmedUntil, d.PreApproved = time.Time{}, 0
	intents, err := r.cfg.Store.Intents(d.ID)
	if err != nil {
		return err
	}
	var changed []Intent
	for _, in := range intents {
		switch in.Status {
		case IntentProposed:
			in.Status, in.Note, in.Updated = IntentLapsed, "lapsed: the node restarted before an operator approved it", r.cfg.Now()
			changed = append(changed, in)
		case IntentSending, IntentPending:
			if r.settle(ctx, d, &in) {
				changed = append(changed, in)
			}
		}
	}
	d.Proposals = nil
	return r.cfg.Store.Commit(Batch{Deployment: d, Intents: changed})
}

// Start runs every running deployment's loop until ctx ends; Create
// starts the loops of new ones.
func (r *Runner) Start(ctx context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ctx = ctx
	for _, l := range r.deps {
		if l.d.State != StateStopped {
			r.startLoop(l)
		}
	}
}

// Wait waits for the loops to end (after Start's context ended).
func (r *Runner) Wait() { r.loops.Wait() }

// startLoop starts l's loop; r.mu is held.
func (r *Runner) startLoop(l *live) {
	if r.ctx == nil {
		return
	}
	vc, _ := r.cfg.Project.Venue(l.d.Venue)
	if len(l.d.Legs) > 0 { // a portfolio: one calendar over its legs' sources (portfolio.go)
		ctx, cancel := context.WithCancel(r.ctx)
		l.cancel = cancel
		r.loops.Add(1)
		go func() {
			defer r.loops.Done()
			r.portfolioLoop(ctx, l, vc)
		}()
		return
	}
	src := r.barSource(vc, l.d.Series)
	if src == nil {
		return
	}
	ctx, cancel := context.WithCancel(r.ctx)
	l.cancel = cancel
	r.loops.Add(1)
	go func() {
		defer r.loops.Done()
		r.loop(ctx, l, src)
	}()
}

// barSource is series' bar source on venue vc: the node's own candles
// where it records the venue's, else Config.Bars (nil: none).
func (r *Runner) barSource(vc project.Venue, series string) BarSource {
	src := r.cfg.Candles.Bars(vc, series)
	if src == nil && r.cfg.Bars != nil {
		src = r.cfg.Bars(vc, series)
	}
	return src
}

// loop feeds l the closed bars of its series: first the latest closed one
// (bars missed while the node was down are recorded as missed by Step),
// then each as it closes.
func (r *Runner) loop(ctx context.Context, l *live, src BarSource) {
	if c, ok := src.(interface{ Close() }); ok {
		defer c.Close() // a recorded tape stops waiting for this deployment (taperun.go)
	}
	var after time.Time
	for ctx.Err() == nil {
		bar, err := src.Next(ctx, l.d.Series, after)
		if err != nil {
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return
			}
			r.log.Warn("deployment bar source", "deployment", l.d.ID, "err", err)
			t := time.NewTimer(time.Second)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			continue
		}
		after = bar.Time
		if err := r.Step(ctx, l.d.ID, bar); err != nil {
			r.log.Error("deployment step", "deployment", l.d.ID, "bar", bar.Time, "err", err)
		}
	}
}

func (r *Runner) get(id string) (*live, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.deps[id]
	if l == nil {
		return nil, errorf(KindNotFound, "no deployment %s on this node: wicket node deployments lists them", short(id))
	}
	return l, nil
}

// Create checks spec and, when it passes, journals and starts the
// deployment. Every refusal names the fix.
func (r *Runner) Create(ctx context.Context, spec Spec) (Deployment, error) {
	if desc, ok, err := r.portfolioOf(ctx, spec); err != nil {
		return Deployment{}, err
	} else if ok { // a universe: one deployment over its assets (portfolio.go)
		d, bars, err := r.resolvePortfolio(ctx, spec, desc)
		if err != nil {
			return Deployment{}, err
		}
		return r.createPortfolio(d, bars)
	}
	d, bars, _, err := r.resolve(ctx, spec)
	if err != nil {
		return Deployment{}, err
	}
	_, g, _ := strategy.ParseSeries(d.Series)
	l := &live{d: d, gran: g.Duration(), bars: bars}
	warm := make([]Bar, 0, l.bars.Len())
	for i := range l.bars.Time {
		warm = append(warm, Bar{Time: time.Unix(l.bars.Time[i], 0).UTC(), Open: l.bars.Open[i], High: l.bars.High[i], Low: l.bars.Low[i], Close: l.bars.Close[i], Volume: l.bars.Volume[i]})
	}
	if err := r.cfg.Store.Commit(Batch{Deployment: d, Bars: warm}); err != nil {
		return Deployment{}, errorf(KindInternal, "the deployment could not be journaled, so it does not exist: %v", err)
	}
	r.log.Info("deployment created", "deployment", d.ID, "strategy", d.Strategy, "hash", d.StrategyHash, "series", d.Series, "venue", d.Venue, "mode", d.Mode)
	r.mu.Lock()
	r.deps[d.ID] = l
	r.startLoop(l)
	r.mu.Unlock()
	return d.view(), nil
}

// Check resolves and checks spec as Create would, and creates nothing:
// the preview of wicket deploy.
func (r *Runner) Check(ctx context.Context, spec Spec) (Deployment, error) {
	if desc, ok, err := r.portfolioOf(ctx, spec); err != nil {
		return Deployment{}, err
	} else if ok {
		d, _, err := r.resolvePortfolio(ctx, spec, desc)
		if err != nil {
			return Deployment{}, err
		}
		v := d.view()
		v.ID = ""
		return v, nil // with its preview
	}
	d, _, pv, err := r.resolve(ctx, spec)
	if err != nil {
		return Deployment{}, err
	}
	v := d.view()
	v.ID = ""
	v.Preview = pv
	return v, nil
}

// List is every deployment, newest first, without sources.
func (r *Runner) List() []Deployment {
	r.mu.Lock()
	ls := make([]*live, 0, len(r.deps))
	for _, l := range r.deps {
		ls = append(ls, l)
	}
	r.mu.Unlock()
	out := make([]Deployment, 0, len(ls))
	for _, l := range ls {
		l.mu.Lock()
		out = append(out, l.d.view())
		l.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID > out[j].ID })
	return out
}

// Get is one deployment.
func (r *Runner) Get(id string) (Deployment, error) {
	l, err := r.get(id)
	if err != nil {
		return Deployment{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.d.view(), nil
}

// view is d as shown: the source is summarized by its hash.
func (d *Deployment) view() Deployment {
	v := *d
	v.Source = ""
	v.Proposals = append([]Proposal(nil), d.Proposals...)
	v.Legs = append([]Leg(nil), d.Legs...)
	return v
}

// Stop stops a deployment for good: it sends nothing more; its position
// stays as it is, for the operator to decide.
func (r *Runner) Stop(id, why string) (Deployment, error) {
	l, err := r.get(id)
	if err != nil {
		return Deployment{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.d.State == StateStopped {
		return l.d.view(), nil
	}
	prev := *l.d
	l.d.State, l.d.Reason, l.d.Updated = StateStopped, "stopped: "+why, r.cfg.Now().UTC()
	lapsed := r.lapseProposals(l.d, "lapsed: the deployment was stopped")
	if err := r.cfg.Store.Commit(Batch{Deployment: l.d, Intents: lapsed}); err != nil {
		*l.d = prev
		return Deployment{}, errorf(KindInternal, "the stop could not be journaled, so the deployment still runs: %v", err)
	}
	if l.cancel != nil {
		l.cancel()
	}
	r.log.Warn("deployment stopped", "deployment", id, "why", why)
	return l.d.view(), nil
}
