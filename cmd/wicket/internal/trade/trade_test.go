package trade

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/guardrail"
)

var updateTrade = flag.Bool("update-trade", false, "rewrite the golden files under testdata/trade")

// TestTradeVerbsCoverTheVerbTable: every verb of the node's table is a
// trade verb, every positional word names one of its fields, and no short
// name shadows a verb or a REPL command.
func TestTradeVerbsCoverTheVerbTable(t *testing.T) {
	taken := map[string]bool{"help": true, "?": true, "snapshot": true, "ticket": true, "history": true, "quit": true, "exit": true}
	for _, v := range command.Verbs() {
		taken[string(v)] = true
	}
	if len(tradeVerbs) != len(command.Verbs()) {
		t.Errorf("tradeVerbs has %d verbs, the verb table %d", len(tradeVerbs), len(command.Verbs()))
	}
	for _, sp := range command.Specs() {
		tv, ok := tradeVerbs[sp.Verb]
		if !ok {
			t.Errorf("verb %s is missing from the trade surface", sp.Verb)
			continue
		}
		for _, w := range tv.positional {
			if _, ok := sp.Field(w); !ok {
				t.Errorf("%s: positional word %q is not a field", sp.Verb, w)
			}
		}
		if tv.short != "" {
			if taken[tv.short] {
				t.Errorf("%s: short name %q is taken", sp.Verb, tv.short)
			}
			taken[tv.short] = true
		}
		// The example line must parse and build.
		words, err := splitTradeLine(tv.example)
		if err != nil {
			t.Fatalf("%s example: %v", sp.Verb, err)
		}
		verb, ok := lookupTradeVerb(words[0])
		if !ok || verb != sp.Verb {
			t.Errorf("%s example starts with %q", sp.Verb, words[0])
		}
		ln, err := parseTradeWords(verb, words[1:], tradeREPLLine)
		if err != nil {
			t.Errorf("%s example: %v", sp.Verb, err)
			continue
		}
		if _, err := buildTradeCommand(project.Defaults(), ln); err != nil {
			t.Errorf("%s example does not build: %v", sp.Verb, err)
		}
	}
}

func TestSplitTradeLine(t *testing.T) {
	tests := []struct {
		line string
		want []string
		err  string
	}{
		{"", nil, ""},
		{"   \t ", nil, ""},
		{"submit buy 0.5 BTC-USD", []string{"submit", "buy", "0.5", "BTC-USD"}, ""},
		{`state halted --reason "drill at 9:00"`, []string{"state", "halted", "--reason", "drill at 9:00"}, ""},
		{`--reason 'it''s'`, []string{"--reason", "its"}, ""},
		{`--reason 'say "hi"'`, []string{"--reason", `say "hi"`}, ""},
		{`--reason "a \"quoted\" \\ word"`, []string{"--reason", `a "quoted" \ word`}, ""},
		{`--reason "keep \n as is"`, []string{"--reason", `keep \n as is`}, ""},
		{`reason=two\ words`, []string{"reason=two words"}, ""},
		{`reason="two words"x`, []string{"reason=two wordsx"}, ""},
		{`a "" b`, []string{"a", "", "b"}, ""},
		{`trailing\`, []string{"trailing"}, ""},
		{`--reason "open`, nil, `unterminated " quote`},
		{`--reason 'open`, nil, `unterminated ' quote`},
	}
	for _, tt := range tests {
		got, err := splitTradeLine(tt.line)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("splitTradeLine(%q) error = %v, want %q", tt.line, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("splitTradeLine(%q): %v", tt.line, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("splitTradeLine(%q) (-want +got):\n%s", tt.line, diff)
		}
	}
}

// FuzzSplitTradeLine: splitting never panics, and quoting the words it
// gives and splitting again gives the same words.
func FuzzSplitTradeLine(f *testing.F) {
	for _, s := range []string{
		`submit buy 0.5 BTC-USD limit 41000 --reason "breakout retest"`,
		`state halted --reason 'drill'`, `a\ b "c\"d" 'e'`, `"`, `'`, `\`, "tab\there", `"\\"`, "é \x00 \xff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		words, err := splitTradeLine(line)
		if err != nil {
			return
		}
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = quoteTradeWord(w)
		}
		again, err := splitTradeLine(strings.Join(quoted, " "))
		if err != nil {
			t.Fatalf("quoted words %q do not split: %v", quoted, err)
		}
		if !slices.Equal(words, again) {
			t.Fatalf("round trip changed the words: %q -> %q", words, again)
		}
	})
}

