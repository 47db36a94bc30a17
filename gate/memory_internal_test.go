package gate

import (
	"fmt"
	"testing"
	"time"
)

// cmd is a minimal Command for white-box tests.
type cmd string

func (c cmd) SameIntent(o cmd) error {
	if c != o {
		return fmt.Errorf("previewed %q, confirming %q", string(c), string(o))
	}
	return nil
}

// TestMemoryStaysBounded drives many previews through a gate whose oldest
// token stays outstanding, and checks that every internal structure stays
// within its bound: taken entries are compacted away, expired ones swept, and
// remembered ones capped in count and forgotten after RememberWindow.
func TestMemoryStaysBounded(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	n := 0
	p := New[cmd](Options{
		Now:           func() time.Time { return now },
		NewID:         func() string { n++; return fmt.Sprintf("00000000-0000-4000-8000-%012x", n) },
		Max:           16,
		MaxRemembered: 100,
	})
	check := func(when string) {
		t.Helper()
		if len(p.pending) > p.max {
			t.Fatalf("%s: %d pending, cap %d", when, len(p.pending), p.max)
		}
		// sweep keeps order within 2*pending+32; the call that swept may
		// then add one entry and take up to two.
		if len(p.order) > 2*len(p.pending)+35 {
			t.Fatalf("%s: order holds %d entries for %d pending", when, len(p.order), len(p.pending))
		}
		if len(p.spent) > p.maxRemembered || len(p.spentOrder) > p.maxRemembered {
			t.Fatalf("%s: %d remembered (%d in order), cap %d", when, len(p.spent), len(p.spentOrder), p.maxRemembered)
		}
	}

	// One long-lived token at the head, then many confirmed ones behind it.
	head, _, _ := p.Issue("submit_order", "head")
	for i := range 10_000 {
		tok, _, err := p.Issue("submit_order", cmd(fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Take("submit_order", tok, cmd(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("confirm %d", i))
	}
	if _, ok := p.pending[head]; !ok {
		t.Fatal("the head token was lost")
	}

	// Previews nobody confirms, issued a second apart, all expire.
	for i := range 1000 {
		now = now.Add(time.Second)
		if _, _, err := p.Issue("submit_order", cmd(fmt.Sprint(i))); err != nil && len(p.pending) < p.max {
			t.Fatal(err)
		}
		check(fmt.Sprintf("unconfirmed %d", i))
	}

	// After PreviewWindow nothing is pending; after RememberWindow more,
	// nothing is remembered.
	now = now.Add(PreviewWindow)
	if got := p.Outstanding(); got != 0 {
		t.Fatalf("Outstanding = %d after every token expired", got)
	}
	now = now.Add(RememberWindow)
	p.Outstanding()
	if len(p.pending) != 0 || len(p.order) != 0 || len(p.spent) != 0 || len(p.spentOrder) != 0 {
		t.Fatalf("after the remember window: pending %d, order %d, spent %d, spentOrder %d; want all 0",
			len(p.pending), len(p.order), len(p.spent), len(p.spentOrder))
	}
}

// TestSweepToleratesAClockThatGoesBack checks that a token issued after the
// clock stepped back, and so sitting in the issue order behind a token that
// expires later, is still refused from its own expiry on, whether a full sweep
// (Issue at the cap) or Take itself finds it expired.
func TestSweepToleratesAClockThatGoesBack(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		issue  bool          // Issue once more before the Take
		offset time.Duration // when to Take, from the early token's expiry
		want   Kind          // 0 = confirms
	}{
		{"take just before expiry", 10, false, -time.Millisecond, 0},
		{"take at expiry", 10, false, 0, KindExpired},
		{"issue at the cap, then take", 2, true, 0, KindExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			n := 0
			p := New[cmd](Options{
				Now:   func() time.Time { return now },
				NewID: func() string { n++; return fmt.Sprintf("00000000-0000-4000-8000-%012x", n) },
				Max:   tt.max,
			})
			p.Issue("submit_order", "late") // expires at +60s
			now = now.Add(-30 * time.Second)
			early, exp, _ := p.Issue("submit_order", "early") // expires at +30s, behind "late"
			now = exp.Add(tt.offset)
			if tt.issue {
				if _, _, err := p.Issue("submit_order", "third"); err != nil {
					t.Fatalf("Issue at the cap after one token expired: %v", err)
				}
			}
			_, err := p.Take("submit_order", early, "early")
			var got Kind
			if e, ok := err.(*Error); ok {
				got = e.Kind
			} else if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("Take of the out-of-order token: %v, want kind %v", err, tt.want)
			}
		})
	}
}

// TestSweepRetiresAtExpiry checks that the cheap sweep every call makes
// retires a token at exactly its expiry, not a tick later.
func TestSweepRetiresAtExpiry(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := New[cmd](Options{Now: func() time.Time { return now }})
	tok, exp, _ := p.Issue("submit_order", "x")
	for _, at := range []time.Time{exp.Add(-time.Nanosecond), exp} {
		now = at
		p.Take("submit_order", "00000000-0000-4000-8000-000000000000", "x") // sweeps
		_, pending := p.pending[tok]
		if want := at.Before(exp); pending != want {
			t.Errorf("at expiry%+v: pending = %v, want %v", at.Sub(exp), pending, want)
		}
	}
}
