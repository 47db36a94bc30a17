package main

import (
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/strategy"
)

// TestNodeTapeFlagsRefuseNamingTheFix: --from and --speed without what
// they need, or with values they cannot take, are usage errors that name
// the flag and the fix; max is as fast as possible; a date is UTC.
func TestNodeTapeFlagsRefuseNamingTheFix(t *testing.T) {
	if v, err := parseTapeSpeed("max"); err != nil || v != 0 {
		t.Fatalf("max: %v %v", v, err)
	}
	if v, err := parseTapeSpeed("60"); err != nil || v != 60 {
		t.Fatalf("60: %v %v", v, err)
	}
	if at, err := parseTapeFrom("2026-03-01"); err != nil || !at.Equal(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("a date: %v %v", at, err)
	}
	cfg := project.Defaults()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, c := range []struct {
		o    nodeOptions
		want string
	}{
		{nodeOptions{speed: "0"}, "--replay SERIES"},
		{nodeOptions{replay: "BTC-USD@1m", speed: "60"}, "give --from T"},
		{nodeOptions{replay: "BTC-USD@1m", from: "yesterday"}, "--from \"yesterday\": give a time such as"},
		{nodeOptions{replay: "BTC-USD@1m", from: "2026-03-01", speed: "-2"}, "--speed \"-2\": give a speed above 0"},
		{nodeOptions{replay: "BTC-USD@1m", from: "2026-03-01", speed: "fast"}, "or max"},
		{nodeOptions{replay: "DOGE-USD@1m", from: "2026-03-01"}, "no simulated paper venue in wicket.toml lists DOGE-USD"},
		{nodeOptions{replay: "BTC-USD@1m,ETH-USD@1m,BTC-USD@1m", from: "2026-03-01"}, "--replay BTC-USD@1m is given twice"},
		{nodeOptions{replay: "BTC-USD@1m,BTC-USD@1h", from: "2026-03-01"}, "both are BTC-USD; give one series per symbol"},
		{nodeOptions{replay: "BTC-USD@1m,ETH-USD", from: "2026-03-01"}, "--replay: "},
		{nodeOptions{replay: " , ", from: "2026-03-01"}, "names no series"},
	} {
		_, err := nodeTape(project.Project{}, cfg, c.o, log)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want a usage error saying %q", c.o, err, c.want)
		}
	}
	if got, err := replaySeries("BTC-USD@1m, ETH-USD@1m,SOL-USD@1m"); err != nil || strings.Join(got, " ") != "BTC-USD@1m ETH-USD@1m SOL-USD@1m" {
		t.Fatalf("a comma list: %q %v", got, err)
	}
	if run, err := nodeTape(project.Project{}, cfg, nodeOptions{replay: "BTC-USD@1m"}, log); run != nil || err != nil {
		t.Fatalf("--replay alone: %v %v, want the closes on the wall clock as before", run, err)
	}
}

// TestNodeFeedReplaysSeveralSeries: --replay with several series and no
// --from drives each series' symbol with its closes, on the wall clock.
func TestNodeFeedReplaysSeveralSeries(t *testing.T) {
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	bars := func(series string, closes ...float64) strategy.Bars {
		b := strategy.Bars{Series: series}
		for i, c := range closes {
			b.Time = append(b.Time, start.Add(time.Duration(i)*time.Hour).Unix())
			b.Open, b.High, b.Low, b.Close, b.Volume = append(b.Open, c), append(b.High, c), append(b.Low, c), append(b.Close, c), append(b.Volume, 1)
		}
		return b
	}
	dir, p := tapeProject(t, "none.star", `"""None."""`, bars("BTC-USD@1h", 100, 101), bars("ETH-USD@1h", 40, 41, 42))
	_, cfg, err := openProjectAt(dir)
	if err != nil {
		t.Fatal(err)
	}
	feed, err := nodeFeed(p, cfg, "BTC-USD@1h,ETH-USD@1h", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if len(feed.Replay) != 2 || len(feed.Replay["BTC-USD"]) != 2 || !feed.Replay["ETH-USD"][2].Equal(decimal.NewFromInt(42)) {
		t.Fatalf("replayed closes %v: want BTC-USD's two and ETH-USD's three", feed.Replay)
	}
}
