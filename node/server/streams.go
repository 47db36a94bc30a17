package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"wicket/internal/project"
	"wicket/node"
	"wicket/node/guardrail"
	"wicket/node/journal"
)

// The background work of real venues: the start checks, the order
// stream, and the polls of marks, accounts, instruments and (while the
// stream is down) working orders.

// checkExchanges refuses a configuration whose real venues have no
// adapter, or an adapter of another kind or environment.
func checkExchanges(cfg Config) error {
	for _, vc := range cfg.Project.Venues {
		ex := cfg.Exchanges[vc.Name]
		switch {
		case !vc.Real() && ex != nil:
			return fmt.Errorf("node: venue %q is a paper venue but was given a %s adapter", vc.Name, ex.Kind())
		case !vc.Real():
		case ex == nil:
			return fmt.Errorf("node: venue %q (kind %s) has no adapter", vc.Name, vc.Kind)
		case ex.Kind() != vc.Kind || ex.Environment() != vc.Environment:
			return fmt.Errorf("node: venue %q is %s/%s in wicket.toml but its adapter is %s/%s", vc.Name, vc.Kind, vc.Environment, ex.Kind(), ex.Environment())
		}
	}
	return nil
}

// checkSymbols reads each real venue's instruments at start, each read
// bounded by VenueTimeout. A venue that answers that it does not list a
// configured symbol stops the node, with the venue's own symbol named
// when it has one: such a venue could never be traded. A venue that
// cannot be read now is read again later (pollLoop). It returns what it
// read, by venue.
func checkSymbols(cfg Config) (map[string]map[string]guardrail.Instrument, error) {
	type read struct {
		name string
		in   map[string]guardrail.Instrument
		err  error
	}
	var venues []project.Venue
	for _, vc := range cfg.Project.Venues {
		if vc.Real() && cfg.Exchanges[vc.Name] != nil {
			venues = append(venues, vc)
		}
	}
	reads := make([]read, len(venues))
	var wg sync.WaitGroup
	for i, vc := range venues {
		wg.Add(1)
		go func() { // the venues at once: a start waits one timeout at most
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), cfg.VenueTimeout)
			defer cancel()
			in, err := cfg.Exchanges[vc.Name].Instruments(ctx, vc.Symbols)
			reads[i] = read{vc.Name, in, err}
		}()
	}
	wg.Wait()
	out := map[string]map[string]guardrail.Instrument{}
	for _, rd := range reads {
		switch {
		case errors.Is(rd.err, node.ErrUnknownSymbol):
			return nil, fmt.Errorf("node: venue %s: %w", rd.name, rd.err)
		case rd.err != nil:
			cfg.Logger.Warn("venue instruments unreadable at start; read again at each poll, and orders wait for them", "venue", rd.name, "err", rd.err)
		default:
			out[rd.name] = rd.in
		}
	}
	return out, nil
}

func (s *Server) startRemotes(instruments map[string]map[string]guardrail.Instrument) {
	anyReal := false
	for _, vc := range s.cfg.Project.Venues {
		if !vc.Real() {
			continue
		}
		anyReal = true
		name, ex, in := vc.Name, s.cfg.Exchanges[vc.Name], instruments[vc.Name]
		s.enqueue(func() { //nolint:errcheck // the queue is empty at start
			if r := s.eng.remotes[name]; r != nil && in != nil && r.instruments == nil {
				r.instruments = in
			}
			s.reconcile(name, "the node started")
		})
		s.wg.Add(2)
		go s.streamLoop(name, ex)
		go s.pollLoop(name, vc.Symbols)
	}
	if anyReal {
		s.wg.Add(1)
		go s.orderPollLoop()
	}
}

