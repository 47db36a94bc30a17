package venuerig_test

import (
	"fmt"
	"strings"
	"testing"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node/venuerig"
)

// TestStartReadsEveryVenue: a node rigged with a Binance and an Alpaca
// venue has read both when Start returns: connected, instruments, account
// and a mark for each symbol, at the fakes' prices.
func TestStartReadsEveryVenue(t *testing.T) {
	bn := venuerig.Binance(t, map[string]string{"USDT": "20000"}, "BTCUSDT", "ETHUSDT")
	al := venuerig.Alpaca(t, "20000", "BTC/USD")
	if bn.APIKey == "" || bn.APIKey == bn.Secret || al.KeyID == "" || al.KeyID == bn.APIKey {
		t.Fatal("the fakes' keys are not fresh, distinct keys")
	}
	srv := venuerig.Start(t, []venuerig.Venue{
		venuerig.OnBinance(bn, project.Venue{Name: "bn", MayArm: true, Symbols: []string{"BTCUSDT", "ETHUSDT"}}),
		venuerig.OnAlpaca(al, project.Venue{Name: "al", MayArm: true, Symbols: []string{"BTC-USD"}}),
	})
	c := srv.Client()
	for name, want := range map[string]map[string]string{
		"bn": {"BTCUSDT": "60000", "ETHUSDT": "3000"},
		"al": {"BTC-USD": "60000"},
	} {
		v := venuerig.WaitSynced(t, c, name)
		if !venuerig.Synced(v) || len(v.Marks) != len(want) {
			t.Fatalf("venue %s: %+v", name, v)
		}
		for sym, p := range want {
			if got, ok := v.Marks[sym]; !ok || !got.Equal(testkit.D(p)) {
				t.Errorf("venue %s marks %s at %s, want %s", name, sym, got, p)
			}
		}
	}
}

// TestUnknownInstrumentFails: asking the rig for an instrument it does
// not list fails the test, naming it and the ones it has.
func TestUnknownInstrumentFails(t *testing.T) {
	ft := &fatalTB{TB: t}
	func() {
		defer func() { _ = recover() }()
		venuerig.Binance(ft, nil, "DOGEUSDT")
	}()
	if !strings.Contains(ft.msg, `"DOGEUSDT"`) || !strings.Contains(ft.msg, "BTCUSDT, ETHUSDT") {
		t.Fatalf("the failure was %q", ft.msg)
	}
}

// fatalTB records a Fatalf and stops the call, as testing.T's does, without
// failing the test that holds it.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic(f)
}
