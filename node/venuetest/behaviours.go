package venuetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"wicket/node"
)

// submit: a market order fills at the price and a limit rests, each under
// the node's client id, and the venue's answer agrees with the fake.
func submit(t *testing.T, h Harness) {
	a := h.Adapter(t)
	id := ClientID()
	m := place(t, a, market(h, id))
	if m.State != node.VenueFilled || !m.Filled.Equal(dec("0.01")) || !m.AveragePrice.Equal(h.Price()) || m.ClientOrderID != id || m.Symbol != h.Symbol() {
		t.Errorf("market order answered %+v, want filled 0.01 at %s under %s", m, h.Price(), id)
	}
	lid := ClientID()
	l := place(t, a, limit(h, lid))
	if l.State != node.VenueOpen || !l.Filled.IsZero() || !l.Quantity.Equal(qty) || !l.Price.Equal(h.Price().Sub(limitOff)) || l.ClientOrderID != lid || l.VenueOrderID == "" {
		t.Errorf("limit order answered %+v, want open, nothing filled", l)
	}
	if f := fakeOrder(t, h, l.VenueOrderID); f.State != node.VenueOpen || !f.Quantity.Equal(qty) {
		t.Errorf("the fake holds the limit as %+v", f)
	}
	if got := lookup(t, a, h, lid); got.VenueOrderID != l.VenueOrderID || got.State != node.VenueOpen {
		t.Errorf("lookup by client id: %+v, want %s open", got, l.VenueOrderID)
	}
	if _, err := a.Lookup(Ctx(t), node.VenueOrder{Symbol: h.Symbol(), ClientOrderID: ClientID()}); !errors.Is(err, node.ErrVenueNotFound) {
		t.Errorf("lookup of an order never placed: %v, want ErrVenueNotFound", err)
	}
}

// lostAnswer: a submit whose answer is lost says unknown, was sent once,
// and the order is found afterwards by its client id, by this adapter and
// by one started afterwards.
func lostAnswer(t *testing.T, h Harness) {
	a := h.Adapter(t)
	id := ClientID()
	h.LoseNextAnswer(OpSubmit, "")
	before := h.Sent(OpSubmit, "")
	if _, err := a.Submit(Ctx(t), market(h, id)); !errors.Is(err, node.ErrVenueUnknown) {
		t.Fatalf("a submit whose answer was lost: %v, want ErrVenueUnknown", err)
	}
	if n := h.Sent(OpSubmit, "") - before; n != 1 || len(h.Orders()) != 1 {
		t.Fatalf("the lost submit was sent %d times and the fake holds %d orders, want once and 1", n, len(h.Orders()))
	}
	for who, a := range map[string]Exchange{"this adapter": a, "an adapter started afterwards": h.Adapter(t)} {
		got := lookup(t, a, h, id)
		if got.ClientOrderID != id || got.State != node.VenueFilled || !got.Filled.Equal(dec("0.01")) || got.VenueOrderID != h.Orders()[0].VenueOrderID {
			t.Errorf("%s reads the order back as %+v", who, got)
		}
	}
	if n := h.Sent(OpSubmit, "") - before; n != 1 {
		t.Errorf("reading the order back sent it again (%d submits)", n)
	}
}

// partialFill: fills at the fake show as cumulative Filled with the
// average price, the order open until the rest fills.
func partialFill(t *testing.T, h Harness) {
	a := h.Adapter(t)
	id := ClientID()
	o := place(t, a, limit(h, id))
	h.FillPart(t, o.VenueOrderID, dec("0.005"))
	got := lookup(t, a, h, id)
	if got.State != node.VenueOpen || !got.Filled.Equal(dec("0.005")) || !got.AveragePrice.Equal(o.Price) {
		t.Errorf("after a partial fill: %+v, want open, 0.005 filled at %s", got, o.Price)
	}
	h.FillPart(t, o.VenueOrderID, dec("0.005"))
	if got := lookup(t, a, h, id); got.State != node.VenueOpen || !got.Filled.Equal(dec("0.01")) {
		t.Errorf("after a second partial fill: %+v, want open, 0.01 filled", got)
	}
	h.Cross()
	got = lookup(t, a, h, id)
	if got.State != node.VenueFilled || !got.Filled.Equal(qty) || !got.AveragePrice.Equal(o.Price) {
		t.Errorf("after the rest filled: %+v, want filled %s at %s", got, qty, o.Price)
	}
	if f := fakeOrder(t, h, o.VenueOrderID); f.State != node.VenueFilled || !f.Filled.Equal(got.Filled) {
		t.Errorf("the fake holds %+v, the adapter says %+v", f, got)
	}
}

