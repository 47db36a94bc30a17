package venuetest_test

import (
	"regexp"
	"testing"

	"wicket/node/venuetest"
)

func TestHelpers(t *testing.T) {
	id := regexp.MustCompile(`^wk-0190f5a2-7c1e-7b3a-9d4e-[0-9a-f]{12}$`)
	x, y := venuetest.ClientID(), venuetest.ClientID()
	if !id.MatchString(x) || !id.MatchString(y) || x == y {
		t.Errorf("client ids %q and %q: want two different ids in the node's form", x, y)
	}
	if len(venuetest.Behaviours) != 12 {
		t.Errorf("%d behaviours", len(venuetest.Behaviours))
	}
}
