package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/deploy"
	"wicket/internal/project"
	"wicket/node"
	"wicket/node/alpaca/alpacafake"
	"wicket/node/binance/binancefake"
	"wicket/node/venuerig"
	"wicket/strategy"
	"wicket/strategy/history"
)

// deployFlipBracket is deployFlip with protective exits: each entry goes
// to Binance as a market buy and then, once it filled, an OCO of a
// take-profit and a stop-loss for the whole position.
var deployFlipBracket = strings.Replace(deployFlip, `"size": 0.5}`, `"size": 0.5, "stop_loss": 0.004, "take_profit": 0.006}`, 1)

// killOrder is an order at a venue fake as the SIGKILL loop reads it.
type killOrder struct {
	cid        string
	market     bool // a market order: an entry, or a sale at an exit signal
	exit       bool // a protective exit: a leg of an oco or a bracket
	takeProfit bool // the take-profit leg: one per protected quantity
	resting    bool
	remaining  decimal.Decimal
	named      bool // named by the node (a leg the venue names itself is not)
}

// killRig is one venue fake under the SIGKILL loop: a project with venue
// on it, the series the deployment trades and the price its bars hover
// at, and the fake's orders, holding and order hook in the loop's terms.
type killRig struct {
	dir, venue, series string
	source             string // the provider the venue's deployments decide on
	price              float64
	observe, control   string
	operator           ed25519.PrivateKey
	orders             func() []killOrder
	held               func() decimal.Decimal
	onOrder            func(func(killOrder))
	exitsApart         bool // the venue takes a bracket's exits as a request of their own (an oco)
}

// binanceKillRig is venue bn on the Binance spot fake: a bracket goes as
// a market entry and then an oco of the exits.
func binanceKillRig(t *testing.T) killRig {
	vp := newVenueProject(t)
	vp.fake.SetPrice("BTCUSDT", "60010")
	of := func(o binancefake.Order) killOrder {
		return killOrder{cid: o.ClientOrderID, market: o.Type == "MARKET", exit: o.ListID >= 0, takeProfit: o.Type == "LIMIT_MAKER",
			resting: o.Status == "NEW" || o.Status == "PARTIALLY_FILLED", remaining: o.Quantity.Sub(o.Filled), named: true}
	}
	return killRig{dir: vp.dir, venue: "bn", series: "BTC-USD@1m", source: "binance", price: 60000, observe: vp.observe, control: vp.control, operator: vp.operator,
		orders: func() []killOrder {
			var out []killOrder
			for _, o := range vp.fake.Orders() {
				out = append(out, of(o))
			}
			return out
		},
		held:       func() decimal.Decimal { return vp.fake.Balance("BTC") },
		onOrder:    func(hook func(killOrder)) { vp.fake.OnOrder(func(o binancefake.Order) { hook(of(o)) }) },
		exitsApart: true}
}