// replace: a partly filled order is replaced by a new incarnation under
// the same client id; its answer, Lookup and OpenOrders count the fills
// of the whole order's life.
func replace(t *testing.T, h Harness) {
	a := h.Adapter(t)
	id := ClientID()
	o := place(t, a, limit(h, id))
	h.FillPart(t, o.VenueOrderID, dec("0.005"))
	o = lookup(t, a, h, id)
	newPrice := o.Price.Add(dec("500"))
	before := h.Sent(OpReplace, o.VenueOrderID)
	rep, err := a.Replace(Ctx(t), o, node.Replacement{Quantity: dec("0.03"), Price: newPrice})
	if err != nil {
		t.Fatal(err)
	}
	if n := h.Sent(OpReplace, o.VenueOrderID) - before; n != 1 {
		t.Errorf("the replace was sent %d times", n)
	}
	if rep.VenueOrderID == o.VenueOrderID || rep.ClientOrderID != id || rep.State != node.VenueOpen || !rep.Quantity.Equal(dec("0.03")) ||
		!rep.Price.Equal(newPrice) || !rep.Filled.Equal(dec("0.005")) {
		t.Errorf("replace answered %+v, want a new incarnation of %s: 0.03 at %s, 0.005 filled", rep, id, newPrice)
	}
	if f := fakeOrder(t, h, o.VenueOrderID); f.State == node.VenueOpen {
		t.Errorf("the replaced incarnation still works at the fake: %+v", f)
	}
	if got := lookup(t, a, h, id); got.VenueOrderID != rep.VenueOrderID || !got.Filled.Equal(dec("0.005")) || !got.Price.Equal(newPrice) {
		t.Errorf("lookup after the replace: %+v, want %s", got, rep.VenueOrderID)
	}
	open, err := a.OpenOrders(Ctx(t), []string{h.Symbol()})
	if err != nil || len(open) != 1 || open[0].VenueOrderID != rep.VenueOrderID || open[0].ClientOrderID != id || !open[0].Filled.Equal(dec("0.005")) {
		t.Errorf("open orders after the replace: %+v %v, want only %s", open, err, rep.VenueOrderID)
	}
	if _, err := a.Replace(Ctx(t), rep, node.Replacement{Quantity: dec("0.005"), Price: newPrice}); !errors.Is(err, node.ErrVenueRejected) {
		t.Errorf("a replace to no more than the filled: %v, want ErrVenueRejected", err)
	}
}

// lostReplace: a replace whose answer is lost fails, and the replacement
// is listed with the whole order's life, by this adapter and by one
// started afterwards, never as if its own part were all of it.
func lostReplace(t *testing.T, h Harness) {
	a := h.Adapter(t)
	id := ClientID()
	o := place(t, a, limit(h, id))
	h.FillPart(t, o.VenueOrderID, dec("0.005"))
	o.Filled, o.AveragePrice = dec("0.005"), o.Price
	newPrice := o.Price.Add(dec("600"))
	h.LoseNextAnswer(OpReplace, o.VenueOrderID)
	if _, err := a.Replace(Ctx(t), o, node.Replacement{Price: newPrice}); err == nil {
		t.Fatal("the replace's answer was lost, yet it succeeded")
	}
	for who, a := range map[string]Exchange{"this adapter": a, "an adapter started afterwards": h.Adapter(t)} {
		open, err := a.OpenOrders(Ctx(t), []string{h.Symbol()})
		if err != nil || len(open) != 1 {
			t.Fatalf("%s: open orders %+v %v", who, open, err)
		}
		got := open[0]
		if got.ClientOrderID != id || !got.Price.Equal(newPrice) || !got.Quantity.Equal(qty) || !got.Filled.Equal(dec("0.005")) || !got.AveragePrice.Equal(o.Price) {
			t.Errorf("%s lists the replacement as %+v, want the whole order: %s, 0.005 filled at %s", who, got, qty, o.Price)
		}
		if got := lookup(t, a, h, id); got.VenueOrderID != open[0].VenueOrderID || !got.Filled.Equal(dec("0.005")) {
			t.Errorf("%s looks the order up as %+v", who, got)
		}
	}
}