func TestParseTradeWords(t *testing.T) {
	tests := []struct {
		name   string
		verb   command.Verb
		line   string
		mode   tradeLineMode
		fields map[string]string
		reason string
		yes    bool
		node   string
		err    string
	}{
		{name: "submit shorthand", verb: command.SubmitOrder, line: `buy 0.5 BTC-USD limit 41000 --reason "breakout retest"`,
			fields: map[string]string{"side": "buy", "quantity": "0.5", "symbol": "BTC-USD", "type": "limit", "price": "41000"}, reason: "breakout retest"},
		{name: "named fields in any order", verb: command.SubmitOrder,
			line:   `--symbol ETH-USD type=market side=sell --quantity=2 venue=paper time-in-force=ioc reason=exit`,
			fields: map[string]string{"side": "sell", "quantity": "2", "symbol": "ETH-USD", "type": "market", "venue": "paper", "time_in_force": "ioc"}, reason: "exit"},
		{name: "shorthand then named", verb: command.SubmitOrder, line: `buy 1 SPY market client_order_id=mine-1`,
			fields: map[string]string{"side": "buy", "quantity": "1", "symbol": "SPY", "type": "market", "client_order_id": "mine-1"}},
		{name: "cancel by order id", verb: command.CancelOrder, line: `ord-00000001`,
			fields: map[string]string{"order_id": "ord-00000001"}},
		{name: "cancel by client id", verb: command.CancelOrder, line: `wk-0190a8c4`,
			fields: map[string]string{"client_order_id": "wk-0190a8c4"}},
		{name: "mass cancel", verb: command.MassCancel, line: `BTC-USD sell`,
			fields: map[string]string{"symbol": "BTC-USD", "side": "sell"}},
		{name: "one-shot options", verb: command.SetTradingState, line: `halted --yes --node 127.0.0.1:1`, mode: tradeOneShotLine,
			fields: map[string]string{"state": "halted"}, yes: true, node: "127.0.0.1:1"},
		{name: "-y", verb: command.MarketExit, line: `-y`, mode: tradeOneShotLine, fields: map[string]string{}, yes: true},

		{name: "unknown field", verb: command.SubmitOrder, line: `buy 1 SPY market qty=3`,
			err: `submit_order: unknown field "qty"; valid fields: venue, symbol, side, type, quantity, price, stop_price, limit_price, trail_amount, trail_percent, take_profit, time_in_force, client_order_id, reason`},
		{name: "unknown flag field", verb: command.Flatten, line: `--side buy`, err: `flatten: unknown field "side"; valid fields: venue, symbol, reason`},
		{name: "twice", verb: command.SubmitOrder, line: `buy 1 SPY market side=sell`, err: "side given twice"},
		{name: "reason twice", verb: command.Flatten, line: `--reason a reason=b`, err: "reason given twice"},
		{name: "too many words", verb: command.SetTradingState, line: `halted now`,
			err: `unexpected word "now": it takes at most 1 positional word (STATE)`},
		{name: "flag without value", verb: command.Flatten, line: `--symbol`, err: "--symbol needs a value"},
		{name: "empty name", verb: command.Flatten, line: `=x`, err: `names no field`},
		{name: "yes in the REPL", verb: command.Flatten, line: `--yes`, err: "answer the send? prompt"},
		{name: "node in the REPL", verb: command.Flatten, line: `--node h:1`, err: "--node is chosen when the REPL starts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			words, err := splitTradeLine(tt.line)
			if err != nil {
				t.Fatal(err)
			}
			ln, err := parseTradeWords(tt.verb, words, tt.mode)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.fields, ln.fields); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
			if ln.reason != tt.reason || ln.yes != tt.yes || ln.node != tt.node {
				t.Errorf("reason, yes, node = %q, %v, %q; want %q, %v, %q", ln.reason, ln.yes, ln.node, tt.reason, tt.yes, tt.node)
			}
		})
	}
}

