package ta_test

import (
	"strings"
	"testing"

	"wicket/strategy/ta"
)

// TestLookupTALibNames checks that TA-Lib's upper-case names find the
// catalog's lower-case entries.
func TestLookupTALibNames(t *testing.T) {
	cat := ta.Builtin()
	for _, name := range []string{"SMA", "Sma", "sma"} {
		e, ok := cat.Lookup(name)
		if !ok || e.Name != "sma" {
			t.Errorf("Lookup(%q) = %v, %v; want the sma entry", name, e, ok)
		}
	}
	for _, e := range cat.Entries() { // what makes the lower-cased lookup exact
		if e.Name != strings.ToLower(e.Name) {
			t.Errorf("entry %q is not lower case", e.Name)
		}
	}
	if _, ok := cat.Lookup("SMAX"); ok {
		t.Error("Lookup(SMAX) found an entry")
	}
}
