package deploy

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/binancefutures/binancefuturesfake"
	"wicket/node/nodetest"
	"wicket/node/venuerig"
	"wicket/strategy"
	"wicket/strategy/backtest"
	"wicket/strategy/history"
	"wicket/strategy/script"
	"wicket/strategy/ta"
	"wicket/strategy/templates"
)

// futuresRun is a long-short deployment played bar by bar on a
// binance-futures venue behind the fake of its API (futuresTape).
type futuresRun struct {
	all      strategy.Bars // warm-up and the bars played
	from     int           // the first bar played
	f        *binancefuturesfake.Fake
	r        *Runner
	id       string
	settled  map[int]string            // bar index → the funding rate settled at its open
	payments map[int64]decimal.Decimal // the fake's tranId → the payment it booked
	history  string                    // research's history store (stored funding rates)
}

const (
	futSym    = "ETHUSDT"
	futSeries = futSym + "@1m"
	futVenue  = "perps"
)

// futuresTape plays n bars after warm bars of warm-up through a long-short
// deployment (ema_long_short, auto) on a binance-futures venue: flip =
// "split", ETHUSDT at leverage 2, isolated. The node and the runner share
// a stepping clock set to each bar's close; before the deployment
// handles bar i the fake's price (its last and mark) is moved to bar
// i+1's open, so a market order decided at bar i's close fills where the
// backtest fills it; every 40 bars the fake settles funding at the open
// (the position × that open × a rate), and the next bar waits until the
// node has booked it from the venue's income history.
func futuresTape(t *testing.T, warm, n int) *futuresRun {
	t.Helper()
	all := futuresBars(warm+n, 23, time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC))
	g := &futuresRun{all: all, from: warm, settled: map[int]string{}, payments: map[int64]decimal.Decimal{},
		history: filepath.Join(t.TempDir(), "history.db")}
	at := func(i int) time.Time { return time.Unix(all.Time[i], 0).UTC() }
	price := func(v float64) string { return decimal.NewFromFloat(v).StringFixed(2) }

	clk := testkit.NewClock(at(warm))
	g.f = venuerig.BinanceFutures(t, "100000", futSym)
	g.f.SetTakerCommission(futTaker) // charged per trade, in USDT, as Binance's default taker rate
	g.f.SetPrice(futSym, price(all.Open[warm]))
	ns := venuerig.Node(t, project.Defaults(), []venuerig.Venue{venuerig.OnBinanceFutures(g.f, project.Venue{Name: futVenue, Environment: "testnet", MayArm: true,
		Symbols: []string{futSym}, Futures: project.Futures{Flip: project.FlipSplit,
			Contracts: map[string]project.Contract{futSym: {Leverage: 2, MarginType: "isolated"}}}})}, nodetest.WithClock(clk.Now))
	c := ns.Client(node.WithClock(clk.Now)) // signs on the node's clock
	venuerig.WaitSynced(t, c, futVenue)
	if _, err := c.Arm(ctxT(t), futVenue, 24*time.Hour, futVenue, ns.OperatorKey); err != nil {
		t.Fatal(err)
	}
	hist := func(_ context.Context, series string, before time.Time, k int) (strategy.Bars, error) {
		end := sort.Search(all.Len(), func(i int) bool { return all.Time[i] > before.Add(-time.Minute).Unix() })
		out := strategy.Bars{Series: series}
		for i := max(0, end-k); i < end; i++ {
			appendBar(&out, all.Time[i], all.Open[i], all.High[i], all.Low[i], all.Close[i], all.Volume[i])
		}
		return out, nil
	}
	nextOpen := func(_ string, bar time.Time) (decimal.Decimal, bool) {
		i := sort.Search(all.Len(), func(i int) bool { return all.Time[i] > bar.Unix() })
		if i >= all.Len() {
			return decimal.Zero, false
		}
		return decimal.NewFromFloat(all.Open[i]), true
	}
	var err error
	g.r, err = New(ctxT(t), Config{Project: ns.Config, Store: openStore(t, t.TempDir()), Node: ns.Local(node.KeyControl), Strategies: newPool(t),
		OperatorKey: ns.OperatorKey.Public().(ed25519.PublicKey), Now: clk.Now, NewID: seq(), History: hist, NextOpen: nextOpen,
		FundingRates: StoredFunding(g.history)})
	if err != nil {
		t.Fatal(err)
	}
	src, err := templates.Source("ema_long_short")
	if err != nil {
		t.Fatal(err)
	}
	d, err := g.r.Create(ctxT(t), Spec{Strategy: "ema_long_short.star", Source: src, Params: map[string]any{"fast": 5, "slow": 12},
		Series: futSeries, Venue: futVenue, Mode: ModeAuto, Capital: decimal.NewFromInt(10000), Warmup: 250})
	if err != nil {
		t.Fatal(err)
	}
	g.id = d.ID
	operatorArms(t, g.r, d.ID, ns.OperatorKey, "24h")

	rates := []string{"0.0001", "-0.00025", "0.0004", "0.00005", "-0.0001", "0.0003"}
	var booked decimal.Decimal
	for i := warm; i < all.Len(); i++ {
		clk.Set(at(i).Add(time.Minute))
		if i+1 < all.Len() {
			g.f.SetPrice(futSym, price(all.Open[i+1]))
		}
		b := Bar{Time: at(i), Open: all.Open[i], High: all.High[i], Low: all.Low[i], Close: all.Close[i], Volume: all.Volume[i]}
		if err := g.r.Step(ctxT(t), d.ID, b); err != nil {
			t.Fatal(err)
		}
		if j := i + 1; j < all.Len() && (j-warm)%40 == 0 {
			rate := rates[len(g.settled)%len(rates)]
			amt, tran := g.f.SettleFunding(futSym, rate, at(j))
			if tran == 0 {
				continue // no position: the venue charges none
			}
			g.settled[j], g.payments[tran] = rate, amt
			booked = booked.Add(amt)
			testkit.WaitFor(t, "the node books the funding from the venue's income history", 10*time.Second, func() (bool, string) {
				snap, err := c.Snapshot(context.Background(), futVenue, 0)
				if err == nil && snap.Venues[0].Funding.Equal(booked) {
					return true, ""
				}
				// The node reads the income history once a second of its
				// clock: a read that began before the payment is followed
				// by one a second later, before the next bar closes.
				if clk.Now().Before(at(j).Add(50 * time.Second)) {
					clk.Advance(time.Second)
				}
				return false, fmt.Sprintf("booked %s, the fake paid %s (%v)", snap.Venues[0].Funding, booked, err)
			})
		}
	}
	return g
}

