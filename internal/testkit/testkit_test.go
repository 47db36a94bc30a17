package testkit_test

import (
	"crypto/ed25519"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"wicket/internal/testkit"
)

func TestClock(t *testing.T) {
	start := time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)
	c := testkit.NewClock(start)
	if first, second := c.Now(), c.Now(); !first.Equal(start) || !second.Equal(start) {
		t.Fatal("a clock moved without being told")
	}
	c.Advance(1500 * time.Millisecond)
	if got := c.Now(); !got.Equal(start.Add(1500 * time.Millisecond)) {
		t.Fatalf("after Advance: %s", got)
	}
	c.Set(start.Add(-time.Hour))
	if got := c.Now(); !got.Equal(start.Add(-time.Hour)) {
		t.Fatalf("after Set: %s", got)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); c.Advance(time.Second); _ = c.Now() }()
	}
	wg.Wait()
	if got := c.Now(); !got.Equal(start.Add(-time.Hour + 8*time.Second)) {
		t.Fatalf("after 8 concurrent advances: %s", got)
	}
}

func TestSteppingClock(t *testing.T) {
	start := time.Unix(0, 0).UTC()
	c := testkit.NewSteppingClock(start, 1500*time.Millisecond)
	if a, b := c.Now(), c.Now(); !a.Equal(start.Add(1500*time.Millisecond)) || b.Sub(a) != 1500*time.Millisecond {
		t.Fatalf("readings %s, %s", a, b)
	}
}

// panics runs do and returns what it panicked with ("" if it did not).
func panics(do func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	do()
	return ""
}

func TestD(t *testing.T) {
	if got := testkit.D("0.50"); got.String() != "0.5" {
		t.Errorf("D(0.50) = %s", got)
	}
	if got := testkit.D("-12e3"); got.String() != "-12000" {
		t.Errorf("D(-12e3) = %s", got)
	}
	for _, bad := range []string{"", "1,5", "0.5 ", "NaN"} {
		msg := panics(func() { testkit.D(bad) })
		if !strings.Contains(msg, fmt.Sprintf("testkit.D(%q)", bad)) {
			t.Errorf("D(%q) panicked with %q; want a panic naming the input", bad, msg)
		}
	}
}

func TestTime(t *testing.T) {
	if got := testkit.Time("2026-04-30T23:59:58.5Z"); !got.Equal(time.Date(2026, 4, 30, 23, 59, 58, 5e8, time.UTC)) {
		t.Errorf("Time = %s", got)
	}
	if msg := panics(func() { testkit.Time("2026-04-30") }); !strings.Contains(msg, `testkit.Time("2026-04-30")`) {
		t.Errorf("a date without a time panicked with %q", msg)
	}
}

// TestKeysAreFresh: every key and secret is new, and a key signs what its
// public half verifies.
func TestKeysAreFresh(t *testing.T) {
	a, b := testkit.Key(t), testkit.Key(t)
	if a.Equal(b) {
		t.Fatal("two calls made the same key")
	}
	msg := []byte("arm venue bn")
	if !ed25519.Verify(a.Public().(ed25519.PublicKey), msg, ed25519.Sign(a, msg)) {
		t.Fatal("a key's signature does not verify with its public half")
	}
	s1, s2 := testkit.Secret(t, 16), testkit.Secret(t, 16)
	if len(s1) != 32 || s1 == s2 || strings.Trim(s1, "0123456789abcdef") != "" {
		t.Fatalf("secrets %q, %q", s1, s2)
	}
	if b := testkit.Bytes(t, 24); len(b) != 24 {
		t.Fatalf("Bytes(24) made %d", len(b))
	}
}
