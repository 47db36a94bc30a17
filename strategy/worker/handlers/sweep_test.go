package handlers

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wicket/strategy/backtest"
	"wicket/strategy/history"
	"wicket/strategy/ta"
	"wicket/strategy/templates"
	"wicket/strategy/worker"
)

func TestStatsOf(t *testing.T) {
	// Returns 1, 2, 3, 4, 10: mean 4, deviations -3 -2 -1 0 6, central
	// moments by hand.
	r := []float64{1, 2, 3, 4, 10}
	st := worker.StatsOf(backtest.MomentsOf(r))
	m2 := (9.0 + 4 + 1 + 0 + 36) / 5     // 10
	m3 := (-27.0 - 8 - 1 + 0 + 216) / 5  // 36
	m4 := (81.0 + 16 + 1 + 0 + 1296) / 5 // 278.8
	sd := math.Sqrt(50.0 / 4)
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"sr", float64(st.SR), 4 / sd},
		{"skew", float64(st.Skew), m3 / math.Pow(m2, 1.5)},
		{"kurt", float64(st.Kurt), m4 / (m2 * m2)},
	} {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if st.T != 5 {
		t.Errorf("T = %d", st.T)
	}
	if flat := worker.StatsOf(backtest.MomentsOf([]float64{0, 0, 0})); !math.IsNaN(float64(flat.SR)) {
		t.Errorf("flat returns have SR %v, want undefined", flat.SR)
	}
	// Num crosses JSON with NaN as null and back.
	b, _ := json.Marshal(worker.StatsOf(backtest.MomentsOf([]float64{0, 0})))
	var back worker.ReturnStats
	if err := json.Unmarshal(b, &back); err != nil || string(b) != `{"sr":null,"skew":null,"kurt":null,"t":2}` || !math.IsNaN(float64(back.SR)) {
		t.Errorf("%s → %+v, %v", b, back, err)
	}
}

// TestBarCache: a worker's cached range serves a request only with the
// digest the caller read; another digest reads the store again.
func TestBarCache(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	src, err := history.OpenReadOnly(demoStore(t))
	if err != nil {
		t.Fatal(err)
	}
	bars, err := src.Load("SPY@1d", time.Time{}, time.Time{})
	src.Close()
	if err != nil {
		t.Fatal(err)
	}
	s, err := history.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(t.Context(), "SPY@1d", bars, history.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	want := bars.Digest()
	if other := bars.Slice(1, bars.Len()).Digest(); other == want {
		t.Fatal("the digest ignores a bar")
	}
	var c barCache
	got, err := c.load(path, "SPY@1d", time.Time{}, time.Time{}, want)
	if err != nil || got.digest != want || got.bars.Digest() != want {
		t.Fatalf("first load: %v", err)
	}
	// Bars read from the store that are not the ones named changed since
	// the caller saw them: an error, not a second version in one sweep.
	if _, err := c.load(path, "SPY@1d", time.Time{}, time.Unix(bars.Time[10], 0), want); err == nil || !strings.Contains(err.Error(), "changed while the research ran") {
		t.Errorf("bars with another digest than the one named: %v", err)
	}
	if err := os.Rename(path, path+".gone"); err != nil {
		t.Fatal(err)
	}
	if got, err := c.load(path, "SPY@1d", time.Time{}, time.Time{}, want); err != nil || got.bars.Len() != bars.Len() {
		t.Errorf("a cached range with its digest read the store again: %v", err)
	}
	if _, err := c.load(path, "SPY@1d", time.Time{}, time.Time{}, "another digest"); err == nil {
		t.Error("a different digest was served from the cache")
	}
	if _, err := c.load(path, "SPY@1d", time.Time{}, time.Unix(bars.Time[5], 0), want); err == nil {
		t.Error("another range was served from the cache")
	}
	// A backtest that names the digest (a sweep's winner check) uses the
	// cached bars; one that does not reads the store, which is gone.
	src2, err := templates.Source("sma_cross")
	if err != nil {
		t.Fatal(err)
	}
	req := backtest.Request{Source: src2, Name: "sma_cross.star", Series: "SPY@1d", HistoryPath: path, Digest: want}
	if _, err := backtestWith(t.Context(), req, ta.NewMemo(0), &c); err != nil {
		t.Errorf("a backtest naming the cached bars' digest: %v", err)
	}
	req.Digest = ""
	if _, err := backtestWith(t.Context(), req, ta.NewMemo(0), &c); err == nil {
		t.Error("a backtest without a digest did not read the store")
	}
}
