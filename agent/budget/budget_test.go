package budget

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/testkit"
	"wicket/node/command"
	"wicket/node/guardrail"
)

// t0 is where every test's clock starts.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func spend(t *testing.T, s *Session, n string) []string {
	t.Helper()
	h, err := s.Reserve(testkit.D(n), true)
	if err != nil {
		t.Fatalf("Reserve(%s): %v", n, err)
	}
	return h.Commit()
}

func refused(t *testing.T, err error, limit string, want ...string) {
	t.Helper()
	r, ok := err.(*Refusal)
	if !ok {
		t.Fatalf("want a *Refusal for %s, got %v", limit, err)
	}
	if r.Limit != limit || !strings.HasPrefix(r.Text, "REFUSED [budget] "+limit+": ") || !strings.Contains(r.Text, "Only the operator can widen") {
		t.Errorf("refusal = %+v", r)
	}
	for _, w := range want {
		if !strings.Contains(r.Text, w) {
			t.Errorf("refusal %q lacks %q", r.Text, w)
		}
	}
}

// TestMaxWritesEdges: N-1 and N confirmed writes pass, N+1 is refused
// saying 0 left.
func TestMaxWritesEdges(t *testing.T) {
	for _, n := range []int{1, 2, 5} {
		c := testkit.NewClock(t0)
		s := New(Limits{MaxWrites: n}, c.Now)
		for i := 0; i < n-1; i++ {
			spend(t, s, "0")
		}
		if got := s.Status()[NameWrites]; got.Left != "1" {
			t.Errorf("n=%d after N-1: %+v", n, got)
		}
		spend(t, s, "0") // the N-th
		_, err := s.Reserve(decimal.Zero, true)
		refused(t, err, NameWrites, "0 left", "--max-writes", "[agent] max_writes")
		if got := s.Status()[NameWrites]; got.Used != itoa(n) || got.Left != "0" {
			t.Errorf("n=%d status %+v", n, got)
		}
	}
}

func itoa(n int) string { return decimal.NewFromInt(int64(n)).String() }

