package script

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// TestKnobNameIsTheRule: validKnobName accepts exactly the names of the
// rule it replaced, ^[A-Za-z_][A-Za-z0-9_]{0,63}$, on edge names and on
// random strings over letters, digits, _ and other bytes.
func TestKnobNameIsTheRule(t *testing.T) {
	rule := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)
	names := []string{"", "a", "_", "9", "a9", "fast", "slow_2", "Fast", "a-b", "a b", "é", "aé", "a\x00", "a\n",
		strings.Repeat("a", 64), strings.Repeat("a", 65), "_" + strings.Repeat("9", 63), "`", "{", "@", "[", "Z", "z"}
	alphabet := "azAZ_09-. \x00é{`@[/:"
	rng := rand.New(rand.NewPCG(11, 12))
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(70) {
			b.WriteByte(alphabet[rng.IntN(len(alphabet))])
		}
		names = append(names, b.String())
	}
	for _, n := range names {
		if got, want := validKnobName(n), rule.MatchString(n); got != want {
			t.Fatalf("validKnobName(%q) = %v, the rule says %v", n, got, want)
		}
	}
}