// futuresBars is n 1m bars of ETHUSDT (a seeded walk near 3000 whose
// opens gap from the closes before them), prices at the venue's tick.
func futuresBars(n int, seed uint64, start time.Time) strategy.Bars {
	b := strategy.Bars{Series: futSeries}
	x := seed
	next := func() float64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return (float64(x%2001) - 1000) / 1000 }
	price := 3000.0
	for i := range n {
		open := math.Round(price*(1+next()*0.001)*100) / 100
		cl := math.Round(open*(1+next()*0.004)*100) / 100
		hi := math.Max(open, cl) + math.Round(math.Abs(next())*300)/100
		lo := math.Min(open, cl) - math.Round(math.Abs(next())*300)/100
		appendBar(&b, start.Add(time.Duration(i)*time.Minute).Unix(), open, hi, lo, cl, 1)
		price = cl
	}
	return b
}

// backtest runs the deployment's strategy over the played bars as
// research would, with the fake's rates as funding settlements (stored
// gives other rates at the same times; nil: the fake's) or none, and with
// the venue's commission (futTaker) or, as the deployment's replay models
// a real venue, none.
func (g *futuresRun) backtest(t *testing.T, funding bool, stored map[int]string, commission bool) (*backtest.Result, strategy.Signals, []backtest.FillEvent) {
	t.Helper()
	src, _ := templates.Source("ema_long_short")
	s, err := script.Load(ctxT(t), script.Source{Name: "ema_long_short.star", Text: src}, script.Options{Memo: ta.NewMemo(0),
		Overrides: map[string]any{"fast": 5, "slow": 12}})
	if err != nil {
		t.Fatal(err)
	}
	full, err := s.Signals(ctxT(t), g.all)
	if err != nil {
		t.Fatal(err)
	}
	sig := full.From(g.from)
	bc := backtest.DefaultConfig()
	bc.Capital, bc.FeeBps, bc.SlippageBps = decimal.NewFromInt(10000), 0, 0 // a real venue's fills are its own
	if commission {
		bc.FeeBps = 4 // futTaker
	}
	var fills []backtest.FillEvent
	bc.OnFill = func(f backtest.FillEvent) { fills = append(fills, f) }
	if funding {
		if stored == nil {
			stored = g.settled
		}
		bc.Costs.Funding = true
		for _, j := range sortedKeys(stored) {
			r, _ := decimal.RequireFromString(stored[j]).Float64()
			bc.Costs.FundingRates = append(bc.Costs.FundingRates, backtest.FundingRate{Time: g.all.Time[j], Rate: r})
		}
	}
	res, err := backtest.Run(ctxT(t), g.all.Slice(g.from, g.all.Len()), bc, backtest.Decisions{Signals: &sig})
	if err != nil {
		t.Fatal(err)
	}
	return res, sig, fills
}