// alpacaKillRig is venue al on the Alpaca fake: a bracket is one order
// there, its entry and its two legs (which Alpaca names itself).
func alpacaKillRig(t *testing.T) killRig {
	dir := filepath.Join(t.TempDir(), "proj")
	p, err := project.Init(dir, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	f := venuerig.Alpaca(t, "100000", "SPY")
	f.SetPrice("SPY", "100.10")
	appendFile(t, p.ConfigPath(), fmt.Sprintf("\n[[venues]]\nname = \"al\"\nkind = \"alpaca\"\nenvironment = \"paper\"\nmay_arm = true\nbase_url = %q\nsymbols = [\"SPY\"]\n", f.URL))
	appendFile(t, p.SecretsPath(), project.KeyAlpacaID+"="+f.KeyID+"\n"+project.KeyAlpacaSecret+"="+f.Secret+"\n")
	secrets, err := p.Secrets(func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	rig := killRig{dir: dir, venue: "al", series: "SPY@1m", source: "alpaca", price: 100}
	rig.observe, _, _ = secrets.Lookup(project.KeyObserve)
	rig.control, _, _ = secrets.Lookup(project.KeyControl)
	if rig.operator, err = p.OperatorKey(func(string) (string, bool) { return "", false }); err != nil {
		t.Fatal(err)
	}
	of := func(o alpacafake.Order) killOrder {
		return killOrder{cid: o.ClientOrderID, market: o.Type == "market", exit: o.Parent != "" || o.Class == "oco",
			takeProfit: o.Type == "limit" && (o.Parent != "" || o.Class == "oco"),
			resting:    o.Status == "new" || o.Status == "accepted" || o.Status == "partially_filled" || o.Status == "held",
			remaining:  o.Qty.Sub(o.Filled), named: o.Parent == ""}
	}
	rig.orders = func() []killOrder {
		var out []killOrder
		for _, o := range f.Orders() {
			out = append(out, of(o))
		}
		return out
	}
	rig.held = func() decimal.Decimal { return f.Position("SPY") }
	rig.onOrder = func(hook func(killOrder)) { f.OnOrder(func(o alpacafake.Order) { hook(of(o)) }) }
	return rig
}

// start runs `wicket node serve --bars tape` on the rig's project and
// waits until the node has read its venue.
func (rig killRig) start(t *testing.T) (*exec.Cmd, *node.Client, *syncBuffer) {
	t.Helper()
	cmd, addr, log := runNodeServe(t, "--project", rig.dir, "node", "serve", "--listen", "127.0.0.1:0", "--tick", "0", "--venue-timeout", "1s", "--bars", "tape")
	c, err := node.NewClient(addr, rig.observe, rig.control)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "venue "+rig.venue+" read", log, func() bool {
		snap, err := c.Snapshot(context.Background(), rig.venue, 0)
		return err == nil && len(snap.Venues) == 1 && snap.Venues[0].Connection == "connected" && snap.Venues[0].Account != ""
	})
	return cmd, c, log
}

// TestDeployBracketSurvivesSIGKILLLoop runs, at the Binance and the
// Alpaca fakes, an auto deployment of a bracketed strategy from a real
// `wicket node serve --bars tape` process, and SIGKILLs the node 30
// times at varied points: as a bar lands (mid-evaluation), the moment the
// venue takes a market order (its answer lost), at Binance the moment it
// takes an entry's oco of exits (their answer lost), once a bar is
// handled, and while bars land with the node down. After each restart
// the operator re-arms the venue and the deployment (arming lapses at
// every start). At the end no client order id reached the venue twice,
// every order the node named there is one the deployment journaled,
// every intent is settled, the deployment's position is the venue's, and
// the exits resting there cover it exactly: none missing, none orphaned.
func TestDeployBracketSurvivesSIGKILLLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real node processes")
	}
	for _, v := range []struct {
		name string
		rig  func(*testing.T) killRig
	}{{"binance", binanceKillRig}, {"alpaca", alpacaKillRig}} {
		t.Run(v.name, func(t *testing.T) { deployKillLoop(t, v.rig(t)) })
	}
}

