package project

import (
	"strings"
	"testing"
)

// TestFlipPolicy: a binance-futures venue's flip key defaults to refuse,
// reads "refuse" and "split", and refuses anything else naming the
// values; another kind refuses the key.
func TestFlipPolicy(t *testing.T) {
	base := "[[venues]]\nname = \"perps\"\nkind = \"binance-futures\"\nsymbols = [\"BTCUSDT\"]\n"
	for text, want := range map[string]string{base: FlipRefuse, base + "flip = \"refuse\"\n": FlipRefuse, base + "flip = \"split\"\n": FlipSplit} {
		cfg, err := ParseConfig("wicket.toml", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := cfg.Venue("perps"); v.FlipPolicy() != want {
			t.Errorf("%q: flip %q, want %q", text, v.FlipPolicy(), want)
		}
	}
	for _, c := range []struct{ text, want string }{
		{base + "flip = \"allow\"\n", `flip "allow": write "refuse" (refuse an order that would take a position through zero, the default) or "split"`},
		{strings.Replace(base, "binance-futures", "binance", 1) + "flip = \"refuse\"\n", "flip: only a binance-futures venue"},
	} {
		if _, err := ParseConfig("wicket.toml", []byte(c.text)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
	}
}