// TestBuildTradeCommand: the venue default applies only with one venue and
// only where venue is required; field values are checked by command.Build.
func TestBuildTradeCommand(t *testing.T) {
	one := project.Defaults()
	two := project.Defaults()
	second := two.Venues[0]
	second.Name = "paper2"
	two.Venues = append(two.Venues, second)
	build := func(cfg project.Config, verb command.Verb, line string) (command.Command, error) {
		t.Helper()
		words, err := splitTradeLine(line)
		if err != nil {
			t.Fatal(err)
		}
		ln, err := parseTradeWords(verb, words, tradeREPLLine)
		if err != nil {
			t.Fatal(err)
		}
		return buildTradeCommand(cfg, ln)
	}
	c, err := build(one, command.SubmitOrder, "buy 0.5 BTC-USD limit 41000")
	if err != nil || c.Venue != "paper" || c.TimeInForce != command.GTC || !c.Price.Equal(testkit.D("41000")) {
		t.Errorf("one venue: %v, %v", c, err)
	}
	if _, err := build(two, command.SubmitOrder, "buy 0.5 BTC-USD limit 41000"); err == nil || !strings.Contains(err.Error(), "venue: is required") {
		t.Errorf("two venues without venue: %v", err)
	}
	if c, err := build(two, command.SubmitOrder, "buy 0.5 BTC-USD limit 41000 venue=paper2"); err != nil || c.Venue != "paper2" {
		t.Errorf("two venues with venue: %v, %v", c, err)
	}
	if c, err := build(one, command.MarketExit, ""); err != nil || c.Venue != "" {
		t.Errorf("market_exit must mean every venue: %v, %v", c, err)
	}
	for line, want := range map[string]string{
		"buy 0.5 BTC-USD limit":          "a limit order needs a price",
		"buy -1 BTC-USD market":          "must be positive",
		"buy 1e3 BTC-USD market":         "plain decimal",
		"BUY 1 BTC-USD market":           `side: "BUY" is not one of buy, sell`,
		"buy 1 ../x market":              "symbol:",
		"buy 1 BTC-USD market price=100": "a market order takes no price",
	} {
		var ce *command.Error
		if _, err := build(one, command.SubmitOrder, line); !errors.As(err, &ce) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want a command error containing %q", line, err, want)
		}
	}
}

// fakeNode is a hand-written tradeNode whose answers a test sets.
type fakeNode struct {
	snap      *node.Snapshot
	snapErr   error
	verdict   node.Verdict
	dryErr    error
	ticket    string
	submitErr error
	outcome   node.Outcome
	ticketErr error

	dryRuns   []command.Envelope
	submitted []command.Envelope
	waits     []time.Duration
}

func (f *fakeNode) Snapshot(context.Context, string, int) (*node.Snapshot, error) {
	return f.snap, f.snapErr
}

func (f *fakeNode) DryRun(_ context.Context, env command.Envelope) (node.Verdict, error) {
	f.dryRuns = append(f.dryRuns, env)
	return f.verdict, f.dryErr
}

func (f *fakeNode) Submit(_ context.Context, env command.Envelope) (string, error) {
	f.submitted = append(f.submitted, env)
	return f.ticket, f.submitErr
}

func (f *fakeNode) Ticket(_ context.Context, id string, wait time.Duration) (node.Outcome, error) {
	f.waits = append(f.waits, wait)
	o := f.outcome
	o.Ticket = id
	return o, f.ticketErr
}

func testSnapshot() *node.Snapshot {
	return &node.Snapshot{
		Time: time.Date(2026, 5, 14, 9, 30, 0, 0, time.UTC), TradingState: command.Active,
		Venues: []node.Venue{{
			Name: "paper", Kind: "paper", Currency: "USD", Symbols: []string{"BTC-USD", "ETH-USD"},
			QuantityDecimals: 6, PriceDecimals: 2,
			Cash: testkit.D("95000"), Equity: testkit.D("100100"),
			UnrealizedPnL: testkit.D("100"), Fees: testkit.D("5"),
			Marks: map[string]decimal.Decimal{"BTC-USD": testkit.D("41200"), "ETH-USD": testkit.D("2500.5"), "XRP-USD": testkit.D("0.5")},
			Positions: []node.Position{{Symbol: "BTC-USD", Quantity: testkit.D("0.125"), AveragePrice: testkit.D("40400"),
				Mark: testkit.D("41200"), MarketValue: testkit.D("5150"), UnrealizedPnL: testkit.D("100")}},
			OpenOrders: []node.Order{{ID: "ord-00000007", ClientOrderID: "wk-fixed", Venue: "paper", Symbol: "ETH-USD", Side: command.Buy, Type: command.Limit,
				Quantity: testkit.D("2"), Filled: decimal.Zero, Price: testkit.D("2400"), TimeInForce: command.GTC,
				Status: node.OrderOpen, Created: time.Date(2026, 5, 14, 9, 0, 0, 0, time.UTC)}},
		}},
		Events: []node.Event{{Seq: 12, Time: time.Date(2026, 5, 14, 9, 29, 0, 0, time.UTC), Kind: node.EventFilled, Venue: "paper",
			OrderID: "ord-00000006", Side: command.Buy, Quantity: testkit.D("0.125"), Symbol: "BTC-USD",
			Price: testkit.D("40400"), Fee: testkit.D("5")}},
	}
}

