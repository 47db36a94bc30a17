package script

import (
	"context"
	"errors"
	"testing"
	"time"

	"wicket/strategy"
)

// rampBars are n bars with close 1, 2, ..., n.
func rampBars(n int) strategy.Bars {
	b := strategy.Bars{Series: "RAMP@1h"}
	for i := 0; i < n; i++ {
		c := float64(i + 1)
		b.Time = append(b.Time, 1704067200+int64(i)*3600)
		b.Open = append(b.Open, c-0.25)
		b.High = append(b.High, c+0.5)
		b.Low = append(b.Low, c-0.5)
		b.Close = append(b.Close, c)
		b.Volume = append(b.Volume, 100)
	}
	return b
}

func mustLoad(t testing.TB, src string, opts Options) *Strategy {
	t.Helper()
	s, err := Load(context.Background(), Source{Name: "t.star", Text: src}, opts)
	if err != nil {
		t.Fatalf("load: %v\n%s", err, src)
	}
	return s
}

// asError requires err to be a *Error of kind.
func asError(t *testing.T, err error, kind Kind) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v (%T), want a *script.Error of kind %s", err, err, kind)
	}
	if e.Kind != kind {
		t.Fatalf("got kind %s (%v), want %s", e.Kind, e, kind)
	}
	if e.Hint == "" {
		t.Errorf("%v: no hint", e)
	}
	return e
}

func bg(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}
