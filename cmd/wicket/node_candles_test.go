package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/deploy"
	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/strategy/history"
	"wicket/strategy/provider/providertest"
)

// TestNodeServeRecordsDeployedCandles: `wicket node serve` on a project
// with a Binance venue (the venue's fake) and the Binance provider (its
// fake: klines and the kline stream), with no wicket data record running.
// A deployment of BTC-USD@1m, which the history store does not hold, gets
// its warm-up from the provider's REST history at deploy; then the node
// records the bar the stream closes into the history store, as data
// record would, and the deployment decides on it.
func TestNodeServeRecordsDeployedCandles(t *testing.T) {
	vp := newVenueProject(t)
	cur := time.Now().UTC().Truncate(time.Minute) // the stream closes this bar at once: fresh for a minute and more
	// The provider's history ends before cur, which only the stream closes:
	// if a minute ends before the deploy (a loaded machine), cur is still
	// the first bar after the warm-up, not a part of it that is never
	// decided on; the warm-up then holds 19 of its 20 bars.
	gen := providertest.Gen{Start: cur.Add(-2 * time.Hour), End: cur, Step: time.Minute}
	prov := providertest.NewBinance(nil, map[string]providertest.Gen{"BTCUSDT": gen})
	t.Cleanup(prov.Close)
	prov.Connections = [][]providertest.StreamEvent{{{T: cur.Add(-time.Minute), Final: true}, {T: cur}, {T: cur, Final: true}}}
	p := project.Project{Root: vp.dir}
	appendFile(t, p.ConfigPath(), fmt.Sprintf("\n[providers.binance]\nbase_url = %q\nstream_url = %q\n", prov.URL, "ws"+strings.TrimPrefix(prov.URL, "http")))
	if err := os.WriteFile(filepath.Join(vp.dir, "strategies", "flip.star"), []byte(deployFlip), 0o644); err != nil {
		t.Fatal(err)
	}
	_, c, log := vp.start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var dep deploy.Deployment
	spec := deploy.Spec{Strategy: "flip.star", Source: deployFlip, Series: "BTC-USD@1m", Venue: "bn", Mode: deploy.ModePropose,
		Capital: decimal.NewFromInt(1000), Warmup: 20}
	awaitDeployments(ctx, t, c)
	if err := c.DeploymentsPost(ctx, "", spec, &dep); err != nil {
		t.Fatalf("deploy: %v\n%s", err, log.String())
	}
	stored := func() (history.SeriesInfo, error) {
		s, err := history.OpenReadOnly(p.HistoryPath())
		if err != nil {
			return history.SeriesInfo{}, err
		}
		defer s.Close()
		return s.Info("BTC-USD@1m")
	}
	if info, err := stored(); err != nil || info.Source != "binance" || info.Bars < 19 || info.Last.Before(cur.Add(-time.Minute)) { // the stream's first bar may be recorded already
		t.Fatalf("after deploy the store holds %+v (%v): want the warm-up from binance up to %s", info, err, cur.Add(-time.Minute))
	}
	testkit.WaitFor(t, "the node to record the stream's bar", 30*time.Second, func() (bool, string) {
		info, err := stored()
		return err == nil && info.Last.Equal(cur), fmt.Sprint(info, err)
	})
	testkit.WaitFor(t, "the deployment to decide on the recorded bar", 30*time.Second, func() (bool, string) {
		var d deploy.Detail
		if err := c.DeploymentsGet(ctx, "/"+url.PathEscape(dep.ID), nil, &d); err != nil {
			return false, err.Error()
		}
		for _, dc := range d.Decisions {
			if dc.Bar.Equal(cur) && dc.Status == deploy.DecisionDecided {
				return true, ""
			}
		}
		return false, fmt.Sprint(d.Decisions)
	})
	if !strings.Contains(log.String(), "recording the provider's bars") {
		t.Errorf("the node's log does not say it records the series:\n%s", log.String())
	}
}
