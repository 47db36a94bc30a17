package gate_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"wicket/gate"
	"wicket/internal/testkit"
)

func TestTakeReturnsTheStoredCommand(t *testing.T) {
	tests := []struct {
		name       string
		confirming gate.Fields
	}{
		{"identical", order()},
		{"client id omitted", with(order(), "client_order_id", "-")},
		{"client id empty", with(order(), "client_order_id", "")},
		{"decimals spelled differently", with(with(order(), "quantity", "0.5"), "price", "60000.00")},
		{"fields in another order", func() gate.Fields {
			f := order()
			f[0], f[len(f)-1] = f[len(f)-1], f[0]
			return f
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, _ := newGate(gate.Options{})
			tok, _, err := g.Issue("submit_order", order())
			if err != nil {
				t.Fatal(err)
			}
			got, err := g.Take("submit_order", tok, tt.confirming)
			if err != nil {
				t.Fatalf("Take: %v", err)
			}
			// The stored command runs, with the previewed spelling and the
			// minted client id, not the confirming call's version.
			if diff := cmp.Diff(order(), got); diff != "" {
				t.Errorf("Take returned a command other than the stored one (-stored +got):\n%s", diff)
			}
		})
	}
}

func TestIssueReturnsExpiryAndCanonicalToken(t *testing.T) {
	g := gate.New[gate.Fields](gate.Options{})
	before := time.Now()
	tok, exp, err := g.Issue("submit_order", order())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gate.ParseToken(string(tok)); err != nil {
		t.Errorf("default id source minted %q, which ParseToken refuses: %v", tok, err)
	}
	if d := exp.Sub(before); d < gate.PreviewWindow || d > gate.PreviewWindow+time.Minute {
		t.Errorf("expiry %v after issue, want about %v", d, gate.PreviewWindow)
	}
	tok2, _, _ := g.Issue("submit_order", order())
	if tok2 == tok {
		t.Errorf("two previews got the same token %q", tok)
	}
}

func TestExpiry(t *testing.T) {
	tests := []struct {
		after time.Duration
		want  gate.Kind // 0 = confirms
	}{
		{0, 0},
		{30 * time.Second, 0},
		{gate.PreviewWindow - time.Millisecond, 0}, // 59.999 s
		{gate.PreviewWindow - time.Nanosecond, 0},
		{gate.PreviewWindow, gate.KindExpired}, // 60 s
		{gate.PreviewWindow + time.Millisecond, gate.KindExpired},
		{gate.PreviewWindow + gate.RememberWindow - time.Nanosecond, gate.KindExpired},
		{gate.PreviewWindow + gate.RememberWindow, gate.KindUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.after.String(), func(t *testing.T) {
			g, clk := newGate(gate.Options{})
			tok, exp, err := g.Issue("submit_order", order())
			if err != nil {
				t.Fatal(err)
			}
			if want := epoch.Add(gate.PreviewWindow); !exp.Equal(want) {
				t.Fatalf("expiry %v, want %v", exp, want)
			}
			clk.Advance(tt.after)
			_, err = g.Take("submit_order", tok, order())
			if got := kindOf(err); got != tt.want {
				t.Fatalf("Take %v after issue: kind %v, want %v (err: %v)", tt.after, got, tt.want, err)
			}
			if tt.want == gate.KindExpired {
				var e *gate.Error
				errors.As(err, &e)
				if !e.At.Equal(exp) || e.IssuedFor != "submit_order" {
					t.Errorf("expired error At=%v IssuedFor=%q, want %v and submit_order", e.At, e.IssuedFor, exp)
				}
			}
		})
	}
}

// TestExpiredAfterSweep checks that a token swept as expired by another call
// is still reported as expired, not unknown.
func TestExpiredAfterSweep(t *testing.T) {
	g, clk := newGate(gate.Options{})
	old, _, _ := g.Issue("submit_order", order())
	clk.Advance(gate.PreviewWindow)
	if _, _, err := g.Issue("submit_order", order()); err != nil { // sweeps old
		t.Fatal(err)
	}
	if n := g.Outstanding(); n != 1 {
		t.Fatalf("Outstanding = %d after the first token expired, want 1", n)
	}
	_, err := g.Take("submit_order", old, order())
	if !errors.Is(err, gate.ErrExpiredToken) {
		t.Fatalf("Take of a swept token: %v, want expired", err)
	}
}