func fixedIDs() func() string {
	n := 0
	return func() string {
		n++
		return "0190a8c4-0000-7000-8000-00000000000" + string(rune('0'+n))
	}
}

func fakeTrader(f *fakeNode) *tradeClient {
	return &tradeClient{node: f, guard: guardrail.New(project.Defaults()), newID: fixedIDs(), wait: tradeTicketWait}
}

// TestTradePreviewAndSend: the preview resolves with the injected id
// source, runs the guardrail over the node's snapshot and asks for a dry
// run of exactly the resolved command; send submits that same envelope and
// awaits its ticket for 2 s.
func TestTradePreviewAndSend(t *testing.T) {
	f := &fakeNode{snap: testSnapshot(), verdict: node.Verdict{WouldAccept: true, TradingState: command.Active}, ticket: "tk-1",
		outcome: node.Outcome{Status: node.Accepted, OrderID: "ord-00000008", Detail: "ord-00000008 limit buy 0.1 BTC-USD @ 41000 resting"}}
	tr := fakeTrader(f)
	cmd, err := command.Build("submit_order", map[string]string{"venue": "paper", "symbol": "BTC-USD", "side": "buy", "type": "limit", "quantity": "0.1", "price": "41000"})
	if err != nil {
		t.Fatal(err)
	}
	p := tr.preview(context.Background(), cmd, "  breakout\nretest ")
	if p.Command.ClientOrderID != "wk-0190a8c4-0000-7000-8000-000000000001" || p.Reason != "breakout retest" {
		t.Errorf("resolved %v, reason %q", p.Command, p.Reason)
	}
	if !p.Guardrail.OK || len(p.Notes) != 0 || p.DryRun == nil || !p.DryRun.WouldAccept {
		t.Errorf("preview = %+v", p)
	}
	wantEnv := command.NewEnvelope(p.Command, "breakout retest")
	if len(f.dryRuns) != 1 || f.dryRuns[0].Command.String() != wantEnv.Command.String() || f.dryRuns[0].Reason != wantEnv.Reason {
		t.Errorf("dry runs = %v", f.dryRuns)
	}
	o := tr.send(context.Background(), p)
	if len(f.submitted) != 1 || f.submitted[0].Command.String() != p.Command.String() || f.submitted[0].Reason != "breakout retest" {
		t.Errorf("submitted = %v, want the previewed command", f.submitted)
	}
	if o.Status != "accepted" || o.Ticket != "tk-1" || o.OrderID != "ord-00000008" || o.ClientOrderID != p.Command.ClientOrderID || o.err() != nil {
		t.Errorf("outcome = %+v", o)
	}
	if !slices.Equal(f.waits, []time.Duration{2 * time.Second}) {
		t.Errorf("ticket waits = %v, want one of 2s", f.waits)
	}
}

