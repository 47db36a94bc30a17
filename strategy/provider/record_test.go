package provider_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"wicket/strategy"
	"wicket/strategy/history"
	"wicket/strategy/provider"
	"wicket/strategy/provider/binance"
	"wicket/strategy/provider/providertest"
)

// TestRecordReconnectBackfill: the stream sends three closed bars (and
// updates of forming ones), drops, comes back three minutes later and
// repeats a bar; the recorder back-fills the two it missed over REST. The
// series ends with every bar exactly once.
func TestRecordReconnectBackfill(t *testing.T) {
	m := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Minute) }
	clock := providertest.NewClock(m(3).Add(time.Second))
	gen := providertest.Gen{Start: t0, End: t0.Add(24 * time.Hour), Step: time.Minute}
	f := providertest.NewBinance(clock, map[string]providertest.Gen{"BTCUSDT": gen})
	defer f.Close()
	f.Connections = [][]providertest.StreamEvent{
		{{T: m(0), Final: true}, {T: m(1)}, {T: m(1), Final: true}, {T: m(2), Final: true}, {T: m(3)}},
		{{T: m(2), Final: true}, {T: m(5)}, {T: m(5), Final: true}, {T: m(6), Final: true}, {T: m(7)}},
	}
	store, err := history.Open(filepath.Join(t.TempDir(), "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	c := binance.New(binance.Config{BaseURL: f.URL, StreamURL: "ws" + strings.TrimPrefix(f.URL, "http"), Transport: &provider.Transport{Sleep: clock.Sleep, Now: clock.Now}})

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
			if strings.Contains(l, "2024-01-01T00:06:00Z") {
				cancel() // the last closed bar is stored
			}
		}})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Record did not stop after its context ended")
	}
	b, err := store.Load("BTC-USD@1m", time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Len() != 7 {
		t.Fatalf("stored %d bars, want 7 (0..6): %v\nlog:\n%s", b.Len(), b.Time, strings.Join(lines, "\n"))
	}
	for i := range 7 {
		want := gen.At(m(i))
		if b.Time[i] != m(i).Unix() || b.Close[i] != want.C || b.Open[i] != want.O {
			t.Fatalf("bar %d: %d close %v, want %d close %v", i, b.Time[i], b.Close[i], m(i).Unix(), want.C)
		}
	}
	log := strings.Join(lines, "\n")
	for _, want := range []string{"stream lost", "reconnecting in 1s", "back-filled 2 bars over REST (2024-01-01T00:03:00Z to 2024-01-01T00:04:00Z)", "BTC-USD@1m 2024-01-01T00:00:00Z o="} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if n := f.Connects(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
	info, _ := store.Info("BTC-USD@1m")
	if info.Source != "binance" || info.ProviderSymbol != "BTCUSDT" {
		t.Errorf("info %+v", info)
	}
}

// TestRecordBesideAnotherRecorder: another recorder of the same store (a
// node recording for its deployments while wicket data record runs)
// stores the next two bars first; this one skips them, stores the bar
// after, and goes on, instead of stopping on the store's refusal.
func TestRecordBesideAnotherRecorder(t *testing.T) {
	m := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Minute) }
	clock := providertest.NewClock(m(4))
	gen := providertest.Gen{Start: t0, End: t0.Add(24 * time.Hour), Step: time.Minute}
	f := providertest.NewBinance(clock, map[string]providertest.Gen{"BTCUSDT": gen})
	defer f.Close()
	f.Connections = [][]providertest.StreamEvent{{{T: m(0), Final: true}, {T: m(1), Final: true}, {T: m(2), Final: true}, {T: m(3), Final: true}}}
	store, err := history.Open(filepath.Join(t.TempDir(), "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	c := binance.New(binance.Config{BaseURL: f.URL, StreamURL: "ws" + strings.TrimPrefix(f.URL, "http"), Transport: &provider.Transport{Sleep: clock.Sleep, Now: clock.Now}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	other := func() { // the other recorder stores minutes 1 and 2
		var b strategy.Bars
		for i := 1; i <= 2; i++ {
			g := gen.At(m(i))
			b.Time, b.Open, b.High, b.Low, b.Close, b.Volume = append(b.Time, g.T.Unix()), append(b.Open, g.O), append(b.High, g.H), append(b.Low, g.L), append(b.Close, g.C), append(b.Volume, g.V)
		}
		if err := store.Append(ctx, "BTC-USD@1m", b, history.AppendOptions{Source: "binance"}); err != nil {
			t.Error(err)
		}
	}
	var lines []string
	done := make(chan error, 1)
	go func() {
		done <- provider.Record(ctx, store, c, c, []string{"BTC-USD@1m"}, provider.RecordOptions{Sleep: clock.Sleep, Now: clock.Now, Log: func(l string) {
			lines = append(lines, l) // one series: one goroutine logs
			switch {
			case strings.Contains(l, "2024-01-01T00:00:00Z o="):
				other()
			case strings.Contains(l, "2024-01-01T00:03:00Z o="):
				cancel()
			}
		}})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Record stopped: %v\n%s", err, strings.Join(lines, "\n"))
		}
	case <-time.After(20 * time.Second): // a guard against a hang
		t.Fatalf("Record did not store minute 3:\n%s", strings.Join(lines, "\n"))
	}
	b, err := store.Load("BTC-USD@1m", time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Len() != 4 || b.Time[3] != m(3).Unix() {
		t.Fatalf("stored %v, want minutes 0..3 once each", b.Time)
	}
}