func sortedKeys(m map[int]string) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

// TestFuturesLongShortDeploymentEqualsBacktest: ema_long_short deployed
// auto on a binance-futures venue (the fake of Binance USDⓈ-M's API)
// goes long and short through the node's one write path, every flip
// split into a reduce-only close and the opening remainder, at the
// leverage and margin type the venue's table sets (checked at start);
// the funding the venue settles is booked from its income history into
// the deployment's book and report. Its decisions equal a backtest of the
// same bars with the same funding settlements (bar, side, quantity to
// the venue's step, price to the cent), and its fills, fees and funding
// equal what the fake charged, to the cent.
// futTaker is the fake's commission rate: 4 bps, the backtest's FeeBps.
const futTaker = "0.0004"

func TestFuturesLongShortDeploymentEqualsBacktest(t *testing.T) {
	t.Parallel()
	const warm, n = 300, 480
	g := futuresTape(t, warm, n)
	res, sig, _ := g.backtest(t, true, nil, true)

	// Leverage and margin type: set at the venue at start, as the table says.
	if p := g.f.Position(futSym); p.Leverage != 2 || p.MarginType != "ISOLATED" {
		t.Errorf("the venue's %s: leverage %d, margin %s; the table says 2, isolated", futSym, p.Leverage, p.MarginType)
	}
	decs, err := g.r.cfg.Store.Decisions(g.id)
	if err != nil {
		t.Fatal(err)
	}
	if len(decs) != n {
		t.Fatalf("%d decisions for %d bars", len(decs), n)
	}
	bars := g.all.Slice(g.from, g.all.Len())
	for i, dc := range decs {
		want := sig.TargetAt(i)
		if !dc.Bar.Equal(time.Unix(bars.Time[i], 0)) || dc.Status != DecisionDecided || dc.HasTarget != (want == want) || (dc.HasTarget && dc.Target != want) {
			t.Fatalf("bar %d: live decision %+v, backtest target %v", i, dc, want)
		}
	}

	// Fills netted per bar: the backtest's (its trades' entries and
	// exits) and live's (each intent's fill at the open after its bar).
	type net struct {
		qty   decimal.Decimal
		price string
	}
	add := func(m map[int]*net, bar int, qty decimal.Decimal, price string) {
		if m[bar] == nil {
			m[bar] = &net{}
		}
		m[bar].qty = m[bar].qty.Add(qty)
		if m[bar].price == "" || m[bar].price == price {
			m[bar].price = price
		} else {
			m[bar].price += "|" + price
		}
	}
	want, got := map[int]*net{}, map[int]*net{}
	shorts, flips := 0, 0
	entries := map[int]bool{}
	for _, tr := range res.AllTrades {
		q := decimal.NewFromFloat(tr.Quantity)
		if tr.Side == "short" {
			q, shorts = q.Neg(), shorts+1
		}
		add(want, tr.EntryBar, q, money(tr.EntryPrice))
		add(want, tr.ExitBar, q.Neg(), money(tr.ExitPrice))
		entries[tr.EntryBar] = true
	}
	if p := res.OpenPosition; p != nil {
		add(want, p.EntryBar, decimal.NewFromFloat(p.Quantity), money(p.EntryPrice))
		entries[p.EntryBar] = true
	}
	for _, tr := range res.AllTrades {
		if entries[tr.ExitBar] {
			flips++
		}
	}
	if shorts < 5 || len(res.AllTrades)-shorts < 5 || flips < 10 {
		t.Fatalf("the backtest's %d trades: %d shorts, %d flips; the fixture should go long and short often", len(res.AllTrades), shorts, flips)
	}
	index := map[int64]int{}
	for i, ts := range bars.Time {
		index[ts] = i
	}
	intents, err := g.r.cfg.Store.Intents(g.id)
	if err != nil {
		t.Fatal(err)
	}
	var liveQty, liveValue, liveFees decimal.Decimal
	for _, in := range intents {
		if !in.Filled.IsPositive() {
			continue
		}
		q := in.Filled
		if in.Side == "sell" {
			q = q.Neg()
		}
		liveQty, liveValue, liveFees = liveQty.Add(q), liveValue.Add(q.Mul(in.Price)), liveFees.Add(in.Fee)
		p, _ := in.Price.Float64()
		add(got, index[in.Bar.Unix()]+1, q, money(p)) // decided at bar i's close, filled at bar i+1's open
	}
	step := decimal.RequireFromString("0.001") // the venue's quantity step
	same := len(got) == len(want)
	for bar, w := range want {
		gf := got[bar]
		// Live quantities are cut to the venue's step and sized from an
		// equity the cuts moved a little; a flip nets two of them.
		same = same && gf != nil && gf.price == w.price && gf.qty.Sub(w.qty).Abs().LessThanOrEqual(step.Mul(decimal.NewFromInt(2)))
	}
	if !same {
		show := func(m map[int]*net) string {
			var out []string
			for bar, f := range m {
				out = append(out, fmt.Sprintf("%05d %s @ %s", bar, f.qty.StringFixed(6), f.price))
			}
			sort.Strings(out)
			return strings.Join(out, "\n")
		}
		dumpIntents(t, g)
		t.Fatalf("live fills differ from the backtest's:\nlive (%d bars):\n%s\nbacktest (%d bars):\n%s", len(got), show(got), len(want), show(want))
	}

	// What the fake charged: its position, the value of its fills, the
	// commission on them and the funding it paid, to the cent.
	var fakeValue decimal.Decimal
	reduceOnly := 0
	for _, o := range g.f.Orders() {
		v := o.Quote
		if o.Side == "SELL" {
			v = v.Neg()
		}
		fakeValue = fakeValue.Add(v)
		if o.ReduceOnly && o.Status == "FILLED" {
			reduceOnly++
		}
	}
	if reduceOnly != flips {
		t.Errorf("%d reduce-only closes filled at the venue for %d flips", reduceOnly, flips)
	}
	dep, _ := g.r.Get(g.id)
	if pos := g.f.Position(futSym).Amount; !liveQty.Equal(pos) || !dep.Position.Equal(pos) {
		t.Errorf("position: the venue's %s, the deployment's %s, its fills' %s", pos, dep.Position, liveQty)
	}
	if !liveValue.Round(2).Equal(fakeValue.Round(2)) {
		t.Errorf("the value of the fills: the deployment's %s, the venue's %s", liveValue, fakeValue)
	}
	fee := g.f.Commissions(futSym)
	if !fee.IsPositive() || !liveFees.Equal(fee) {
		t.Errorf("fees: the deployment's fills' %s, the venue's commission %s", liveFees, fee)
	}
	var paid decimal.Decimal
	for _, a := range g.payments {
		paid = paid.Add(a)
	}
	// The deployment's cash is its capital less what the venue's fills
	// and commission cost it, plus the funding the venue paid.
	if want := decimal.NewFromInt(10000).Sub(fakeValue).Sub(fee).Add(paid); !dep.Cash.Round(2).Equal(want.Round(2)) {
		t.Errorf("the deployment's cash %s; the venue's fills, commission and funding make it %s", dep.Cash, want)
	}
	pays, err := g.r.cfg.Store.FundingPayments(g.id)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.payments) < 8 || len(pays) != len(g.payments) || !dep.Funding.Equal(paid) {
		t.Fatalf("funding: the deployment booked %s in %d payments, the venue paid %s in %d", dep.Funding, len(pays), paid, len(g.payments))
	}
	for _, p := range pays {
		if a, ok := g.payments[mustInt(t, p.ID)]; !ok || !p.Amount.Equal(a) || !p.Venue.Equal(a) {
			t.Errorf("funding payment %+v: the venue booked %s", p, a)
		}
	}
	// The backtest with the same settlements pays the same funding but
	// for the step's cuts of live's position (at most a step × the open
	// × the rate each); its cash and so its sizes take it as live's do.
	var bound decimal.Decimal
	for j, rate := range g.settled {
		bound = bound.Add(step.Mul(decimal.NewFromFloat(g.all.Open[j])).Mul(decimal.RequireFromString(rate).Abs()))
	}
	btPaid := decimal.NewFromFloat(res.Metrics.FundingPaid).Neg()
	if gap := btPaid.Sub(paid).Abs(); gap.GreaterThan(bound.Add(decimal.New(1, -2))) {
		t.Errorf("funding: the venue paid %s, the backtest %s (a gap of %s over the step's bound %s)", paid, btPaid, gap, bound)
	}
	rep, err := g.r.Report(ctxT(t), g.id)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Funding) != len(pays) || rep.Replayed != n || rep.Equal != n {
		t.Fatalf("report: %d funding payments, %d of %d decisions replayed equal", len(rep.Funding), rep.Equal, rep.Replayed)
	}
	for i, p := range rep.Funding {
		if q := pays[i]; p.ID != q.ID || !p.Time.Equal(q.Time) || !p.Amount.Equal(q.Amount) || !p.Position.Equal(q.Position) {
			t.Errorf("report's funding payment %+v, the book's %+v", p, pays[i])
		}
	}
	// No stored rates: the replay pays the rates live's payments imply,
	// on its own position, which the venue's step sets apart, and its
	// sizes, which grow from an equity that pays no commission (a real
	// venue's fees are its own, not modelled): at most the funding paid
	// × the commission's share of the capital, twice over.
	sized := paid.Abs().Mul(liveFees).Div(decimal.NewFromInt(10000)).Mul(decimal.NewFromInt(2))
	if a := rep.Attribution; a == nil || a.Total.Funding.Money.Abs().GreaterThan(bound.Add(sized)) || !a.Total.Funding.Money.Equal(paid.Sub(a.ReplayFunding)) {
		t.Errorf("attribution at the implied rates: %+v (the step's bound %s, the sizes' %s)", a, bound, sized)
	}
	t.Logf("%d bars, %d trades (%d short, %d flips), %d reduce-only closes; funding paid %s in %d settlements (backtest %s, bound %s); final equity %s, backtest %.2f",
		n, len(res.AllTrades), shorts, flips, reduceOnly, paid, len(pays), btPaid.StringFixed(4), bound.StringFixed(4), dep.Equity.StringFixed(2), res.Curve.Equity[n-1])
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	v, err := decimal.NewFromString(s)
	if err != nil {
		t.Fatalf("%q is not a venue id: %v", s, err)
	}
	return v.IntPart()
}