// TestTradeOutcomesAreTruthful: every way a send can end is told as it is.
func TestTradeOutcomesAreTruthful(t *testing.T) {
	existing := &node.Order{ID: "ord-00000007", ClientOrderID: "wk-fixed", Symbol: "ETH-USD", Side: command.Buy, Type: command.Limit,
		Quantity: testkit.D("2"), Price: testkit.D("2400"), Status: node.OrderOpen}
	tests := []struct {
		name   string
		f      fakeNode
		status string
		text   []string // in the printed outcome
		err    string   // in o.err()
	}{
		{"rejected duplicate", fakeNode{ticket: "tk-2", outcome: node.Outcome{Status: node.Rejected, Code: "duplicate_client_order_id",
			Reason: "client_order_id wk-fixed is already used by ord-00000007", ExistingOrder: existing}},
			"rejected", []string{"rejected (ticket tk-2, client_order_id wk-fixed): client_order_id wk-fixed is already used by ord-00000007 [duplicate_client_order_id]",
				"existing order: ord-00000007 open limit buy 2 ETH-USD @ 2400 (wk-fixed)"}, "the node rejected submit_order"},
		{"pending after the wait", fakeNode{ticket: "tk-3", outcome: node.Outcome{Status: node.Pending}},
			"pending", []string{"pending (ticket tk-3", "has not finished this command within 2s", "do not resend it"}, "is pending (ticket tk-3)"},
		{"outcome unreadable", fakeNode{ticket: "tk-4", ticketErr: errors.New("connection reset")},
			"pending", []string{"the command was sent (ticket tk-4) but its outcome could not be read: connection reset", "do not resend"}, "is pending"},
		{"submit failed", fakeNode{submitErr: &node.Error{Kind: node.KindTimeout, Code: "timeout", Message: "no answer"}},
			tradeSendFailed, []string{"send_failed (client_order_id wk-fixed): the node did not take the command", "may or may not have been received"}, "was not confirmed as sent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.f
			tr := fakeTrader(&f)
			cmd, _ := command.Build("submit_order", map[string]string{"venue": "paper", "symbol": "ETH-USD", "side": "buy", "type": "limit",
				"quantity": "2", "price": "2400", "client_order_id": "wk-fixed"})
			o := tr.send(context.Background(), tradePreview{Command: cmd})
			if o.Status != tt.status {
				t.Errorf("status = %q, want %q", o.Status, tt.status)
			}
			var b bytes.Buffer
			printTradeOutcome(&b, o)
			for _, want := range tt.text {
				if !strings.Contains(b.String(), want) {
					t.Errorf("outcome %q lacks %q", b.String(), want)
				}
			}
			if err := o.err(); err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("err = %v, want %q", err, tt.err)
			}
		})
	}
}

// TestTradePreviewWithoutTheNode: an unreadable node leaves the guardrail
// without marks and the preview without a dry run, and both say so.
func TestTradePreviewWithoutTheNode(t *testing.T) {
	down := &node.Error{Kind: node.KindUnreachable, Code: "unreachable", Message: "cannot reach a node at 127.0.0.1:1"}
	f := &fakeNode{snapErr: down, dryErr: down}
	cmd, _ := command.Build("submit_order", map[string]string{"venue": "paper", "symbol": "BTC-USD", "side": "buy", "type": "market", "quantity": "1"})
	p := fakeTrader(f).preview(context.Background(), cmd, "")
	if p.DryRun != nil || p.Guardrail.OK || len(p.Notes) != 3 {
		t.Fatalf("preview = %+v", p)
	}
	var b bytes.Buffer
	printTradePreview(&b, p)
	for _, want := range []string{"FAIL  order_notional     no mark for BTC-USD on paper", "node dry run: not available",
		"note: the node could not be read for marks and positions", "note: no dry run was asked of the node",
		"note: the client-side guardrail failed: the node enforces the same limits and is expected to reject this command"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("preview lacks %q:\n%s", want, b.String())
		}
	}
}

// TestTradeGolden pins the help, a preview with its outcome and a snapshot
// as people read them. Rewrite with -update-trade.
func TestTradeGolden(t *testing.T) {
	f := &fakeNode{snap: testSnapshot(), ticket: "tk-9",
		verdict: node.Verdict{WouldAccept: false, Code: "position_notional", Reason: "node limits: position_notional: too large", TradingState: command.Active},
		outcome: node.Outcome{Status: node.Rejected, Code: "position_notional", Reason: "node limits: position_notional: too large"}}
	tr := fakeTrader(f)
	var b bytes.Buffer
	printTradeHelp(&b)
	for _, v := range command.Verbs() {
		b.WriteString("\n")
		printTradeVerbHelp(&b, v, project.Defaults(), v == command.SubmitOrder)
	}
	b.WriteString("\n")
	cmd, _ := command.Build("submit_order", map[string]string{"venue": "paper", "symbol": "BTC-USD", "side": "buy", "type": "limit", "quantity": "2", "price": "41500.5"})
	p := tr.preview(context.Background(), cmd, "add on strength")
	printTradePreview(&b, p)
	printTradeOutcome(&b, tr.send(context.Background(), p))
	b.WriteString("\n")
	if err := printTradeSnapshot(&b, testSnapshot()); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("..", "..", "..", "..", "testdata", "trade", "transcript.golden")
	if *updateTrade {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update-trade to create it)", err)
	}
	if diff := cmp.Diff(string(want), b.String()); diff != "" {
		t.Errorf("output differs from %s (-want +got); rerun with -update-trade if the change is intended:\n%s", golden, diff)
	}
}

