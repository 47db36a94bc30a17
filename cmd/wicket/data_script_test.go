package main

import (
	"fmt"
	"os"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"wicket/strategy/provider/providertest"
)

// Fake Alpaca credentials for the scripts: not secrets, values the fake
// compares.
const (
	scriptAlpacaID     = "script-key-id-0001"
	scriptAlpacaSecret = "script-secret-0002"
)

// cmdFakeProvider starts fakes of Binance's and Alpaca's market data APIs on
// loopback for the rest of the script and appends their [providers.NAME]
// tables to the wicket.toml given as its argument. $ALPACA_ID and
// $ALPACA_SECRET are the credentials the Alpaca fake accepts.
//
// Data: Binance BTCUSDT hourly from 2024-01-01 to 2024-01-04 with no bars
// from 2024-01-02T05:00Z to 08:00Z; Alpaca SPY daily weekdays in January
// 2024 and BTC/USD hourly on 2024-01-01.
func cmdFakeProvider(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: fakeprovider PATH/wicket.toml")
	}
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	bn := providertest.NewBinance(nil, map[string]providertest.Gen{
		"BTCUSDT": {Start: t0, End: t0.Add(72 * time.Hour), Step: time.Hour,
			Holes: [][2]time.Time{{t0.Add(29 * time.Hour), t0.Add(32 * time.Hour)}}},
	})
	ap := providertest.NewAlpaca(nil,
		map[string]providertest.Gen{"SPY": {Start: t0, End: t0.AddDate(0, 1, 0), Step: 24 * time.Hour, Weekdays: true}},
		map[string]providertest.Gen{"BTC/USD": {Start: t0, End: t0.Add(24 * time.Hour), Step: time.Hour}})
	ap.KeyID, ap.Secret = scriptAlpacaID, scriptAlpacaSecret
	ts.Defer(bn.Close)
	ts.Defer(ap.Close)
	ts.Setenv("ALPACA_ID", scriptAlpacaID)
	ts.Setenv("ALPACA_SECRET", scriptAlpacaSecret)
	ts.Setenv("BINANCE_URL", bn.URL)
	f, err := os.OpenFile(ts.MkAbs(args[0]), os.O_APPEND|os.O_WRONLY, 0)
	ts.Check(err)
	_, err = fmt.Fprintf(f, "\n[providers.binance]\nbase_url = %q\n\n[providers.alpaca]\nbase_url = %q\n", bn.URL, ap.URL)
	ts.Check(err)
	ts.Check(f.Close())
}
