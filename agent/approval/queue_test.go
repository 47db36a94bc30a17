package approval

import (
	"context"
	"crypto/ed25519"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"wicket/internal/testkit"
	"wicket/node/command"
)

func shortDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "appr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func TestQueueApproveDeclineExpire(t *testing.T) {
	dir := shortDir(t)
	key := testkit.Key(t)
	q, err := Listen(dir, nil, key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if fi, err := os.Stat(q.Path()); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode: %v %v", fi.Mode(), err)
	}
	ctx := context.Background()
	for _, approve := range []bool{true, false} {
		done := make(chan Decision, 1)
		go func() {
			d, err := q.Wait(ctx, Request{ID: "tok-1", Tool: "submit_order", Command: "submit_order: buy 1 BTC-USD"}, time.Now().Add(5*time.Second))
			if err != nil {
				t.Error(err)
			}
			done <- d
		}()
		var w []Waiting
		for i := 0; i < 200 && len(w) == 0; i++ {
			time.Sleep(5 * time.Millisecond)
			w, _ = List(ctx, dir)
		}
		if len(w) != 1 || w[0].ID != "tok-1" || w[0].Server != os.Getpid() || w[0].Socket != q.Path() {
			t.Fatalf("waiting = %+v", w)
		}
		if err := Decide(ctx, w[0], approve, "alice on /dev/pts/9", key); err != nil {
			t.Fatal(err)
		}
		d := <-done
		if d.Approved != approve || !strings.HasPrefix(d.By, "alice on /dev/pts/9 (pid ") {
			t.Errorf("decision %+v", d)
		}
		// A second decision for the same request finds nothing waiting.
		if err := Decide(ctx, w[0], true, "bob", key); err == nil || !strings.Contains(err.Error(), "no longer waiting") {
			t.Errorf("second decision: %v", err)
		}
	}
	// The deadline passes: a timeout, and nothing is listed any more.
	start := time.Now()
	_, err = q.Wait(ctx, Request{ID: "tok-2"}, time.Now().Add(50*time.Millisecond))
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) < 40*time.Millisecond {
		t.Errorf("timeout: %v", err)
	}
	if w, _ := List(ctx, dir); len(w) != 0 {
		t.Errorf("after the timeout: %+v", w)
	}
}

func TestStaleSocketRemoved(t *testing.T) {
	dir := shortDir(t)
	q, err := Listen(dir, nil, testkit.Key(t).Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	path := q.Path()
	q.ln.SetUnlinkOnClose(false)
	q.ln.Close()
	q.wg.Wait()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("socket gone too early: %v", err)
	}
	w, errs := List(context.Background(), dir)
	if len(w) != 0 || len(errs) != 0 {
		t.Errorf("stale socket: %v %v", w, errs)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("stale socket not removed: %v", err)
	}
}

func TestWordsAndDescribe(t *testing.T) {
	d := testkit.D
	for c, want := range map[command.Command]string{
		{Verb: command.SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: command.Buy, Type: command.Market, Quantity: d("0.5"), ClientOrderID: "wk-1"}: "submit_order: buy 0.5 BTC-USD at market",
		{Verb: command.SubmitOrder, Venue: "paper", Symbol: "ETH-USD", Side: command.Sell, Type: command.Limit, Quantity: d("2"), Price: d("3000.5")}:      "submit_order: sell 2 ETH-USD limit at 3000.5",
		{Verb: command.CancelOrder, Venue: "paper", OrderID: "o-7"}:                                                                                        "cancel_order: cancel order o-7 on venue paper",
		{Verb: command.Flatten, Venue: "paper", Symbol: "SPY"}:                                                                                             "flatten: close the SPY position on venue paper at market",
		{Verb: command.MarketExit}: "market_exit: cancel every open order and close every position on every venue at market",
		{Verb: command.SetTradingState, State: command.TradingState("halted")}: "set_trading_state: set the node's trading state to halted",
	} {
		if got := Words(c); !strings.HasPrefix(got, want) {
			t.Errorf("Words = %q, want prefix %q", got, want)
		}
	}
	now := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	text := Request{Command: "submit_order: buy 1 SPY at market", Guardrail: "all checks passed", DryRun: "the node would accept it",
		Venue: "paper (paper)", Reason: "test", Expires: now.Add(42 * time.Second)}.Describe(now)
	for _, w := range []string{"buy 1 SPY", "reason given: test", "guardrail: all checks passed", "dry run: the node would accept it", "venue: paper", "decide within 42s", "no decision sends nothing"} {
		if !strings.Contains(text, w) {
			t.Errorf("Describe lacks %q:\n%s", w, text)
		}
	}
}

// TestAnswerMustBeSignedByTheOperatorKey: an answer without a signature,
// signed by another key, signed for another answer or another request, or
// for the request as it was not shown, is refused and leaves the request
// waiting; the operator key's answer is taken. A server cannot listen
// without the operator's public key.
func TestAnswerMustBeSignedByTheOperatorKey(t *testing.T) {
	if _, err := Listen(shortDir(t), nil, nil); err == nil || !strings.Contains(err.Error(), "operator public key") {
		t.Errorf("listening without a key: %v", err)
	}
	dir := shortDir(t)
	key := testkit.Key(t)
	q, err := Listen(dir, nil, key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	ctx := context.Background()
	done := make(chan Decision, 1)
	go func() {
		d, err := q.Wait(ctx, Request{ID: "tok-9", Tool: "submit_order", Command: "submit_order: buy 1 BTC-USD at market"}, time.Now().Add(10*time.Second))
		if err != nil {
			t.Error(err)
		}
		done <- d
	}()
	var w []Waiting
	for i := 0; i < 400 && len(w) == 0; i++ {
		time.Sleep(5 * time.Millisecond)
		w, _ = List(ctx, dir)
	}
	if len(w) != 1 {
		t.Fatalf("waiting = %+v", w)
	}
	send := func(req wireRequest) wireResponse {
		t.Helper()
		req.Op, req.ID = "decide", "tok-9"
		resp, err := exchange(ctx, w[0].Socket, req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	altered := w[0].Request
	altered.Command = "submit_order: buy 100 BTC-USD at market"
	for name, req := range map[string]wireRequest{
		"unsigned":           {Approve: true, By: "mallory"},
		"garbage":            {Approve: true, By: "mallory", Signature: "not base64!"},
		"another key":        {Approve: true, By: "mallory", Signature: SignAnswer(testkit.Key(t), w[0].Request, true, "mallory")},
		"a decline's":        {Approve: true, By: "alice", Signature: SignAnswer(key, w[0].Request, false, "alice")},
		"another name's":     {Approve: true, By: "mallory", Signature: SignAnswer(key, w[0].Request, true, "alice")},
		"an altered command": {Approve: true, By: "alice", Signature: SignAnswer(key, altered, true, "alice")},
	} {
		if resp := send(req); resp.OK || !strings.Contains(resp.Error, "not signed by the project's operator key") {
			t.Errorf("%s answer: %+v", name, resp)
		}
	}
	if w, _ := List(ctx, dir); len(w) != 1 {
		t.Fatalf("a refused answer decided the request: %+v", w)
	}
	if err := Decide(ctx, w[0], true, "alice", key); err != nil {
		t.Fatal(err)
	}
	if d := <-done; !d.Approved || !strings.HasPrefix(d.By, "alice (pid ") {
		t.Errorf("decision %+v", d)
	}
}