// TestTradeHelpCoversEveryField: help VERB is rendered from the verb table,
// so it names every field and rule of every verb.
func TestTradeHelpCoversEveryField(t *testing.T) {
	for _, sp := range command.Specs() {
		var b bytes.Buffer
		printTradeVerbHelp(&b, sp.Verb, project.Defaults(), false)
		for _, f := range sp.Fields {
			if !strings.Contains(b.String(), "\n  "+f.Name+" ") || !strings.Contains(b.String(), f.Description) {
				t.Errorf("help %s lacks field %s", sp.Verb, f.Name)
			}
		}
		for _, r := range sp.Rules {
			if !strings.Contains(b.String(), r) {
				t.Errorf("help %s lacks rule %q", sp.Verb, r)
			}
		}
	}
}

// TestTradePreviewListsBracketLegs: a bracket's preview lists its three
// legs (prices, derived client order ids, the exits inactive until the
// entry fills) and names the leg of every check, before the one confirm.
func TestTradePreviewListsBracketLegs(t *testing.T) {
	f := &fakeNode{snap: testSnapshot(), verdict: node.Verdict{WouldAccept: true, TradingState: command.Active}}
	cmd, err := command.Build("submit_order", map[string]string{"venue": "paper", "symbol": "BTC-USD", "side": "buy", "type": "bracket",
		"quantity": "0.1", "price": "41000", "take_profit": "42500", "stop_price": "40000", "limit_price": "39900"})
	if err != nil {
		t.Fatal(err)
	}
	p := fakeTrader(f).preview(context.Background(), cmd, "")
	var b bytes.Buffer
	printTradePreview(&b, p)
	cid := p.Command.ClientOrderID
	for _, want := range []string{
		"legs: 3 orders, one command, confirmed together",
		"  entry        limit buy 0.1 BTC-USD @ 41000 (" + cid + ")\n",
		"  take_profit  limit sell 0.1 BTC-USD @ 42500 (" + cid + "-tp), inactive until the entry fills, then sized to its fill",
		"  stop_loss    stop_limit sell 0.1 BTC-USD stop 40000 limit 39900 (" + cid + "-stop), inactive until the entry fills",
		"ok    entry/price_collar", "ok    take_profit/limit_side", "ok    stop_loss/stop_side", "ok    legs ",
		"guardrail: all checks passed",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("preview lacks %q:\n%s", want, b.String())
		}
	}
}

// TestTradeSnapshotShowsGroupsAndUnprotected: the snapshot table lists a
// bracket's legs with their states, and an unprotected position with its
// reason; a snapshot with neither prints neither section.
func TestTradeSnapshotShowsGroupsAndUnprotected(t *testing.T) {
	s := testSnapshot()
	var plain bytes.Buffer
	if err := printTradeSnapshot(&plain, s); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "unprotected") || strings.Contains(plain.String(), "groups") {
		t.Errorf("sections without content:\n%s", plain.String())
	}
	s.Venues[0].Positions[0].Unprotected, s.Venues[0].Positions[0].UnprotectedReason = true, "no protective order is working"
	s.Venues[0].Groups = []node.Group{{ID: "ord-00000009", Type: command.Bracket, Symbol: "BTC-USD", State: node.GroupAwaitingEntry, Legs: []node.GroupLeg{
		{Leg: command.LegEntry, OrderID: "ord-00000009", Status: node.OrderOpen},
		{Leg: command.LegTakeProfit, OrderID: "ord-00000010", Status: node.OrderOpen, Inactive: true},
	}}}
	var b bytes.Buffer
	if err := printTradeSnapshot(&b, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"unprotected positions (not covered in full by a stop that can fire)", "no protective order is working",
		"ord-00000009  bracket  BTC-USD  awaiting_entry  entry=ord-00000009 (open) take_profit=ord-00000010 (open, inactive)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("snapshot lacks %q:\n%s", want, b.String())
		}
	}
}
