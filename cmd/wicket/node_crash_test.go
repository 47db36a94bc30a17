package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/nodetest"
)

// startNode runs `wicket node serve` from dir as a real process and returns
// it with the address it printed.
func startNode(t *testing.T, dir string) (*exec.Cmd, string) {
	t.Helper()
	bin, err := exec.LookPath("wicket") // the test binary, installed by testscript.Main
	if err != nil {
		t.Fatalf("no wicket command on PATH: %v", err)
	}
	cmd := exec.Command(bin, "--project", dir, "node", "serve", "--listen", "127.0.0.1:0", "--tick", "5ms")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "WICKET_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() }) //nolint:errcheck // already dead is fine
	lines := bufio.NewScanner(stderr)
	var seen []string
	for lines.Scan() {
		line := lines.Text()
		if addr, ok := strings.CutPrefix(line, "wicket node: listening on "); ok {
			go io.Copy(io.Discard, stderr) //nolint:errcheck // keep the pipe drained
			return cmd, addr
		}
		seen = append(seen, line)
	}
	t.Fatalf("node exited without listening; stderr:\n%s", strings.Join(seen, "\n"))
	return nil, ""
}

type acked struct {
	cid string
	out node.Outcome
}

// TestNodeSurvivesSIGKILL kills a real node process with SIGKILL while
// clients stream orders at it and marks fill resting ones, restarts it on
// the same journal, and finds every acknowledged order, fill and audit
// entry exactly as acknowledged.
func TestNodeSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real node processes")
	}
	dir := filepath.Join(t.TempDir(), "proj")
	p, err := project.Init(dir, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	secrets, err := p.Secrets(func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	observe, _, _ := secrets.Lookup(project.KeyObserve)
	control, _, _ := secrets.Lookup(project.KeyControl)

	proc, addr := startNode(t, dir)
	client, err := node.NewClient(addr, observe, control)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	const workers, target = 4, 60
	var (
		mu       sync.Mutex
		acks     []acked
		sent     []string // every client order id sent
		killOnce sync.Once
		killed   = make(chan struct{})
		lastSeen *node.Snapshot // a snapshot read before the kill
	)
	kill := func() {
		killOnce.Do(func() {
			if s, err := client.Snapshot(ctx, "", 500); err == nil {
				lastSeen = s
			}
			if err := proc.Process.Kill(); err != nil { // SIGKILL
				t.Errorf("kill: %v", err)
			}
			close(killed)
		})
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-killed:
					return
				default:
				}
				c := streamOrder(w, i)
				mu.Lock()
				sent = append(sent, c.ClientOrderID)
				mu.Unlock()
				out, err := nodetest.Send(ctx, client, command.NewEnvelope(c, fmt.Sprintf("worker %d order %d", w, i)), 5*time.Second)
				var ne *node.Error
				if err != nil && !(errors.As(err, &ne) && ne.Kind == node.KindRejected) {
					return // the node is gone
				}
				mu.Lock()
				acks = append(acks, acked{c.ClientOrderID, out})
				n := len(acks)
				mu.Unlock()
				if n == target {
					go kill() // others are still sending as it dies
				}
			}
		}()
	}
	wg.Wait()
	<-killed
	proc.Wait() //nolint:errcheck // killed
	if lastSeen == nil {
		t.Fatal("no snapshot before the kill")
	}

	_, addr = startNode(t, dir)
	client, err = node.NewClient(addr, observe, control)
	if err != nil {
		t.Fatal(err)
	}
	after, err := client.Snapshot(ctx, "", 500)
	if err != nil {
		t.Fatal(err)
	}
	audit := map[string]node.AuditEntry{}
	for q := (node.AuditQuery{Limit: 1000}); ; {
		page, err := client.Audit(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Entries {
			if _, dup := audit[e.ClientOrderID]; dup {
				t.Errorf("client order id %s was taken twice", e.ClientOrderID)
			}
			audit[e.ClientOrderID] = e
		}
		if !page.More {
			break
		}
		q.After = page.Next
	}

	// Every acknowledged command: its ticket, audit entry and order survive.
	equal := cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) })
	fills := map[string]bool{}
	for _, ev := range after.Events {
		if ev.Kind == node.EventFilled {
			fills[ev.OrderID] = true
		}
	}
	accepted := 0
	for _, a := range acks {
		got, err := client.Ticket(ctx, a.out.Ticket, 0)
		if err != nil {
			t.Errorf("acknowledged ticket %s (%s) lost: %v", a.out.Ticket, a.cid, err)
			continue
		}
		if diff := cmp.Diff(a.out, got, equal); diff != "" {
			t.Errorf("ticket %s changed across the crash:\n%s", a.out.Ticket, diff)
		}
		e, ok := audit[a.cid]
		if !ok || e.Ticket != a.out.Ticket || e.KeyID != node.KeyControl || !strings.HasPrefix(e.Reason, "worker ") {
			t.Errorf("audit entry for %s = %+v", a.cid, e)
		}
		if a.out.Status == node.Accepted {
			accepted++
			if a.out.Order.Status == node.OrderFilled && !fills[a.out.OrderID] {
				t.Errorf("the fill of acknowledged order %s is missing", a.out.OrderID)
			}
		}
	}
	if accepted < target/2 {
		t.Errorf("only %d of %d acknowledged orders were accepted; the stream tests too little", accepted, len(acks))
	}
	// Everything read before the kill — fills from mark steps included — is
	// still there, unchanged.
	bySeq := map[int64]node.Event{}
	for _, ev := range after.Events {
		bySeq[ev.Seq] = ev
	}
	tickFills := 0
	for _, ev := range lastSeen.Events {
		if diff := cmp.Diff(ev, bySeq[ev.Seq], equal); diff != "" {
			t.Errorf("event %d changed across the crash:\n%s", ev.Seq, diff)
		}
		if ev.Kind == node.EventFilled && strings.HasPrefix(ev.ClientOrderID, "rest-") {
			tickFills++
		}
	}
	t.Logf("%d commands acknowledged (%d accepted) of %d sent; %d events before the kill, %d resting-order fills among them",
		len(acks), accepted, len(sent), len(lastSeen.Events), tickFills)
	// Cash agrees with the journaled fills.
	cash := decimal.NewFromInt(100000)
	for _, ev := range after.Events {
		if ev.Kind == node.EventFilled {
			n := ev.Quantity.Mul(ev.Price)
			if ev.Side == command.Buy {
				n = n.Neg()
			}
			cash = cash.Add(n).Sub(ev.Fee)
		}
	}
	if got := after.Venues[0].Cash; !got.Equal(cash) {
		t.Errorf("cash after restart %s, fills say %s", got, cash)
	}
}

// streamOrder is worker w's i-th order: market orders and limit orders
// close to the mark, so mark steps fill some while the stream runs.
func streamOrder(w, i int) command.Command {
	side := command.Buy
	if (w+i)%2 == 1 {
		side = command.Sell
	}
	c := command.Command{Verb: command.SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: side,
		Type: command.Market, Quantity: decimal.New(int64(1+i%5), -2), ClientOrderID: fmt.Sprintf("mkt-%d-%d", w, i)}
	if i%3 == 0 {
		c.Type, c.TimeInForce, c.ClientOrderID = command.Limit, command.GTC, fmt.Sprintf("rest-%d-%d", w, i)
		c.Price = decimal.NewFromInt(100) // marks start at 100 and wander around it
	}
	return c
}
