package alpaca_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"wicket/strategy/history"
	"wicket/strategy/provider"
	"wicket/strategy/provider/alpaca"
	"wicket/strategy/provider/providertest"
)

// TestRecordFromStream: Alpaca's crypto bar stream sends three minute bars,
// drops, comes back (the library reconnects) with a repeat and a bar two
// minutes on; the recorder back-fills the missed two over REST. Every bar
// is stored once.
func TestRecordFromStream(t *testing.T) {
	m := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Minute) }
	gen := providertest.Gen{Start: t0, End: t0.Add(24 * time.Hour), Step: time.Minute}
	clock := providertest.NewClock(m(3).Add(time.Second))
	f := providertest.NewAlpaca(clock, nil, map[string]providertest.Gen{"BTC/USD": gen})
	f.KeyID, f.Secret = testID, testSecret
	defer f.Close()
	f.StreamConnections = [][]time.Time{{m(0), m(1), m(2)}, {m(2), m(5), m(6)}}
	c := alpaca.New(alpaca.Config{BaseURL: f.URL, StreamURL: "ws" + strings.TrimPrefix(f.URL, "http"), KeyID: testID, Secret: testSecret,
		Transport: &provider.Transport{Sleep: clock.Sleep, Now: clock.Now}})
	store, err := history.Open(filepath.Join(t.TempDir(), "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		mu    sync.Mutex
		lines []string
	)
	done := make(chan error, 1)
	go func() {
		done <- provider.Record(ctx, store, c, c, []string{"BTC-USD@1m"}, provider.RecordOptions{Sleep: clock.Sleep, Now: clock.Now, Log: func(l string) {
			mu.Lock()
			defer mu.Unlock()
			lines = append(lines, l)
			if strings.Contains(l, "2024-01-01T00:06:00Z o=") {
				cancel()
			}
		}})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("Record did not stop; log:\n%s\nrequests: %+v", strings.Join(lines, "\n"), f.Requests())
	}
	b, err := store.Load("BTC-USD@1m", time.Time{}, time.Time{})
	mu.Lock()
	log := strings.Join(lines, "\n")
	mu.Unlock()
	if err != nil || b.Len() != 7 {
		t.Fatalf("stored %d bars (%v), want 7\n%s", b.Len(), err, log)
	}
	for i := range 7 {
		if b.Time[i] != m(i).Unix() || b.Close[i] != gen.At(m(i)).C {
			t.Fatalf("bar %d: %d %v", i, b.Time[i], b.Close[i])
		}
	}
	if !strings.Contains(log, "back-filled 2 bars over REST") {
		t.Errorf("log:\n%s", log)
	}
	if n := f.StreamConnects(); n != 2 {
		t.Errorf("%d stream connections, want 2", n)
	}
}

func TestStreamRefusals(t *testing.T) {
	f, _, _ := setup(t, nil, map[string]providertest.Gen{"BTC/USD": {Start: t0, End: t0.Add(time.Hour), Step: time.Minute}}, alpaca.Config{})
	ws := "ws" + strings.TrimPrefix(f.URL, "http")
	c := alpaca.New(alpaca.Config{BaseURL: f.URL, StreamURL: ws, KeyID: testID, Secret: testSecret})
	err := c.Stream(context.Background(), "BTC/USD", "1h", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "1m bars only") {
		t.Errorf("1h: %v", err)
	}
	err = alpaca.New(alpaca.Config{BaseURL: f.URL, StreamURL: ws}).Stream(context.Background(), "BTC/USD", "1m", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "needs a key") {
		t.Errorf("no key: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err = alpaca.New(alpaca.Config{BaseURL: f.URL, StreamURL: ws, KeyID: "wrong", Secret: "wrong-secret-here"}).Stream(ctx, "BTC/USD", "1m", nil, nil)
	var pe *provider.Error
	if !errors.As(err, &pe) || !pe.Permanent || strings.Contains(err.Error(), "wrong-secret-here") || !strings.Contains(err.Error(), "WICKET_ALPACA_KEY_ID") {
		t.Errorf("bad key: %v", err)
	}
	t.Logf("bad key: %v", err)
}