// TestReleaseGivesBack: a write that was not sent does not count.
func TestReleaseGivesBack(t *testing.T) {
	c := testkit.NewClock(t0)
	s := New(Limits{MaxWrites: 1, MaxNotional: testkit.D("100"), MaxPerMinute: 1}, c.Now)
	h, err := s.Reserve(testkit.D("100"), true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reserve(testkit.D("0"), true); err == nil {
		t.Fatal("a second write fit while the first was held")
	}
	h.Release()
	h.Release() // twice is harmless
	if w := h.Commit(); w != nil {
		t.Errorf("commit after release warned %v", w)
	}
	st := s.Status()
	if st[NameWrites].Used != "0" || st[NameNotional].Used != "0" || st[NamePerMinute].Used != "0" {
		t.Errorf("after release: %+v", st)
	}
	spend(t, s, "100")
}

// TestNotionalAtDecimalPrecision: the budget is exact to the last decimal.
func TestNotionalAtDecimalPrecision(t *testing.T) {
	c := testkit.NewClock(t0)
	s := New(Limits{MaxNotional: testkit.D("1000.00000001")}, c.Now)
	spend(t, s, "600.1")
	spend(t, s, "399.9") // 1000 exactly: 0.00000001 left
	if got := s.Status()[NameNotional]; got.Used != "1000" || got.Left != "0.00000001" {
		t.Errorf("status %+v", got)
	}
	_, err := s.Reserve(testkit.D("0.00000002"), true)
	refused(t, err, NameNotional, "0.00000002 exceeds", "0.00000001 left")
	spend(t, s, "0.00000001") // exactly what is left fits
	_, err = s.Reserve(testkit.D("0.00000001"), true)
	refused(t, err, NameNotional, "0 left")
	// A zero-notional write (a cancel) still fits when notional is spent.
	spend(t, s, "0")
}

// TestNotionalEdges: N-1, N and N+1 of the smallest unit around the limit.
func TestNotionalEdges(t *testing.T) {
	for _, tc := range []struct {
		order string
		ok    bool
	}{{"99.99", true}, {"100", true}, {"100.01", false}} {
		s := New(Limits{MaxNotional: testkit.D("100")}, testkit.NewClock(t0).Now)
		_, err := s.Reserve(testkit.D(tc.order), true)
		if (err == nil) != tc.ok {
			t.Errorf("order %s against 100: err=%v", tc.order, err)
		}
	}
}

// TestUnvalued: an order that cannot be valued is refused only when a
// notional budget is set.
func TestUnvalued(t *testing.T) {
	s := New(Limits{MaxWrites: 3}, testkit.NewClock(t0).Now)
	if _, err := s.Reserve(decimal.Zero, false); err != nil {
		t.Errorf("no notional budget: %v", err)
	}
	s = New(Limits{MaxNotional: testkit.D("5")}, testkit.NewClock(t0).Now)
	_, err := s.Reserve(decimal.Zero, false)
	refused(t, err, NameNotional, "cannot be valued")
}

// TestPerMinuteWindow: N-1, N fit in a minute, N+1 is refused with the wait,
// and the window slides with the injected clock.
func TestPerMinuteWindow(t *testing.T) {
	c := testkit.NewClock(t0)
	s := New(Limits{MaxPerMinute: 3}, c.Now)
	spend(t, s, "0") // t0
	c.Advance(20 * time.Second)
	spend(t, s, "0") // t0+20
	c.Advance(10 * time.Second)
	spend(t, s, "0") // t0+30: the N-th
	_, err := s.Reserve(decimal.Zero, true)
	refused(t, err, NamePerMinute, "3 of 3", "0 left", "next one fits in 30s")
	c.Advance(29*time.Second + 999*time.Millisecond) // t0+59.999: the first still counts
	_, err = s.Reserve(decimal.Zero, true)
	refused(t, err, NamePerMinute, "next one fits in 1s")
	c.Advance(time.Millisecond) // t0+60: the first leaves the window
	spend(t, s, "0")
	if got := s.Status()[NamePerMinute]; got.Used != "3" || got.Left != "0" {
		t.Errorf("status %+v", got)
	}
	c.Advance(time.Hour)
	if got := s.Status()[NamePerMinute]; got.Used != "0" || got.Left != "3" {
		t.Errorf("after an hour %+v", got)
	}
}

// TestWarnAtEightyPercent: each budget warns once when it reaches 80 %.
func TestWarnAtEightyPercent(t *testing.T) {
	c := testkit.NewClock(t0)
	s := New(Limits{MaxWrites: 5, MaxNotional: testkit.D("1000")}, c.Now)
	if w := spend(t, s, "100"); len(w) != 0 { // 1/5, 100/1000
		t.Errorf("early warning %v", w)
	}
	if w := spend(t, s, "100"); len(w) != 0 { // 2/5
		t.Errorf("early warning %v", w)
	}
	if w := spend(t, s, "599.99"); len(w) != 0 { // 3/5, 799.99/1000
		t.Errorf("early warning %v", w)
	}
	w := spend(t, s, "0.01") // 4/5 = 80 %, 800/1000 = 80 %
	if len(w) != 2 || !strings.Contains(w[0], "max-writes is 80% used: 4 of 5") || !strings.Contains(w[1], "max-notional is 80% used: 800 of 1000, 200 left") {
		t.Errorf("warnings at 80%%: %q", w)
	}
	if w := spend(t, s, "1"); len(w) != 0 {
		t.Errorf("warned twice: %v", w)
	}
}

// TestPerMinuteWarningRearms: the per-minute warning fires each time the
// window climbs back to 80 %.
func TestPerMinuteWarningRearms(t *testing.T) {
	c := testkit.NewClock(t0)
	s := New(Limits{MaxPerMinute: 5}, c.Now)
	for i := 0; i < 3; i++ {
		if w := spend(t, s, "0"); len(w) != 0 {
			t.Fatalf("write %d warned %v", i+1, w)
		}
	}
	if w := spend(t, s, "0"); len(w) != 1 || !strings.Contains(w[0], "4 of 5 confirmed writes in the last minute, 1 left") {
		t.Errorf("4/5: %q", w)
	}
	if w := spend(t, s, "0"); len(w) != 0 {
		t.Errorf("5/5 warned again: %q", w)
	}
	c.Advance(2 * time.Minute)
	spend(t, s, "0")
	spend(t, s, "0")
	spend(t, s, "0")
	if w := spend(t, s, "0"); len(w) != 1 {
		t.Errorf("not re-armed: %q", w)
	}
}

func TestUnlimited(t *testing.T) {
	s := New(Limits{}, testkit.NewClock(t0).Now)
	for i := 0; i < 1000; i++ {
		if w := spend(t, s, "1000000"); w != nil {
			t.Fatal(w)
		}
	}
	if len(s.Status()) != 0 || !s.Limits().IsZero() || s.Limits().String() != "none" {
		t.Errorf("unlimited status %v %s", s.Status(), s.Limits())
	}
}

func TestValidate(t *testing.T) {
	for _, l := range []Limits{{MaxWrites: -1}, {MaxNotional: testkit.D("-0.01")}, {MaxPerMinute: -1}} {
		if err := l.Validate(); err == nil || !strings.Contains(err.Error(), "negative") {
			t.Errorf("%+v: %v", l, err)
		}
	}
	l := Limits{MaxWrites: 3, MaxNotional: testkit.D("2500.5"), MaxPerMinute: 2}
	if err := l.Validate(); err != nil || l.String() != "--max-writes 3 --max-notional 2500.5 --max-writes-per-minute 2" {
		t.Errorf("%v %q", err, l.String())
	}
}

type view struct {
	marks  map[string]decimal.Decimal
	orders []guardrail.Order
}

func (v view) Mark(_, sym string) (decimal.Decimal, bool) { m, ok := v.marks[sym]; return m, ok }
func (v view) Position(string, string) decimal.Decimal    { return decimal.Zero }
func (v view) OpenOrder(_, id, coid string) (guardrail.Order, bool) {
	for _, o := range v.orders {
		if (id != "" && o.ID == id) || (coid != "" && o.ClientOrderID == coid) {
			return o, true
		}
	}
	return guardrail.Order{}, false
}

func TestNotional(t *testing.T) {
	v := view{marks: map[string]decimal.Decimal{"BTC-USD": testkit.D("60000.25")},
		orders: []guardrail.Order{{ID: "o1", ClientOrderID: "c1", Quantity: testkit.D("2"), Price: testkit.D("10.5"), Type: command.Limit}}}
	for _, tc := range []struct {
		c      command.Command
		view   guardrail.View
		want   string
		valued bool
	}{
		{command.Command{Verb: command.SubmitOrder, Type: command.Market, Symbol: "BTC-USD", Quantity: testkit.D("0.5")}, v, "30000.125", true},
		{command.Command{Verb: command.SubmitOrder, Type: command.Market, Symbol: "ETH-USD", Quantity: testkit.D("0.5")}, v, "0", false},
		{command.Command{Verb: command.SubmitOrder, Type: command.Market, Symbol: "BTC-USD", Quantity: testkit.D("0.5")}, nil, "0", false},
		{command.Command{Verb: command.SubmitOrder, Type: command.Limit, Symbol: "ETH-USD", Quantity: testkit.D("0.001"), Price: testkit.D("3000.01")}, nil, "3.00001", true},
		{command.Command{Verb: command.Modify, OrderID: "o1", Quantity: testkit.D("3")}, v, "31.5", true},
		{command.Command{Verb: command.Modify, ClientOrderID: "c1", Price: testkit.D("11")}, v, "22", true},
		{command.Command{Verb: command.Modify, OrderID: "nope", Price: testkit.D("11")}, v, "0", false},
		{command.Command{Verb: command.CancelOrder, OrderID: "o1"}, nil, "0", true},
		{command.Command{Verb: command.Flatten}, nil, "0", true},
	} {
		n, ok := Notional(tc.c, tc.view)
		if n.String() != tc.want || ok != tc.valued {
			t.Errorf("%s %+v: %s %v, want %s %v", tc.c.Verb, tc.c, n, ok, tc.want, tc.valued)
		}
	}
}

// TestConcurrentReserveNeverOverspends: many confirms at once fit exactly
// the budget, never one more.
func TestConcurrentReserveNeverOverspends(t *testing.T) {
	c := testkit.NewClock(t0)
	s := New(Limits{MaxWrites: 7, MaxNotional: testkit.D("10")}, c.Now)
	var wg sync.WaitGroup
	var mu sync.Mutex
	admitted := 0
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := s.Reserve(testkit.D("1.5"), true)
			if err != nil {
				return
			}
			h.Commit()
			mu.Lock()
			admitted++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if admitted != 6 { // 6 × 1.5 = 9 ≤ 10 < 10.5, and 6 < 7 writes
		t.Errorf("%d admitted, want 6", admitted)
	}
	if st := s.Status(); st[NameNotional].Used != "9" || st[NameNotional].Left != "1" || st[NameWrites].Used != "6" {
		t.Errorf("status %+v", st)
	}
}