// cancel: an open order is canceled at the fake, under its client id;
// canceling it again is an error, never a success.
func cancel(t *testing.T, h Harness) {
	a := h.Adapter(t)
	id := ClientID()
	o := place(t, a, limit(h, id))
	c, err := a.Cancel(Ctx(t), o)
	if err != nil || c.State != node.VenueCanceled || c.ClientOrderID != id || c.VenueOrderID != o.VenueOrderID {
		t.Fatalf("cancel answered %+v %v, want %s canceled", c, err, o.VenueOrderID)
	}
	if f := fakeOrder(t, h, o.VenueOrderID); f.State != node.VenueCanceled {
		t.Errorf("the fake holds the canceled order as %+v", f)
	}
	if got := lookup(t, a, h, id); got.State != node.VenueCanceled {
		t.Errorf("lookup after the cancel: %+v", got)
	}
	if open, err := a.OpenOrders(Ctx(t), []string{h.Symbol()}); err != nil || len(open) != 0 {
		t.Errorf("open orders after the cancel: %+v %v", open, err)
	}
	if _, err := a.Cancel(Ctx(t), o); !errors.Is(err, node.ErrVenueRejected) && !errors.Is(err, node.ErrVenueNotFound) {
		t.Errorf("a second cancel: %v, want ErrVenueRejected or ErrVenueNotFound", err)
	}
	// A cancel whose answer is lost: unknown or read back, sent once, and the order is canceled.
	o2 := place(t, a, limit(h, ClientID()))
	h.LoseNextAnswer(OpCancel, o2.VenueOrderID)
	before := h.Sent(OpCancel, o2.VenueOrderID)
	if c, err := a.Cancel(Ctx(t), o2); err == nil && c.State != node.VenueCanceled {
		t.Errorf("a cancel whose answer was lost answered %+v", c)
	} else if err != nil && !errors.Is(err, node.ErrVenueUnknown) {
		t.Errorf("a cancel whose answer was lost: %v, want ErrVenueUnknown", err)
	}
	if n := h.Sent(OpCancel, o2.VenueOrderID) - before; n != 1 {
		t.Errorf("the lost cancel was sent %d times", n)
	}
	if got := lookup(t, a, h, o2.ClientOrderID); got.State != node.VenueCanceled {
		t.Errorf("the order whose cancel answer was lost reads back as %+v", got)
	}
}

// stream is one running Stream, its updates in a channel; ended closes
// when Stream returns, err then says why.
type stream struct {
	updates chan node.VenueUpdate
	ended   chan struct{}
	err     error
}

func startStream(t *testing.T, a Exchange) *stream {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	s := &stream{updates: make(chan node.VenueUpdate, 256), ended: make(chan struct{})}
	go func() {
		defer close(s.ended)
		s.err = a.Stream(ctx, func(u node.VenueUpdate) {
			select {
			case s.updates <- u:
			case <-ctx.Done():
			}
		})
	}()
	t.Cleanup(func() {
		stop()
		<-s.ended
	})
	return s
}

// next is the next update; the wait is bounded so a silent stream fails
// rather than hangs.
func (s *stream) next(t *testing.T) node.VenueUpdate {
	t.Helper()
	select {
	case u := <-s.updates:
		return u
	case <-s.ended:
		t.Fatalf("the stream ended: %v", s.err)
	case <-time.After(5 * time.Second):
		t.Fatal("no stream update within 5s")
	}
	return node.VenueUpdate{}
}

// until reads updates until one of the order id passes ok.
func (s *stream) until(t *testing.T, id string, ok func(node.VenueOrder) bool) node.VenueOrder {
	t.Helper()
	for range 32 {
		if u := s.next(t); u.Order != nil && u.Order.ClientOrderID == id && ok(*u.Order) {
			return *u.Order
		}
	}
	t.Fatalf("no update of %s as wanted", id)
	return node.VenueOrder{}
}