func TestBinding(t *testing.T) {
	tests := []struct {
		name       string
		tool       string
		confirming gate.Fields
		want       gate.Kind
		text       []string // substrings the error must contain
	}{
		{"same tool and command", "submit_order", order(), 0, nil},
		{"other tool", "cancel_order", order(), gate.KindMismatch,
			[]string{"issued for submit_order, not cancel_order", "cancel_order without confirm"}},
		{"changed quantity", "submit_order", with(order(), "quantity", "5"), gate.KindMismatch,
			[]string{`quantity: previewed "0.50", confirming "5"`}},
		{"changed side and price", "submit_order", with(with(order(), "side", "sell"), "price", "1"), gate.KindMismatch,
			[]string{`side: previewed "buy", confirming "sell"`, `price: previewed "60000", confirming "1"`}},
		{"other client id", "submit_order", with(order(), "client_order_id", "wk-other"), gate.KindMismatch,
			[]string{`client_order_id: previewed "wk-7f3a", confirming "wk-other"`}},
		{"price left out", "submit_order", with(order(), "price", "-"), gate.KindMismatch,
			[]string{`price: previewed "60000", confirming (not given)`}},
		{"extra field", "submit_order", with(order(), "reduce_only", "true"), gate.KindMismatch,
			[]string{`reduce_only: previewed (not given), confirming "true"`}},
		{"symbol case", "submit_order", with(order(), "symbol", "btc-usd"), gate.KindMismatch,
			[]string{`symbol: previewed "BTC-USD", confirming "btc-usd"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, _ := newGate(gate.Options{})
			tok, _, _ := g.Issue("submit_order", order())
			got, err := g.Take(tt.tool, tok, tt.confirming)
			if k := kindOf(err); k != tt.want {
				t.Fatalf("kind %v, want %v (err: %v)", k, tt.want, err)
			}
			if err == nil {
				return
			}
			if got != nil {
				t.Errorf("a refused Take returned a command: %v", got)
			}
			for _, s := range tt.text {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error text lacks %q:\n%s", s, err)
				}
			}
		})
	}
}

// TestEveryTakeSpends pins the decision that any Take, matching or not,
// spends the token: the agent must preview again.
func TestEveryTakeSpends(t *testing.T) {
	tests := []struct {
		name          string
		tool          string
		confirming    gate.Fields
		firstKind     gate.Kind
		wantConfirmed bool // Error.Confirmed on the second Take
	}{
		{"after success", "submit_order", order(), 0, true},
		{"after wrong tool", "modify", order(), gate.KindMismatch, false},
		{"after changed command", "submit_order", with(order(), "quantity", "9"), gate.KindMismatch, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, clk := newGate(gate.Options{})
			tok, _, _ := g.Issue("submit_order", order())
			clk.Advance(time.Second)
			if _, err := g.Take(tt.tool, tok, tt.confirming); kindOf(err) != tt.firstKind {
				t.Fatalf("first Take: %v, want kind %v", err, tt.firstKind)
			}
			clk.Advance(time.Second)
			// Even the right tool and command cannot use it now.
			_, err := g.Take("submit_order", tok, order())
			var e *gate.Error
			if !errors.As(err, &e) || e.Kind != gate.KindUsed {
				t.Fatalf("second Take: %v, want kind used", err)
			}
			if e.Confirmed != tt.wantConfirmed || e.IssuedFor != "submit_order" || !e.At.Equal(epoch.Add(time.Second)) {
				t.Errorf("used error: Confirmed=%v IssuedFor=%q At=%v, want %v, submit_order, %v",
					e.Confirmed, e.IssuedFor, e.At, tt.wantConfirmed, epoch.Add(time.Second))
			}
		})
	}
}

func TestUsedIsDistinctFromUnknown(t *testing.T) {
	tests := []struct {
		name  string
		after time.Duration // after the successful Take
		token func(used gate.Token) gate.Token
		want  gate.Kind
	}{
		{"used, at once", 0, same, gate.KindUsed},
		{"used, 9m59.999s later", gate.RememberWindow - time.Millisecond, same, gate.KindUsed},
		{"used, 10m later", gate.RememberWindow, same, gate.KindUnknown},
		{"never issued", 0, func(gate.Token) gate.Token { return gate.Token(seqID(999)) }, gate.KindUnknown},
		{"malformed", 0, func(gate.Token) gate.Token { return "not-a-token" }, gate.KindUnknown},
		{"empty", 0, func(gate.Token) gate.Token { return "" }, gate.KindUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, clk := newGate(gate.Options{})
			tok, _, _ := g.Issue("submit_order", order())
			if _, err := g.Take("submit_order", tok, order()); err != nil {
				t.Fatal(err)
			}
			clk.Advance(tt.after)
			_, err := g.Take("submit_order", tt.token(tok), order())
			if k := kindOf(err); k != tt.want {
				t.Fatalf("kind %v, want %v (err: %v)", k, tt.want, err)
			}
		})
	}
}

func same(t gate.Token) gate.Token { return t }

func TestRememberedCountIsBounded(t *testing.T) {
	g, _ := newGate(gate.Options{MaxRemembered: 3})
	var toks []gate.Token
	for range 5 {
		tok, _, _ := g.Issue("submit_order", order())
		if _, err := g.Take("submit_order", tok, order()); err != nil {
			t.Fatal(err)
		}
		toks = append(toks, tok)
	}
	want := []gate.Kind{gate.KindUnknown, gate.KindUnknown, gate.KindUsed, gate.KindUsed, gate.KindUsed}
	for i, tok := range toks {
		_, err := g.Take("submit_order", tok, order())
		if k := kindOf(err); k != want[i] {
			t.Errorf("token %d of 5 with 3 remembered: kind %v, want %v", i+1, k, want[i])
		}
	}
}

func TestOutstandingCap(t *testing.T) {
	tests := []struct {
		name  string
		free  func(g *gate.PendingPreviews[gate.Fields], clk *testkit.Clock, toks []gate.Token)
		issue gate.Kind // kind of the Issue after free
	}{
		{"nothing freed", func(*gate.PendingPreviews[gate.Fields], *testkit.Clock, []gate.Token) {}, gate.KindTooMany},
		{"just short of expiry", func(_ *gate.PendingPreviews[gate.Fields], clk *testkit.Clock, _ []gate.Token) {
			clk.Advance(gate.PreviewWindow - time.Millisecond)
		}, gate.KindTooMany},
		{"one confirmed", func(g *gate.PendingPreviews[gate.Fields], _ *testkit.Clock, toks []gate.Token) {
			g.Take("submit_order", toks[1], order())
		}, 0},
		{"one burned by a mismatch", func(g *gate.PendingPreviews[gate.Fields], _ *testkit.Clock, toks []gate.Token) {
			g.Take("cancel_order", toks[0], order())
		}, 0},
		{"all expired", func(_ *gate.PendingPreviews[gate.Fields], clk *testkit.Clock, _ []gate.Token) {
			clk.Advance(gate.PreviewWindow)
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, clk := newGate(gate.Options{Max: 3})
			var toks []gate.Token
			for i := range 3 {
				tok, _, err := g.Issue("submit_order", order())
				if err != nil {
					t.Fatalf("Issue %d of 3: %v", i+1, err)
				}
				toks = append(toks, tok)
			}
			tt.free(g, clk, toks)
			tok, exp, err := g.Issue("submit_order", order())
			if k := kindOf(err); k != tt.issue {
				t.Fatalf("Issue: kind %v, want %v (err: %v)", k, tt.issue, err)
			}
			if err != nil {
				if tok != "" || !exp.IsZero() {
					t.Errorf("refused Issue returned token %q, expiry %v", tok, exp)
				}
				if !strings.Contains(err.Error(), "at most 3 unexpired previews") {
					t.Errorf("error does not name the cap: %v", err)
				}
			}
		})
	}
}

// TestConcurrentTakeOneWinner races 50 confirms of one token: exactly one
// wins, and every other one is told the token was used.
func TestConcurrentTakeOneWinner(t *testing.T) {
	for round := range 20 {
		g, _ := newGate(gate.Options{})
		tok, _, _ := g.Issue("submit_order", order())
		const n = 50
		var (
			start = make(chan struct{})
			wg    sync.WaitGroup
			errs  = make([]error, n)
			got   = make([]gate.Fields, n)
		)
		for i := range n {
			wg.Go(func() {
				<-start
				got[i], errs[i] = g.Take("submit_order", tok, with(order(), "client_order_id", "-"))
			})
		}
		close(start)
		wg.Wait()
		winners := 0
		for i, err := range errs {
			switch {
			case err == nil:
				winners++
				if diff := cmp.Diff(order(), got[i]); diff != "" {
					t.Errorf("winner got another command (-want +got):\n%s", diff)
				}
			case !errors.Is(err, gate.ErrUsedToken):
				t.Errorf("loser %d: %v, want a used-token error", i, err)
			}
		}
		if winners != 1 {
			t.Fatalf("round %d: %d of %d concurrent Takes won, want exactly 1", round, winners, n)
		}
	}
}

// TestConcurrentUse exercises Issue, Take and Outstanding from many
// goroutines under -race; every token confirms exactly once.
func TestConcurrentUse(t *testing.T) {
	g := gate.New[gate.Fields](gate.Options{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	confirmed := map[gate.Token]int{}
	for w := range 8 {
		wg.Go(func() {
			for i := range 200 {
				cmd := with(order(), "client_order_id", seqID(w*1000+i))
				tok, _, err := g.Issue("submit_order", cmd)
				if err != nil {
					t.Error(err)
					return
				}
				for range 2 {
					if _, err := g.Take("submit_order", tok, cmd); err == nil {
						mu.Lock()
						confirmed[tok]++
						mu.Unlock()
					}
				}
				_ = g.Outstanding()
			}
		})
	}
	wg.Wait()
	if len(confirmed) != 1600 {
		t.Errorf("%d tokens confirmed, want 1600", len(confirmed))
	}
	for tok, n := range confirmed {
		if n != 1 {
			t.Errorf("token %s confirmed %d times", tok, n)
		}
	}
	if n := g.Outstanding(); n != 0 {
		t.Errorf("Outstanding = %d after every token was taken", n)
	}
}

func TestIssuePanicsOnBrokenIDSource(t *testing.T) {
	tests := []struct {
		name  string
		ids   []string
		panic string
	}{
		{"not a uuid", []string{"tok-1"}, "not a canonical lowercase uuid"},
		{"upper case", []string{"00000000-0000-4000-8000-00000000000A"}, "not a canonical lowercase uuid"},
		{"repeats while pending", []string{seqID(1), seqID(1)}, "twice"},
		{"repeats while remembered", []string{seqID(1), seqID(1)}, "twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := 0
			g := gate.New[gate.Fields](gate.Options{NewID: func() string { next++; return tt.ids[next-1] }})
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.Contains(s, tt.panic) {
					t.Fatalf("panic %v, want one containing %q", r, tt.panic)
				}
			}()
			for range tt.ids {
				tok, _, _ := g.Issue("submit_order", order())
				if tt.name == "repeats while remembered" {
					g.Take("submit_order", tok, order())
				}
			}
		})
	}
}

func TestErrorsMatchTheirSentinelOnly(t *testing.T) {
	sentinels := map[gate.Kind]error{
		gate.KindUnknown:  gate.ErrUnknownToken,
		gate.KindExpired:  gate.ErrExpiredToken,
		gate.KindUsed:     gate.ErrUsedToken,
		gate.KindMismatch: gate.ErrMismatch,
		gate.KindTooMany:  gate.ErrTooManyPreviews,
	}
	for _, e := range sampleErrors(t) {
		t.Run(e.name, func(t *testing.T) {
			for k, s := range sentinels {
				if got, want := errors.Is(e.err, s), k == kindOf(e.err); got != want {
					t.Errorf("errors.Is(%v, %v) = %v, want %v", kindOf(e.err), s, got, want)
				}
			}
		})
	}
	// A mismatch carries SameIntent's error as its cause.
	g, _ := newGate(gate.Options{})
	tok, _, _ := g.Issue("submit_order", order())
	_, err := g.Take("submit_order", tok, with(order(), "quantity", "1"))
	var diffs gate.Differences
	if !errors.As(err, &diffs) || len(diffs) != 1 || diffs[0].Field != "quantity" {
		t.Errorf("errors.As(mismatch, Differences) = %v, want the quantity difference", diffs)
	}
}

// TestErrorTextsSayWhatToDoNext checks that every refusal says nothing was
// sent and how to go on.
func TestErrorTextsSayWhatToDoNext(t *testing.T) {
	for _, e := range sampleErrors(t) {
		t.Run(e.name, func(t *testing.T) {
			text := e.err.Error()
			if !strings.Contains(strings.ToLower(text), "nothing was sent") {
				t.Errorf("text does not say nothing was sent:\n%s", text)
			}
			if !strings.Contains(text, "without confirm") && !strings.Contains(text, "call submit_order again") {
				t.Errorf("text does not say what to call next:\n%s", text)
			}
			if strings.Contains(text, "\n") {
				t.Errorf("text spans lines:\n%s", text)
			}
		})
	}
}
