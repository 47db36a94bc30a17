package provider

import (
	"context"
	"fmt"
	"strings"
	"time"

	"wicket/strategy"
)

// Source is one market data provider's historical bars.
type Source interface {
	// Name is the provider's name as wicket.toml and --provider spell it;
	// a series it fills records it as its source.
	Name() string
	// Symbol maps a wicket symbol (BTC-USD, SPY) to the provider's own
	// (BTCUSDT, BTC/USD), or says which symbols the provider accepts.
	Symbol(sym string) (string, error)
	// Bars calls page with the provider's bars of symbol psym whose open
	// time lies in [from, to), oldest first, one page at a time, until the
	// range is done or page returns an error (which Bars returns). An
	// unsupported granularity is an error naming the supported ones.
	Bars(ctx context.Context, psym string, g strategy.Granularity, from, to time.Time, page func(strategy.Bars) error) error
}

// Error is a provider's refusal that a user can act on (an unknown symbol,
// missing keys, an unsupported granularity); the command prints it as is.
type Error struct {
	Provider string
	Msg      string
	Err      error
	// Permanent marks a refusal that retrying cannot mend (bad keys, an
	// unsupported granularity): the live tape stops on it instead of
	// reconnecting.
	Permanent bool
}

func (e *Error) Error() string {
	s := e.Provider + ": " + e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Refusef builds a Permanent *Error.
func Refusef(provider string, err error, format string, a ...any) *Error {
	e := Errorf(provider, err, format, a...)
	e.Permanent = true
	return e
}

// Errorf builds an *Error.
func Errorf(provider string, err error, format string, a ...any) *Error {
	return &Error{Provider: provider, Msg: fmt.Sprintf(format, a...), Err: err}
}

// Pair splits a wicket pair symbol BASE-QUOTE (BTC-USD). ok is false for a
// plain symbol (SPY) or anything else.
func Pair(sym string) (base, quote string, ok bool) {
	base, quote, ok = strings.Cut(sym, "-")
	if !ok || base == "" || quote == "" || strings.Contains(quote, "-") || !alnum(base) || !alnum(quote) {
		return "", "", false
	}
	return strings.ToUpper(base), strings.ToUpper(quote), true
}

func alnum(s string) bool {
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// Floor returns the open time of the bar of granularity g that holds t.
func Floor(t time.Time, g strategy.Granularity) time.Time {
	step := int64(g.Duration() / time.Second)
	u := t.Unix()
	u -= ((u % step) + step) % step
	return time.Unix(u, 0).UTC()
}

// GranularityNames lists gs for an error message.
func GranularityNames(gs []strategy.Granularity) string {
	s := make([]string, len(gs))
	for i, g := range gs {
		s[i] = string(g)
	}
	return strings.Join(s, ", ")
}