// streamLoop keeps the venue's order stream up, reconnecting with backoff;
// every (re)connect resyncs over REST. Its reports are applied in turn on
// the venue's lane, in order with the venue's commands.
func (s *Server) streamLoop(name string, ex Exchange) {
	defer s.wg.Done()
	backoff := time.Second
	for s.bg.Err() == nil {
		err := ex.Stream(s.bg, func(u node.VenueUpdate) {
			if u.Order == nil && u.Connected {
				backoff = time.Second
			}
			s.report(name, u)
		})
		if s.bg.Err() != nil {
			return
		}
		s.report(name, node.VenueUpdate{})
		s.log.Warn("venue stream down; reconnecting, and reading its working orders over REST meanwhile", "venue", name,
			"err", err, "in", backoff, "order_poll_every", s.cfg.OrderPollEvery)
		s.alertStreamLost(name, err) // alerts.go
		select {
		case <-s.bg.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

// report queues one stream message on the venue's lane; past the lane's
// bound it is dropped and the venue reconciled instead.
func (s *Server) report(name string, u node.VenueUpdate) {
	if s.background(name, "", func() { s.onFold(func() { s.onUpdate(name, u) }) }) || s.bg.Err() != nil {
		return
	}
	s.log.Warn("venue stream report dropped: too many wait for the venue's lane; reconciling instead", "venue", name)
	s.reconcile(name, "dropped stream reports")
}

// onUpdate applies one stream message on the fold.
func (s *Server) onUpdate(name string, u node.VenueUpdate) {
	r := s.eng.remotes[name]
	if r == nil || s.fault != nil {
		return
	}
	if u.Order == nil && u.Resync {
		s.reconcile(name, "a report out of context")
		return
	}
	if u.Order == nil {
		r.connected = u.Connected
		if u.Connected {
			s.reconcile(name, "the stream connected")
		}
		return
	}
	s.eng.observe(r, *u.Order, nil, s.cfg.Now())
	events := s.eng.take()
	if len(events) == 0 {
		return
	}
	if s.commit(&journal.Batch{Events: events}) == nil {
		s.logFills(events)
		s.refreshLater(name)
		s.linkedAfter(name, events)
	}
}

// DefaultOrderPollEvery is how often a real venue's working orders are
// read over REST while its stream is down.
const DefaultOrderPollEvery = 2 * time.Second

// maxPolledOrders bounds one poll's lookups at one venue.
const maxPolledOrders = 50

// orderPollLoop reads the working orders of every real venue whose stream
// is down, once per OrderPollEvery (or OrderPolls tick), so that a fill
// is never hidden by an outage: the stream's reports are missing then,
// and a reconnect may be long in coming.
func (s *Server) orderPollLoop() {
	defer s.wg.Done()
	ticks := s.cfg.OrderPolls
	if ticks == nil {
		t := time.NewTicker(s.cfg.OrderPollEvery)
		defer t.Stop()
		ticks = t.C
	}
	for {
		select {
		case <-s.bg.Done():
			return
		case <-ticks:
		}
		s.enqueue(s.pollOrders) //nolint:errcheck // a full queue: the next tick polls again
	}
}

// pollOrders, on the fold, queues on the lane of each real venue whose
// stream is down a poll of its working orders (one waits at a time, at
// most maxPolledOrders orders), applied as a reconciliation's read:
// reports settle the orders, fills included. Lookups that fail change
// nothing; the next poll or resync tries again.
func (s *Server) pollOrders() {
	if s.fault != nil {
		return
	}
	for _, name := range s.eng.names {
		if r := s.eng.remotes[name]; r != nil && !r.connected && len(r.atVenue()) > 0 {
			s.background(name, "orders", func() { s.pollVenueOrders(name) })
		}
	}
}

// pollVenueOrders is an order poll's turn on the venue's lane.
func (s *Server) pollVenueOrders(name string) {
	var orders []node.Order
	start := readStart{}
	s.onFold(func() {
		r := s.eng.remotes[name]
		if r == nil || r.connected || s.fault != nil {
			return
		}
		orders = r.atVenue() // open and pending, at the venue (not the triggers the node holds)
		orders = orders[:min(len(orders), maxPolledOrders)]
		for _, o := range orders {
			start[o.ID] = o.VenueOrderID
		}
	})
	if len(orders) == 0 {
		return
	}
	var found []node.VenueOrder
	for _, o := range orders {
		ctx, cancel := s.venueCall()
		vo, err := s.cfg.Exchanges[name].Lookup(ctx, orderOf(o).venueOrder())
		cancel()
		if err == nil {
			found = append(found, vo)
		}
	}
	s.onFold(func() { s.applyPoll(name, found, start) })
}

// applyPoll applies a poll's reports, on the fold.
func (s *Server) applyPoll(name string, found []node.VenueOrder, start readStart) {
	r := s.eng.remotes[name]
	if r == nil || s.fault != nil {
		return
	}
	now := s.cfg.Now()
	for _, vo := range found {
		s.eng.observe(r, vo, start, now)
	}
	events := s.eng.take()
	if len(events) == 0 {
		return
	}
	if s.commit(&journal.Batch{Events: events}) == nil {
		s.logFills(events)
		s.log.Info("venue stream down: working orders read over REST", "venue", name, "orders", len(found), "events", len(events))
		s.refreshLater(name)
		s.linkedAfter(name, events)
	}
}

// pollLoop reads the venue's marks and account every MarkEvery, and its
// instruments while the node has none, and hands them to the fold. It
// runs beside the venue's lane, not on it: these reads change no order
// (the newest account read wins, readSeq), so they need no place in the
// order of the venue's commands, and a command never waits behind one.
func (s *Server) pollLoop(name string, symbols []string) {
	defer s.wg.Done()
	t := time.NewTicker(s.cfg.MarkEvery)
	defer t.Stop()
	for {
		s.poll(name, symbols)
		select {
		case <-s.bg.Done():
			return
		case <-t.C:
		}
	}
}

// poll reads the marks and the account and hands them to the fold; then
// the instruments, when the node has none yet (the venue was unreachable
// at start).
func (s *Server) poll(name string, symbols []string) {
	ex := s.cfg.Exchanges[name]
	read := func() (context.Context, context.CancelFunc) { return context.WithTimeout(s.bg, s.cfg.VenueTimeout) } // a stop ends it
	ctx, cancel := read()
	marks, err := ex.Marks(ctx, symbols)
	seq := s.readSeq[name].Add(1)
	acct, aerr := ex.Account(ctx)
	cancel()
	if err != nil && s.bg.Err() == nil {
		s.log.Warn("venue marks unreadable", "venue", name, "err", err)
	}
	needInstruments := false
	s.onFold(func() {
		r := s.eng.remotes[name]
		if r == nil {
			return
		}
		if err == nil {
			for sym, m := range marks {
				r.SetMark(sym, m)
			}
		}
		if aerr == nil {
			r.setAccount(acct, seq)
		}
		if err == nil {
			s.fireTriggers(name) // triggers the node holds, on the new marks
		}
		needInstruments = r.instruments == nil && s.fault == nil
	})
	s.pollClock(name) // [risk] market_hours (risk.go)
	s.pollFunding(name)
	if !needInstruments {
		return
	}
	ctx, cancel = read()
	in, err := ex.Instruments(ctx, symbols)
	cancel()
	s.onFold(func() {
		r := s.eng.remotes[name]
		switch {
		case r == nil:
		case err != nil && s.bg.Err() == nil:
			s.log.Warn("venue instruments still unreadable; orders wait for them", "venue", name, "err", err)
		case err == nil && r.instruments == nil:
			r.instruments = in
			s.log.Info("venue instruments read", "venue", name, "symbols", len(in))
		}
	})
}
