package server

import (
	"context"
	"log/slog"
	"wicket/node"
	"wicket/node/guardrail"
	"wicket/node/scrub"

	"github.com/shopspring/decimal"
)

// secretHolder is an adapter that names the secret values it holds, so the
// node can scrub them from what it logs, returns and journals.
type secretHolder interface{ Secrets() []string }

// scrubbing makes cfg's logger and real venues scrub every secret value
// the node holds (its keys, its venues' keys) from their text: log lines,
// and every error and reason a venue hands the node, which reach the
// journal and the HTTP answers from there.
func scrubbing(cfg *Config) {
	secrets := []string{cfg.ObserveKey, cfg.ControlKey}
	for _, ex := range cfg.Exchanges {
		if h, ok := ex.(secretHolder); ok {
			secrets = append(secrets, h.Secrets()...)
		}
	}
	sc := scrub.New(secrets...)
	cfg.Logger = slog.New(sc.Handler(cfg.Logger.Handler()))
	exchanges := make(map[string]Exchange, len(cfg.Exchanges))
	for name, ex := range cfg.Exchanges {
		exchanges[name] = scrubbedExchange{ex, sc}
	}
	cfg.Exchanges = exchanges
}

// scrubbedExchange is an adapter whose errors and order reasons are
// scrubbed of secret values.
type scrubbedExchange struct {
	ex Exchange
	sc *scrub.Scrubber
}

func (x scrubbedExchange) Kind() string { return x.ex.Kind() }

func (x scrubbedExchange) Environment() string { return x.ex.Environment() }

func (x scrubbedExchange) MarkSource() string { return x.sc.String(x.ex.MarkSource()) }

func (x scrubbedExchange) Instruments(ctx context.Context, symbols []string) (map[string]guardrail.Instrument, error) {
	in, err := x.ex.Instruments(ctx, symbols)
	return in, x.sc.Error(err)
}

func (x scrubbedExchange) Account(ctx context.Context) (node.Account, error) {
	a, err := x.ex.Account(ctx)
	a.ID = x.sc.String(a.ID)
	for i := range a.Positions {
		a.Positions[i].Closed = x.sc.String(a.Positions[i].Closed)
	}
	return a, x.sc.Error(err)
}

func (x scrubbedExchange) Marks(ctx context.Context, symbols []string) (map[string]decimal.Decimal, error) {
	m, err := x.ex.Marks(ctx, symbols)
	return m, x.sc.Error(err)
}

func (x scrubbedExchange) order(vo node.VenueOrder, err error) (node.VenueOrder, error) {
	vo.Reason = x.sc.String(vo.Reason)
	return vo, x.sc.Error(err)
}

func (x scrubbedExchange) Submit(ctx context.Context, r node.OrderRequest) (node.VenueOrder, error) {
	return x.order(x.ex.Submit(ctx, r))
}

func (x scrubbedExchange) Holds(g node.GroupRequest) ([]node.Hold, error) {
	h, err := x.ex.Holds(g)
	return h, x.sc.Error(err)
}

func (x scrubbedExchange) SubmitGroup(ctx context.Context, g node.GroupRequest) ([]node.VenueOrder, error) {
	legs, err := x.ex.SubmitGroup(ctx, g)
	for i := range legs {
		legs[i].Reason = x.sc.String(legs[i].Reason)
	}
	return legs, x.sc.Error(err)
}

func (x scrubbedExchange) Cancel(ctx context.Context, o node.VenueOrder) (node.VenueOrder, error) {
	return x.order(x.ex.Cancel(ctx, o))
}

func (x scrubbedExchange) Replace(ctx context.Context, o node.VenueOrder, r node.Replacement) (node.VenueOrder, error) {
	return x.order(x.ex.Replace(ctx, o, r))
}

func (x scrubbedExchange) Lookup(ctx context.Context, o node.VenueOrder) (node.VenueOrder, error) {
	return x.order(x.ex.Lookup(ctx, o))
}

func (x scrubbedExchange) OpenOrders(ctx context.Context, symbols []string) ([]node.VenueOrder, error) {
	list, err := x.ex.OpenOrders(ctx, symbols)
	for i := range list {
		list[i].Reason = x.sc.String(list[i].Reason)
	}
	return list, x.sc.Error(err)
}

func (x scrubbedExchange) Stream(ctx context.Context, updates func(node.VenueUpdate)) error {
	return x.sc.Error(x.ex.Stream(ctx, func(u node.VenueUpdate) {
		if u.Order != nil {
			vo := *u.Order
			vo.Reason = x.sc.String(vo.Reason)
			u.Order = &vo
		}
		updates(u)
	}))
}
