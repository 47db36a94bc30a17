package venuetest_test

import (
	"regexp"
	"testing"

	"wicket/node/venuetest"
)

func TestHelpers(t *testing.T) {
	a, b := venuetest.Key(t), venuetest.Key(t)
	if len(a) != 32 || a == b {
		t.Errorf("keys %q and %q: want two different 32-hex-digit keys", a, b)
	}
	id := regexp.MustCompile(`^wk-0190f5a2-7c1e-7b3a-9d4e-[0-9a-f]{12}$`)
	x, y := venuetest.ClientID(), venuetest.ClientID()
	if !id.MatchString(x) || !id.MatchString(y) || x == y {
		t.Errorf("client ids %q and %q: want two different ids in the node's form", x, y)
	}
	if !venuetest.D("0.10").Equal(venuetest.D("0.1")) || venuetest.D("0.1").String() != "0.1" {
		t.Error("D does not make the decimal of its literal")
	}
	if len(venuetest.Behaviours) != 12 {
		t.Errorf("%d behaviours", len(venuetest.Behaviours))
	}
}
