package server_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/nodetest"
	"wicket/node/paper"
	"wicket/node/server"
)

var decimalEqual = cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) })

// TestRestartRebuildsExactState restarts a node on its journal and finds
// the same venues, orders, positions, cash, marks, trading state, recent
// events, audit trail and ticket outcomes.
func TestRestartRebuildsExactState(t *testing.T) {
	cfg := project.Defaults()
	cfg.Venues = append(cfg.Venues, project.Venue{Name: "second", Kind: "paper", Currency: "EUR", Cash: testkit.D("5000"),
		FeeBps: 2.5, Symbols: []string{"ETH-USD"}, QuantityDecimals: 3, PriceDecimals: 1})
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	srv := nodetest.NewServer(t, nodetest.WithConfig(cfg), nodetest.WithFeed(paper.Feed{Seed: 42, StepBps: 200}))
	c := srv.Client()
	var tickets []string
	for i := range 6 {
		side := command.Buy
		if i%3 == 2 {
			side = command.Sell
		}
		out := send(t, c, order("paper", "BTC-USD", side, command.Market, fmt.Sprint(i+1), ""), fmt.Sprintf("order %d", i))
		tickets = append(tickets, out.Ticket)
		srv.Tick(t, 3)
	}
	accepted(t, c, order("paper", "ETH-USD", command.Buy, command.Limit, "2", "99"))
	accepted(t, c, order("paper", "ETH-USD", command.Sell, command.Limit, "1", "101"))
	accepted(t, c, order("second", "ETH-USD", command.Sell, command.Market, "1.5", ""))
	srv.Tick(t, 20) // some resting orders fill as the walk moves
	accepted(t, c, command.Command{Verb: command.SetTradingState, State: command.ReduceOnly})
	rejected(t, c, order("paper", "SPY", command.Buy, command.Market, "1", ""), "reduce_only")

	before := snapshot(t, c)
	auditBefore, err := c.Audit(context.Background(), node.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	srv.Restart(t)
	c = srv.Client()
	after := snapshot(t, c)
	after.Time = before.Time
	if diff := cmp.Diff(before, after, decimalEqual); diff != "" {
		t.Errorf("state after restart differs (-before +after):\n%s", diff)
	}
	auditAfter, err := c.Audit(context.Background(), node.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(auditBefore, auditAfter, decimalEqual); diff != "" {
		t.Errorf("audit after restart differs:\n%s", diff)
	}
	for _, id := range tickets {
		o, err := c.Ticket(context.Background(), id, 0)
		if err != nil || o.Status != node.Accepted || o.Ticket != id {
			t.Errorf("ticket %s after restart: %+v, %v", id, o, err)
		}
	}
	// The walk continues from the stored step and mark, deterministically.
	h, err := c.Health(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	feed := paper.Feed{Seed: 42, StepBps: 200}
	want := feed.Next("BTC-USD", h.Tick+1, before.Venues[0].Marks["BTC-USD"], 2)
	srv.Tick(t, 1)
	if got := snapshot(t, c).Venues[0].Marks["BTC-USD"]; !got.Equal(want) {
		t.Errorf("mark after restart and one step = %s, want %s", got, want)
	}
}

func TestRestartWithChangedVenues(t *testing.T) {
	dir := t.TempDir()
	journal := filepath.Join(dir, "node.db")
	two := project.Defaults()
	two.Venues = append(two.Venues, project.Venue{Name: "b", Kind: "paper", Currency: "USD", Cash: testkit.D("10"), Symbols: []string{"SPY"}, QuantityDecimals: 1, PriceDecimals: 1})
	srv := nodetest.NewServer(t, nodetest.WithJournal(journal), nodetest.WithConfig(two))
	accepted(t, srv.Client(), order("b", "SPY", command.Sell, command.Market, "1", ""))
	srv.Close()

	// Dropping a venue the journal holds is refused, saying how to fix it.
	_, err := server.New(server.Config{Project: project.Defaults(), JournalPath: journal,
		ObserveKey: strings.Repeat("o", 32), ControlKey: strings.Repeat("c", 32)})
	if err == nil || !strings.Contains(err.Error(), `venue "b", which wicket.toml does not list`) {
		t.Fatalf("New without venue b = %v", err)
	}

	// Adding a venue opens it with its configured cash; the old ones keep theirs.
	three := two
	three.Venues = append(append([]project.Venue(nil), two.Venues...), project.Venue{Name: "c", Kind: "paper", Currency: "USD", Cash: testkit.D("7"), Symbols: []string{"SPY"}, QuantityDecimals: 1, PriceDecimals: 1})
	srv = nodetest.NewServer(t, nodetest.WithJournal(journal), nodetest.WithConfig(three))
	s := snapshot(t, srv.Client())
	if got := venueOf(t, s, "c").Cash; !got.Equal(testkit.D("7")) {
		t.Errorf("new venue cash = %s", got)
	}
	if p, _ := position(venueOf(t, s, "b"), "SPY"); !p.Quantity.Equal(testkit.D("-1")) {
		t.Errorf("venue b position after restart = %s", p.Quantity)
	}
}

func TestTicketsAndAudit(t *testing.T) {
	ids := 0
	srv := nodetest.NewServer(t, nodetest.WithIDs(func() string { ids++; return fmt.Sprintf("id-%03d", ids) }))
	c := srv.Client()
	ctx := context.Background()

	id, err := c.Submit(ctx, command.NewEnvelope(order("paper", "SPY", command.Buy, command.Market, "1", ""), "first\x00 order"))
	if err != nil {
		t.Fatal(err)
	}
	if id != "tk-id-002" { // id-001 minted the client order id
		t.Errorf("ticket id = %s", id)
	}
	out, err := c.Ticket(ctx, id, 5*time.Second)
	if err != nil || out.Status != node.Accepted || out.ClientOrderID != "wk-id-001" {
		t.Fatalf("ticket = %+v, %v", out, err)
	}
	rejected(t, c, order("paper", "SPY", command.Buy, command.Limit, "1", "1"), "price_collar")
	accepted(t, c, command.Command{Verb: command.SetTradingState, State: command.Halted})

	page, err := c.Audit(ctx, node.AuditQuery{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Entries) != 2 || !page.More || page.Next != page.Entries[1].Seq {
		t.Fatalf("first page = %+v", page)
	}
	e := page.Entries[0]
	if e.KeyID != node.KeyControl || e.Reason != "first order" || e.ClientOrderID != "wk-id-001" ||
		e.Outcome.Status != node.Accepted || e.Command.Verb != command.SubmitOrder || e.Ticket != id {
		t.Errorf("first entry = %+v", e)
	}
	if r := page.Entries[1]; r.Outcome.Status != node.Rejected || r.Outcome.Code != "price_collar" {
		t.Errorf("second entry = %+v", r)
	}
	rest, err := c.Audit(ctx, node.AuditQuery{After: page.Next})
	if err != nil || len(rest.Entries) != 1 || rest.More || rest.Entries[0].Command.State != command.Halted {
		t.Errorf("second page = %+v, %v", rest, err)
	}
	one, err := c.Audit(ctx, node.AuditQuery{ClientOrderID: "wk-id-001"})
	if err != nil || len(one.Entries) != 1 || one.Entries[0].Ticket != id {
		t.Errorf("audit of one client order id = %+v, %v", one, err)
	}
	future, err := c.Audit(ctx, node.AuditQuery{Since: time.Now().Add(time.Hour)})
	if err != nil || len(future.Entries) != 0 {
		t.Errorf("since the future = %+v, %v", future, err)
	}
}

func TestListenRefusesRemote(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:7879", "example.com:7879", "[::]:0"} {
		_, err := server.Listen(addr, false)
		var le *server.ListenError
		if !errors.As(err, &le) || !le.Remote || !strings.Contains(err.Error(), "--allow-remote") {
			t.Errorf("Listen(%s) = %v, want a remote refusal", addr, err)
		}
	}
	if _, err := server.Listen("no-port", false); err == nil {
		t.Error("Listen accepted an address without a port")
	}
	held, err := server.Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if _, err := server.Listen(held.Addr().String(), false); err == nil || !strings.Contains(err.Error(), "choose another address with --listen") {
		t.Errorf("Listen on a port in use = %v, want advice", err)
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0"} {
		ln, err := server.Listen(addr, false)
		if err != nil {
			t.Errorf("Listen(%s) = %v", addr, err)
			continue
		}
		ln.Close()
	}
}

func TestNewRefusesBadKeys(t *testing.T) {
	good := strings.Repeat("k", 32)
	for _, tt := range []struct{ observe, control, want string }{
		{"", good, "node keys missing"},
		{good, "", "node keys missing"},
		{"short", good + "x", "at least 16 characters"},
		{good, good, "are the same key"},
	} {
		_, err := server.New(server.Config{Project: project.Defaults(), JournalPath: filepath.Join(t.TempDir(), "n.db"),
			ObserveKey: tt.observe, ControlKey: tt.control})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%q, %q) = %v, want %q", tt.observe, tt.control, err, tt.want)
		}
		if err != nil && (strings.Contains(err.Error(), good) || strings.Contains(err.Error(), "short")) {
			t.Errorf("error shows a key: %v", err)
		}
	}
}
