package main

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/shopspring/decimal"

	"wicket/cmd/wicket/internal/trade"
	"wicket/internal/project"
	"wicket/node"
	"wicket/node/binance/binancefake"
	"wicket/node/command"
	"wicket/node/nodetest"
)

// venueProject is a project whose wicket.toml adds binance venues on a
// fake exchange (testnet bn with may_arm, live bnlive with may_arm, and
// bnnope without it), with the fake's keys in settings/secrets.env.
type venueProject struct {
	dir              string
	fake             *binancefake.Fake
	observe, control string
	operator         ed25519.PrivateKey // the project's, from settings/operator.key
}

func newVenueProject(t *testing.T) *venueProject {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "proj")
	p, err := project.Init(dir, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	key, secret := hex.EncodeToString(b[:16]), hex.EncodeToString(b[16:])
	f := binancefake.New(key, secret, []binancefake.Symbol{
		{Name: "BTCUSDT", Base: "BTC", Quote: "USDT", Tick: "0.01", Step: "0.00001", MinQty: "0.00001", MinNo: "5", Price: "60000.00"},
	}, map[string]string{"USDT": "20000"})
	t.Cleanup(f.Close)
	toml := ""
	for _, v := range []struct {
		name, env string
		mayArm    bool
	}{{"bn", "testnet", true}, {"bnlive", "live", true}, {"bnnope", "testnet", false}} {
		toml += fmt.Sprintf("\n[[venues]]\nname = %q\nkind = \"binance\"\nenvironment = %q\nmay_arm = %v\nbase_url = %q\nsymbols = [\"BTCUSDT\"]\n",
			v.name, v.env, v.mayArm, f.URL)
	}
	appendFile(t, p.ConfigPath(), toml)
	appendFile(t, p.SecretsPath(), project.KeyBinanceAPIKey+"="+key+"\n"+project.KeyBinanceAPISecret+"="+secret+"\n")
	s, err := p.Secrets(func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	vp := &venueProject{dir: dir, fake: f}
	vp.observe, _, _ = s.Lookup(project.KeyObserve)
	vp.control, _, _ = s.Lookup(project.KeyControl)
	if vp.operator, err = p.OperatorKey(func(string) (string, bool) { return "", false }); err != nil {
		t.Fatal(err)
	}
	return vp
}

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// runNodeServe runs wicket with args (a `node serve`), waits for its
// "listening on" line and returns the process, the node's address and its
// stderr so far and from then on. The process is killed when the test ends.
func runNodeServe(t *testing.T, args ...string) (*exec.Cmd, string, *syncBuffer) {
	t.Helper()
	bin, err := exec.LookPath("wicket") // the test binary, installed by testscript.Main
	if err != nil {
		t.Fatalf("no wicket command on PATH: %v", err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = cleanEnv()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() }) //nolint:errcheck // already dead is fine
	log := &syncBuffer{}
	lines := bufio.NewScanner(stderr)
	addr := ""
	for lines.Scan() {
		log.WriteString(lines.Text() + "\n")
		if a, ok := strings.CutPrefix(lines.Text(), "wicket node: listening on "); ok {
			addr = a
			break
		}
	}
	if addr == "" {
		t.Fatalf("node exited without listening; stderr:\n%s", log.String())
	}
	go io.Copy(log, stderr) //nolint:errcheck // keep the pipe drained
	return cmd, addr, log
}

// startVenueNode runs `wicket node serve` for the project and waits until
// the node has read venue bn. Its stderr is kept for the test to inspect.
func (vp *venueProject) start(t *testing.T, args ...string) (*exec.Cmd, *node.Client, *syncBuffer) {
	t.Helper()
	cmd, addr, log := runNodeServe(t, append([]string{"--project", vp.dir, "node", "serve", "--listen", "127.0.0.1:0", "--tick", "0", "--venue-timeout", "1s"}, args...)...)
	c, err := node.NewClient(addr, vp.observe, vp.control)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		snap, err := c.Snapshot(context.Background(), "bn", 0)
		if err == nil && snap.Venues[0].Connection == "connected" && snap.Venues[0].Account != "" {
			return cmd, c, log
		}
		if time.Now().After(deadline) {
			t.Fatalf("venue bn never synced: %v\n%s", err, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "WICKET_") {
			env = append(env, kv)
		}
	}
	return env
}

func (s *syncBuffer) WriteString(v string) { s.Write([]byte(v)) } //nolint:errcheck // a buffer

// wicketCLI runs the wicket binary for the project with stdin and stdout
// as pipes.
func (vp *venueProject) cli(t *testing.T, addr string, args ...string) (string, error) {
	t.Helper()
	bin, _ := exec.LookPath("wicket")
	cmd := exec.Command(bin, append([]string{"--project", vp.dir}, args...)...)
	cmd.Env = cleanEnv()
	cmd.Stdin = strings.NewReader("bn\n")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// armAtTerminal runs `wicket node arm` on a pseudo-terminal, types answer
// at the prompt, and returns everything it printed.
func (vp *venueProject) armAtTerminal(t *testing.T, addr, venue, answer string, extra ...string) (string, error) {
	t.Helper()
	bin, _ := exec.LookPath("wicket")
	cmd := exec.Command(bin, append([]string{"--project", vp.dir, "node", "arm", venue, "--addr", addr}, extra...)...)
	cmd.Env = cleanEnv()
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	out := &syncBuffer{}
	go io.Copy(out, tty) //nolint:errcheck // ends when the process exits
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "to arm it: ") && time.Now().Before(deadline) {
		if cmd.ProcessState != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
		if strings.Contains(out.String(), "wicket: ") { // refused before the prompt
			break
		}
	}
	if strings.Contains(out.String(), "to arm it: ") {
		if _, err := tty.Write([]byte(answer + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	err = cmd.Wait()
	time.Sleep(50 * time.Millisecond) // the last output
	return out.String(), err
}

func TestNodeArmNeedsAnOperatorAtATerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real node processes")
	}
	vp := newVenueProject(t)
	_, c, log := vp.start(t)
	addr := strings.TrimPrefix(c.String(), "node.Client(")
	addr = strings.TrimSuffix(addr, ")")
	if !strings.Contains(log.String(), "real venue starts disarmed") {
		t.Errorf("the node's log does not say the venue starts disarmed:\n%s", log.String())
	}
	// Through a pipe: refused, nothing armed.
	out, err := vp.cli(t, addr, "node", "arm", "bn", "--addr", addr)
	if err == nil || !strings.Contains(out, "needs an interactive terminal") {
		t.Errorf("arm through a pipe: %v\n%s", err, out)
	}
	// The control key alone does not arm: the node wants the operator key.
	var ne *node.Error
	if _, err := c.Arm(context.Background(), "bn", time.Hour, "bn", nil); !errors.As(err, &ne) || ne.Code != "operator_signature_required" ||
		!strings.Contains(ne.Message, "wicket node arm bn") {
		t.Errorf("arming with the control key only: %v", err)
	}
	// Without the operator key (a project made before there was one), even
	// at a terminal: refused before the prompt, saying how to make one.
	keyFile := filepath.Join(vp.dir, "settings", "operator.key")
	if err := os.Rename(keyFile, keyFile+".away"); err != nil {
		t.Fatal(err)
	}
	out, err = vp.armAtTerminal(t, addr, "bn", "bn")
	if err == nil || !strings.Contains(out, "wicket init --operator-key") || strings.Contains(out, "to arm it: ") {
		t.Errorf("arm without the operator key: %v\n%s", err, out)
	}
	if err := os.Rename(keyFile+".away", keyFile); err != nil {
		t.Fatal(err)
	}
	// On a terminal, with the wrong name typed: not armed.
	out, err = vp.armAtTerminal(t, addr, "bn", "paper")
	if err == nil || !strings.Contains(out, "not armed") {
		t.Errorf("arm with the wrong name: %v\n%s", err, out)
	}
	// Refused without may_arm, and for live on a node without --allow-live.
	if out, err := vp.armAtTerminal(t, addr, "bnnope", "bnnope"); err == nil || !strings.Contains(out, "may_arm = true") {
		t.Errorf("arm without may_arm: %v\n%s", err, out)
	}
	if out, err := vp.armAtTerminal(t, addr, "bnlive", "bnlive"); err == nil || !strings.Contains(out, "--allow-live") || !strings.Contains(out, "REAL MONEY") {
		t.Errorf("arm live without --allow-live: %v\n%s", err, out)
	}
	if snap, _ := c.Snapshot(context.Background(), "", 0); snap != nil {
		for _, v := range snap.Venues {
			if v.Kind == "binance" && v.Armed {
				t.Errorf("%s is armed after refusals", v.Name)
			}
		}
	}
	// On a terminal, typing the name: armed, with what arming means shown first.
	out, err = vp.armAtTerminal(t, addr, "bn", "bn", "--for", "2h")
	if err != nil || !strings.Contains(out, "environment  testnet") || !strings.Contains(out, "cash         20000 USDT") ||
		!strings.Contains(out, "max order notional 25000") || !strings.Contains(out, "bn is armed until") {
		t.Fatalf("arm at a terminal: %v\n%s", err, out)
	}
	snap, err := c.Snapshot(context.Background(), "bn", 5)
	if err != nil || !snap.Venues[0].Armed || time.Until(snap.Venues[0].ArmedUntil) > 2*time.Hour {
		t.Fatalf("after arming: %+v %v", snap.Venues[0], err)
	}
	// A confirmed order now reaches the venue.
	cmd := command.Command{Verb: command.SubmitOrder, Venue: "bn", Symbol: "BTCUSDT", Side: command.Buy, Type: command.Market, Quantity: decimalText("0.01")}
	res, err := nodetest.Send(context.Background(), c, command.NewEnvelope(cmd, "armed test"), 5*time.Second)
	if err != nil || res.Order.Status != node.OrderFilled || len(vp.fake.Orders()) != 1 {
		t.Errorf("order on the armed venue: %+v %v", res, err)
	}
	// Disarm works from a script.
	if out, err := vp.cli(t, addr, "node", "disarm", "bn", "--addr", addr); err != nil || !strings.Contains(out, "bn is disarmed") {
		t.Errorf("disarm: %v\n%s", err, out)
	}
	res, _ = nodetest.Send(context.Background(), c, command.NewEnvelope(cmd, ""), 5*time.Second)
	if res.Code != "disarmed" {
		t.Errorf("after disarm: %+v", res)
	}
	// Both are rows of the node's audit trail, by the control key, and the
	// refusals armed nothing there either.
	page, err := c.Audit(context.Background(), node.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var arming []node.ArmingChange
	for _, e := range page.Entries {
		if e.Arming != nil {
			if want := map[node.ArmingAction]string{node.ArmingArm: node.KeyOperator, node.ArmingDisarm: node.KeyControl}[e.Arming.Action]; e.KeyID != want {
				t.Errorf("%s entry by %q, want %q: %+v", e.Arming.Action, e.KeyID, want, e)
			}
			arming = append(arming, *e.Arming)
		}
	}
	if len(arming) != 2 || arming[0].Action != node.ArmingArm || arming[1].Action != node.ArmingDisarm ||
		arming[0].Venue != "bn" || arming[0].Environment != "testnet" || !arming[0].Until.Equal(snap.Venues[0].ArmedUntil) {
		t.Errorf("the audit trail's arming entries: %+v", arming)
	}
	// Keys never reach the log.
	for _, k := range []string{vp.fake.APIKey, vp.fake.Secret, vp.control, vp.observe, hex.EncodeToString(vp.operator.Seed())} {
		if strings.Contains(log.String(), k) {
			t.Error("a key appears in the node's log")
		}
	}
}

func decimalText(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// TestVenueOrderSurvivesSIGKILLBeforeTheAck kills the node with SIGKILL
// after the venue has taken an order and before the node could journal the
// venue's answer; the restarted node finds exactly that one order at the
// venue by its client order id and adopts it with its fill.
func TestVenueOrderSurvivesSIGKILLBeforeTheAck(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real node processes")
	}
	vp := newVenueProject(t)
	proc, c, _ := vp.start(t)
	if _, err := c.Arm(context.Background(), "bn", time.Hour, "bn", vp.operator); err != nil {
		t.Fatal(err)
	}
	killed := make(chan struct{})
	vp.fake.OnOrder(func(binancefake.Order) {
		proc.Process.Kill() //nolint:errcheck // SIGKILL; the answer below goes to a dead process
		proc.Wait()         //nolint:errcheck // killed
		close(killed)
	})
	cid := "wk-0190f5a2-7c1e-7b3a-9d4e-00000000c0de"
	cmd := command.Command{Verb: command.SubmitOrder, Venue: "bn", Symbol: "BTCUSDT", Side: command.Buy, Type: command.Market,
		Quantity: decimalText("0.02"), ClientOrderID: cid}
	ticket, err := c.Submit(context.Background(), command.NewEnvelope(cmd, "crash test"))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-killed:
	case <-time.After(15 * time.Second):
		t.Fatal("the order never reached the venue")
	}
	vp.fake.OnOrder(nil)

	_, c, log := vp.start(t)
	var o node.Order
	deadline := time.Now().Add(15 * time.Second)
	for {
		snap, err := c.Snapshot(context.Background(), "bn", 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range snap.Events {
			if ev.ClientOrderID == cid && ev.Kind == node.EventFilled {
				o.Filled = o.Filled.Add(ev.Quantity)
				o.AveragePrice = ev.Price
			}
		}
		if o.Filled.Equal(decimalText("0.02")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the order was not adopted after the restart; events %+v\n%s", snap.Events, log.String())
		}
		o = node.Order{}
		time.Sleep(50 * time.Millisecond)
	}
	if !o.AveragePrice.Equal(decimalText("60000")) {
		t.Errorf("adopted fill at %s", o.AveragePrice)
	}
	if n := len(vp.fake.Orders()); n != 1 {
		t.Errorf("the venue holds %d orders, want exactly 1", n)
	}
	if n := vp.fake.Requests("POST /api/v3/order"); n != 1 {
		t.Errorf("the order was sent %d times", n)
	}
	if snap, _ := c.Snapshot(context.Background(), "bn", 0); snap.Venues[0].Armed {
		t.Error("the restarted node kept the venue armed")
	}
	// The command's audit entry is written by the reconciliation, and its ticket reads back.
	page, err := c.Audit(context.Background(), node.AuditQuery{ClientOrderID: cid})
	if err != nil || len(page.Entries) != 1 || page.Entries[0].Ticket != ticket || !strings.Contains(page.Entries[0].Outcome.Detail, "settled by reconciliation") {
		t.Errorf("audit after the crash: %+v %v", page.Entries, err)
	}
	if out, err := c.Ticket(context.Background(), ticket, 0); err != nil || out.Status != node.Accepted || out.Order.Status != node.OrderFilled {
		t.Errorf("ticket after the crash: %+v %v", out, err)
	}
}

// TestNodeServeNamesMissingVenueKeys: a real venue without its keys stops
// the node at start, naming the keys (never printing any value).
func TestNodeServeNamesMissingVenueKeys(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "proj")
	p, err := project.Init(dir, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	appendFile(t, p.ConfigPath(), "\n[[venues]]\nname = \"al\"\nkind = \"alpaca\"\nsymbols = [\"SPY\"]\nbase_url = \"http://127.0.0.1:1\"\n")
	bin, _ := exec.LookPath("wicket")
	cmd := exec.Command(bin, "--project", dir, "node", "serve", "--listen", "127.0.0.1:0", "--tick", "0")
	cmd.Env = cleanEnv()
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), project.KeyAlpacaID) || !strings.Contains(string(out), project.KeyAlpacaSecret) {
		t.Errorf("serve without venue keys: %v\n%s", err, out)
	}
}

// TestTradePreviewLeadsWithALiveVenue: the trade REPL's preview of an order
// on a live venue says so in its first line; a testnet one does not.
func TestTradePreviewLeadsWithALiveVenue(t *testing.T) {
	cmd := command.Command{Verb: command.SubmitOrder, Venue: "bnlive", Symbol: "BTCUSDT", Side: command.Buy, Type: command.Market, Quantity: decimalText("0.01")}
	var b strings.Builder
	trade.PrintPreview(&b, trade.Preview{Command: cmd, Venues: []node.PreviewVenue{{Name: "bnlive", Kind: "binance", Environment: "live"}}})
	if first, _, _ := strings.Cut(b.String(), "\n"); !strings.HasPrefix(first, "LIVE VENUE bnlive (binance live): this is real money; disarmed") {
		t.Errorf("first line %q", first)
	}
	b.Reset()
	trade.PrintPreview(&b, trade.Preview{Command: cmd, Venues: []node.PreviewVenue{{Name: "bn", Kind: "binance", Environment: "testnet", Armed: true}}})
	if strings.Contains(b.String(), "LIVE") || !strings.HasPrefix(b.String(), "preview: submit_order") {
		t.Errorf("testnet preview: %q", b.String())
	}
}

// TestTradeSnapshotShowsRealVenues: environment, arming, connection,
// pending and external orders are printed for real venues.
func TestTradeSnapshotShowsRealVenues(t *testing.T) {
	until := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	snap := &node.Snapshot{TradingState: command.Active, Venues: []node.Venue{
		{Name: "paper", Kind: "paper", Environment: "paper", Armed: true},
		{Name: "bnlive", Kind: "binance", Environment: "live", Armed: true, ArmedUntil: until, Connection: "connected", Account: "uid 1 (SPOT)",
			MarkSource: "binance live", OpenOrders: []node.Order{{ID: "ord-00000007", Venue: "bnlive", ClientOrderID: "wk-x", Symbol: "BTCUSDT",
				Side: command.Buy, Quantity: decimalText("0.01"), Status: node.OrderPending}},
			ExternalOrders: []node.Order{{ID: "external", Venue: "bnlive", VenueOrderID: "77", ClientOrderID: "web_1", Symbol: "BTCUSDT",
				Side: command.Sell, Quantity: decimalText("0.1"), Price: decimalText("70000")}}},
	}}
	var b strings.Builder
	if err := trade.PrintSnapshot(&b, snap); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"LIVE (real money)", "2026-01-02T15:04:05Z", "connected", "pending at the venue", "ord-00000007", "external orders", "web_1"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("snapshot lacks %q:\n%s", want, b.String())
		}
	}
}