func deployKillLoop(t *testing.T, rig killRig) {
	p, err := project.Find(rig.dir, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.StrategiesDir(), "flip_bracket.star"), []byte(deployFlipBracket), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	var c *node.Client
	proc, c, log := rig.start(t)
	armVenue := func() {
		t.Helper()
		if _, err := c.Arm(ctx, rig.venue, time.Hour, rig.venue, rig.operator); err != nil {
			t.Fatal(err)
		}
	}
	armVenue()

	// The tape: 20 bars of warm-up, then one bar per step, alternately up
	// and down around the venue's price, so the strategy enters on one bar
	// and exits on the next; its exits (0.4 % and 0.6 % away) never trade.
	series := rig.series
	start := time.Now().UTC().Truncate(time.Minute).Add(-20 * time.Minute)
	next := 0
	tape, err := history.Open(p.HistoryPath())
	if err != nil {
		t.Fatal(err)
	}
	defer tape.Close()
	appendBars := func(n int) time.Time {
		t.Helper()
		b := strategy.Bars{Series: series}
		for range n {
			open, cl := rig.price, rig.price*1.0001
			if next%2 == 1 {
				open, cl = cl, open
			}
			b.Time = append(b.Time, start.Add(time.Duration(next)*time.Minute).Unix())
			b.Open, b.High, b.Low, b.Close, b.Volume = append(b.Open, open), append(b.High, rig.price*1.0002), append(b.Low, rig.price*0.9998), append(b.Close, cl), append(b.Volume, 1)
			next++
		}
		if err := tape.Append(ctx, series, b, history.AppendOptions{Source: rig.source}); err != nil {
			t.Fatal(err)
		}
		return start.Add(time.Duration(next-1) * time.Minute)
	}
	appendBars(20)

	var dep deploy.Deployment
	spec := deploy.Spec{Strategy: "flip_bracket.star", Source: deployFlipBracket, Series: series, Venue: rig.venue, Mode: deploy.ModeAuto,
		Capital: decimal.NewFromInt(1000), Warmup: 10}
	awaitDeployments(ctx, t, c)
	if err := c.DeploymentsPost(ctx, "", spec, &dep); err != nil {
		t.Fatalf("deploy: %v", err)
	}
	base := "/" + url.PathEscape(dep.ID)
	armDeployment := func() {
		t.Helper()
		req, err := signedAct(ctx, c, rig.operator, deploy.ActArmWithoutPlan, dep.ID, base, "1h") // no research plan: the operator signs the override
		if err != nil {
			t.Fatal(err)
		}
		var got deploy.Deployment
		if err := c.DeploymentsPost(ctx, base+"/"+deploy.ActArmWithoutPlan, req, &got); err != nil {
			t.Fatalf("arming the deployment: %v", err)
		}
	}
	armDeployment()
	detail := func() (deploy.Detail, error) {
		var d deploy.Detail
		err := c.DeploymentsGet(ctx, base, nil, &d)
		return d, err
	}
	handled := func(bar time.Time) deploy.Detail {
		t.Helper()
		var d deploy.Detail
		var err error
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) { // a poll interval
			if d, err = detail(); err == nil && !d.Deployment.LastBar.Before(bar) && entriesSettledAt(d, bar) {
				return d
			}
		}
		t.Fatalf("the bar of %s was never handled (%v): last bar %s, intents %+v\n%s", bar, err, d.Deployment.LastBar, d.Intents, log.String())
		return d
	}
	restingExits := func() int {
		n := 0
		for _, o := range rig.orders() {
			if o.exit && o.resting {
				n++
			}
		}
		return n
	}

	// The venue kills the node the moment it takes the order a kill waits
	// for, before its answer is written: the node never hears it.
	var mu sync.Mutex
	killOn := "" // "", "market" or "oco"
	killed := make(chan struct{}, 1)
	rig.onOrder(func(o killOrder) {
		mu.Lock()
		defer mu.Unlock()
		if killOn == "market" && o.market && !o.exit || killOn == "oco" && o.exit {
			killOn = ""
			proc.Process.Kill() //nolint:errcheck // reaped by the test's loop
			killed <- struct{}{}
		}
	})
	// killAt appends bars, at most two, until the venue takes an order of
	// kind, and kills the node the moment it does; it says whether it did
	// (or both bars were handled without one).
	killAt := func(kind string) bool {
		t.Helper()
		mu.Lock()
		killOn = kind
		mu.Unlock()
		defer func() { mu.Lock(); killOn = ""; mu.Unlock() }()
		for range 2 {
			bar := appendBars(1)
			for deadline := time.Now().Add(15 * time.Second); ; {
				select {
				case <-killed:
					return true
				case <-time.After(5 * time.Millisecond): // a poll interval, not a synchronisation
				}
				if d, err := detail(); err == nil && !d.Deployment.LastBar.Before(bar) && entriesSettledAt(d, bar) && (kind == "market" || !d.Deployment.Position.IsPositive() || restingExits() > 0) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the bar of %s was never handled\n%s", bar, log.String())
				}
			}
		}
		return false
	}

	const kills = 30
	midEntry, midExits := 0, 0 // kills with a market order or an oco taken and its answer lost
	for k := range kills {
		switch k % 5 {
		case 0: // the bar lands and the node dies at once: mid-read, mid-evaluation or mid-send
			appendBars(1)
		case 1: // dies as the venue takes a market order: its answer is lost
			if killAt("market") {
				midEntry++
			}
		case 2: // dies as the venue takes an entry's exits (at Binance; a market order at Alpaca): their answer is lost
			if !rig.exitsApart {
				if killAt("market") {
					midEntry++
				}
			} else if killAt("oco") {
				midExits++
			}
		case 3: // dies while bars land: the next start finds several new bars
			appendBars(1)
			if _, err := detail(); err != nil {
				t.Fatal(err)
			}
			appendBars(2)
		case 4: // dies after the bar was handled and settled
			handled(appendBars(1))
		}
		mu.Lock()
		proc.Process.Kill() //nolint:errcheck // perhaps killed by the venue already
		mu.Unlock()
		proc.Wait() //nolint:errcheck // killed
		select {
		case <-killed: // a kill the venue made after the loop stopped waiting for it
		default:
		}
		if k%5 == 3 {
			appendBars(1) // lands while the node is down
		}
		mu.Lock()
		proc, c, log = rig.start(t)
		mu.Unlock()
		armVenue()
		// After the restart only the latest closed bar is evaluated (the
		// deployment is not armed yet: a decision to trade is refused).
		handled(start.Add(time.Duration(next-1) * time.Minute))
		armDeployment()
	}
	// Bars with everything armed, the last an up bar, so the run ends
	// holding a position; then the books are read.
	handled(appendBars(1))
	if next%2 == 1 {
		handled(appendBars(1))
	}
	last := handled(appendBars(1))
	eventually(t, "the exits of a held position at the venue", log, func() bool {
		return last.Deployment.Position.IsZero() || restingExits() > 0
	})
	kill(t, proc)

	store, err := deploy.OpenStore(filepath.Join(p.StateDir(), "deployments.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	intents, err := store.Intents(dep.ID)
	if err != nil {
		t.Fatal(err)
	}
	journaled := map[string]deploy.Intent{}
	filled := 0
	for _, in := range intents {
		if _, dup := journaled[in.ClientOrderID]; dup {
			t.Errorf("client order id %s journaled twice", in.ClientOrderID)
		}
		journaled[in.ClientOrderID] = in
		switch {
		case in.Exit != "" && in.Status == deploy.IntentPending: // a resting exit: checked against the venue below
		case in.Status == deploy.IntentSending || in.Status == deploy.IntentPending || in.Status == deploy.IntentProposed:
			t.Errorf("intent %s is %s at the end (%s): every intent is settled", in.ClientOrderID, in.Status, in.Note)
		case in.Status == deploy.IntentFilled:
			filled++
		}
	}
	atVenue := map[string]int{}
	held := decimal.Zero
	for _, o := range rig.orders() {
		if o.named {
			atVenue[o.cid]++
		}
		if o.exit && o.resting && o.takeProfit {
			held = held.Add(o.remaining)
		}
	}
	ours := func(cid string) bool { // the intent's own id, or one of its legs' (the id and a suffix)
		for id := range journaled {
			if cid == id || strings.HasPrefix(cid, id+"-") {
				return true
			}
		}
		return false
	}
	for cid, n := range atVenue {
		if n > 1 {
			t.Errorf("client order id %s reached the venue %d times", cid, n)
		}
		if !ours(cid) {
			t.Errorf("order %s at the venue is no intent the deployment journaled", cid)
		}
	}
	for _, in := range intents {
		if in.Status == deploy.IntentFilled && in.Exit == "" && atVenue[in.ClientOrderID] == 0 {
			t.Errorf("intent %s is filled but never reached the venue", in.ClientOrderID)
		}
	}
	balance := rig.held()
	if !last.Deployment.Position.Equal(balance) {
		t.Errorf("deployment position %s, the venue holds %s", last.Deployment.Position, balance)
	}
	if balance.IsPositive() && !held.Equal(balance) && last.Deployment.Guard == "" {
		t.Errorf("the venue holds %s with exits for %s resting and no flag", balance, held)
	}
	if held.GreaterThan(balance) {
		t.Errorf("exits for %s rest at the venue for a position of %s: orphaned exits", held, balance)
		for _, o := range rig.orders() {
			if o.exit && o.resting {
				t.Logf("resting %+v: intent %+v", o, journaled[o.cid])
			}
		}
	}
	if filled < kills/3 {
		t.Errorf("only %d intents filled across %d kills: the loop did not exercise sending", filled, kills)
	}
	if midEntry == 0 || rig.exitsApart && midExits == 0 {
		t.Errorf("%d kills with a market order's answer lost, %d with an oco's: the loop did not exercise sending", midEntry, midExits)
	}
	t.Logf("%d kills (%d with a market order's answer lost, %d with an oco's), %d bars, %d intents (%d filled), %d client order ids at the venue, holding %s with exits for %s",
		kills, midEntry, midExits, next-20, len(intents), filled, len(atVenue), balance, held)
}

// entriesSettledAt says whether d's orders of the bar at bar, other than
// resting exits (pending while they rest), are all settled.
func entriesSettledAt(d deploy.Detail, bar time.Time) bool {
	for _, in := range d.Intents {
		if in.Bar.Equal(bar) && in.Exit == "" && (in.Status == deploy.IntentSending || in.Status == deploy.IntentPending) {
			return false
		}
	}
	return true
}