// dumpIntents logs the deployment's intents, for a failure's reader.
func dumpIntents(t *testing.T, g *futuresRun) {
	in, _ := g.r.cfg.Store.Intents(g.id)
	for _, x := range in {
		t.Logf("%s %s %s %s filled %s @ %s: %s %s", x.Bar.Format("15:04"), x.ClientOrderID, x.Side, x.Quantity, x.Filled, x.Price, x.Status, x.Note)
	}
}

// TestFuturesReplayChargesStoredFunding: the replay the tracking report
// attributes a futures deployment's P&L against charges research's stored
// funding rates of the symbol (the history store `wicket data fetch
// --funding` writes), by the backtest's rule, not the rates the live
// payments imply: with stored rates other than the venue's (and at a
// time the venue settled none), the attribution's funding part is live's
// payments less the replay's at the stored rates, exactly. With none
// stored, the replay falls back to the implied rates and the report says
// so.
func TestFuturesReplayChargesStoredFunding(t *testing.T) {
	t.Parallel()
	const warm, n = 300, 480
	g := futuresTape(t, warm, n)
	var live decimal.Decimal
	for _, a := range g.payments {
		live = live.Add(a)
	}
	rep, err := g.r.Report(ctxT(t), g.id)
	if err != nil {
		t.Fatal(err)
	}
	a := rep.Attribution
	if a == nil || !strings.Contains(strings.Join(a.Notes, "\n"), "no funding rates of ETH-USD are stored: the replay charges the rate each of live's") {
		t.Fatalf("no stored rates: attribution %+v", a)
	}
	implied := a.Total.Funding.Money
	if !implied.Equal(live.Sub(a.ReplayFunding)) {
		t.Errorf("implied rates: funding part %s, live %s less the replay's %s", implied, live, a.ReplayFunding)
	}

	// Stored rates: the venue's times with other rates, and one more
	// settlement between two of the venue's.
	stored := map[int]string{}
	for j, rate := range g.settled {
		stored[j] = decimal.RequireFromString(rate).Mul(decimal.NewFromInt(-2)).Add(decimal.RequireFromString("0.0001")).String()
	}
	stored[warm+100] = "0.0007"
	hs, err := history.Open(g.history)
	if err != nil {
		t.Fatal(err)
	}
	var rows []history.FundingRate
	for _, j := range sortedKeys(stored) {
		rows = append(rows, history.FundingRate{Time: time.Unix(g.all.Time[j], 0).UTC(), Rate: decimal.RequireFromString(stored[j])})
	}
	if err := hs.WriteFunding(ctxT(t), "ETH-USDT", rows); err != nil { // as data fetch --funding ETH-USDT writes it
		t.Fatal(err)
	}
	hs.Close()
	rep, err = g.r.Report(ctxT(t), g.id)
	if err != nil {
		t.Fatal(err)
	}
	a = rep.Attribution
	if !strings.Contains(strings.Join(a.Notes, "\n"), fmt.Sprintf("the replay charges the %d funding rates of ETH-USD stored", len(stored))) {
		t.Fatalf("stored rates: notes %q", a.Notes)
	}
	// The replay's funding, again: its position at each settlement's bar
	// (the backtest's fills over the same bars, no funding, each quantity
	// in the attribution's places) × that bar's open × the stored rate.
	_, _, fills := g.backtest(t, false, nil, false)
	var want decimal.Decimal
	for _, j := range sortedKeys(stored) {
		k := j - g.from
		var pos decimal.Decimal
		for _, f := range fills {
			if f.Bar < k || (f.Bar == k && f.Exit == "") {
				pos = pos.Add(decimal.NewFromFloat(f.Qty).Round(attribPlaces))
			}
		}
		want = want.Add(pos.Mul(decimal.NewFromFloat(g.all.Open[j])).Mul(decimal.RequireFromString(stored[j])).Neg().Round(attribPlaces))
	}
	if !a.ReplayFunding.Equal(want) || !a.Total.Funding.Money.Equal(live.Sub(want)) {
		t.Fatalf("stored rates: the replay's funding %s (want %s), the funding part %s (want live %s less it: %s)",
			a.ReplayFunding, want, a.Total.Funding.Money, live, live.Sub(want))
	}
	if a.Total.Funding.Money.Sub(implied).Abs().LessThan(decimal.NewFromInt(1)) {
		t.Fatalf("the funding part at the stored rates %s is the implied rates' %s: the fixture's rates should differ", a.Total.Funding.Money, implied)
	}
	if sum := sumParts(a.Total); !sum.Equal(a.Total.Gap.Money) {
		t.Errorf("parts %s, gap %s", sum, a.Total.Gap.Money)
	}
	var days decimal.Decimal
	for _, d := range a.Days {
		days = days.Add(d.Funding.Money)
	}
	if !days.Equal(a.Total.Funding.Money) {
		t.Errorf("the days' funding parts sum to %s, the total is %s", days, a.Total.Funding.Money)
	}
	t.Logf("live paid %s; the replay at the implied rates %s (part %s), at the stored rates %s (part %s)",
		live, live.Sub(implied), implied, a.ReplayFunding, a.Total.Funding.Money)
}
