package main

import (
	"fmt"
	"os"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"wicket/strategy/provider/providertest"
)

// cmdFakeFunding starts a fake of Binance USDⓈ-M futures' funding-rate
// history on loopback for the rest of the script and appends its
// [providers.binance] table (futures_url) to the wicket.toml given as its
// argument. Data: BTCUSDT settles every 8 hours through December 2024
// (93 settlements) at +0.01 %.
func cmdFakeFunding(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: fakefunding PATH/wicket.toml")
	}
	f := providertest.NewFunding(map[string][]providertest.Settlement{
		"BTCUSDT": providertest.Every(time.Date(2024, 12, 1, 0, 0, 0, 0, time.UTC), 8*time.Hour, 93, "0.00010000"),
	})
	ts.Defer(f.Close)
	file, err := os.OpenFile(ts.MkAbs(args[0]), os.O_APPEND|os.O_WRONLY, 0)
	ts.Check(err)
	_, err = fmt.Fprintf(file, "\n[providers.binance]\nfutures_url = %q\n", f.URL)
	ts.Check(err)
	ts.Check(file.Close())
}