// streamDrop: the stream reports it connected and each fill; a drop ends
// Stream with an error; what filled while it was down is read back, and
// a new stream reports connected (the node's cue to resync) and resumes.
func streamDrop(t *testing.T, h Harness) {
	a := h.Adapter(t)
	s := startStream(t, a)
	if u := s.next(t); !u.Connected || u.Order != nil {
		t.Fatalf("the stream's first update is %+v, want connected", u)
	}
	id := ClientID()
	o := place(t, a, limit(h, id))
	h.FillPart(t, o.VenueOrderID, dec("0.005"))
	got := s.until(t, id, func(v node.VenueOrder) bool { return v.Filled.Equal(dec("0.005")) })
	if got.State != node.VenueOpen || got.VenueOrderID != o.VenueOrderID || !got.LastQuantity.Equal(dec("0.005")) || !got.LastPrice.Equal(o.Price) {
		t.Errorf("the partial fill's report: %+v, want open, 0.005 at %s", got, o.Price)
	}
	h.DropStreams()
	select {
	case <-s.ended:
		if s.err == nil {
			t.Error("a dropped stream ended Stream without an error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a dropped stream did not end Stream")
	}
	h.Cross() // fills while no stream listens
	if got := lookup(t, a, h, id); got.State != node.VenueFilled || !got.Filled.Equal(qty) {
		t.Errorf("the fill missed by the stream reads back as %+v", got)
	}
	s2 := startStream(t, a)
	if u := s2.next(t); !u.Connected {
		t.Fatalf("the restarted stream's first update is %+v, want connected", u)
	}
	id2 := ClientID()
	o2 := place(t, a, limit(h, id2))
	h.FillPart(t, o2.VenueOrderID, dec("0.01"))
	if got := s2.until(t, id2, func(v node.VenueOrder) bool { return v.Filled.Equal(dec("0.01")) }); got.State != node.VenueOpen {
		t.Errorf("after the restart, a fill reported as %+v", got)
	}
}

// reconcile: OpenOrders and Lookup agree with the fake over a mix of
// resting, partly filled, filled and canceled orders, for this adapter
// and for one started afterwards (the node's restart).
func reconcile(t *testing.T, h Harness) {
	a := h.Adapter(t)
	resting := place(t, a, limit(h, ClientID()))
	part := place(t, a, limit(h, ClientID()))
	h.FillPart(t, part.VenueOrderID, dec("0.007"))
	filled := place(t, a, market(h, ClientID()))
	gone := place(t, a, limit(h, ClientID()))
	if _, err := a.Cancel(Ctx(t), gone); err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{} // venue order id → client id
	for _, o := range []node.VenueOrder{resting, part, filled, gone} {
		ids[o.VenueOrderID] = o.ClientOrderID
	}
	for who, a := range map[string]Exchange{"this adapter": a, "an adapter started afterwards": h.Adapter(t)} {
		open, err := a.OpenOrders(Ctx(t), []string{h.Symbol()})
		if err != nil {
			t.Fatalf("%s: open orders: %v", who, err)
		}
		listed := map[string]node.VenueOrder{}
		for _, o := range open {
			listed[o.VenueOrderID] = o
		}
		for _, f := range h.Orders() {
			got, isOpen := listed[f.VenueOrderID]
			if isOpen != (f.State == node.VenueOpen) {
				t.Errorf("%s: the fake holds %s as %s, yet open orders list it: %v", who, f.VenueOrderID, f.State, isOpen)
			}
			if isOpen && (got.ClientOrderID != ids[f.VenueOrderID] || !got.Filled.Equal(f.Filled) || !got.Quantity.Equal(f.Quantity)) {
				t.Errorf("%s: open order %+v, the fake holds %+v", who, got, f)
			}
			look := lookup(t, a, h, ids[f.VenueOrderID])
			if look.VenueOrderID != f.VenueOrderID || look.State != f.State || !look.Filled.Equal(f.Filled) {
				t.Errorf("%s: lookup of %s says %s %s filled, the fake %s %s", who, ids[f.VenueOrderID], look.State, look.Filled, f.State, f.Filled)
			}
		}
		if len(open) != 2 {
			t.Errorf("%s: %d open orders, want 2 (resting and partly filled)", who, len(open))
		}
	}
}
