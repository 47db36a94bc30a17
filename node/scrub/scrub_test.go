package scrub_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/scrub"
)

// secret is a key made up for this run, with characters a URL escapes.
func secret(t *testing.T) string { return testkit.Secret(t, 16) + "+/=" }

func TestString(t *testing.T) {
	a, b := secret(t), secret(t)
	s := scrub.New(a, b, "", "short")
	in := "key " + a + " and " + url.QueryEscape(b) + " twice " + a + "; short stays"
	got := s.String(in)
	if strings.Contains(got, a) || strings.Contains(got, url.QueryEscape(b)) || strings.Count(got, scrub.Redacted) != 3 || !strings.Contains(got, "short stays") {
		t.Errorf("scrubbed %q", got)
	}
	var none *scrub.Scrubber
	if none.String(in) != in || scrub.New().String(in) != in {
		t.Error("an empty scrubber changed the text")
	}
}

func TestError(t *testing.T) {
	k := secret(t)
	s := scrub.New(k)
	ve := &node.VenueError{Kind: node.ErrVenueRejected, Venue: "bn", Message: "bad key " + k}
	err := s.Error(ve)
	var got *node.VenueError
	if !errors.Is(err, node.ErrVenueRejected) || !errors.As(err, &got) || strings.Contains(got.Message, k) || strings.Contains(err.Error(), k) {
		t.Errorf("a venue error: %v (%+v)", err, got)
	}
	wrapped := s.Error(fmt.Errorf("reading: %w", ve))
	if !errors.Is(wrapped, node.ErrVenueRejected) || strings.Contains(wrapped.Error(), k) {
		t.Errorf("a wrapped venue error: %v", wrapped)
	}
	plain := errors.New("no secret here")
	if s.Error(plain) != plain || s.Error(nil) != nil {
		t.Error("an error without a secret was changed")
	}
}

func TestHandler(t *testing.T) {
	k := secret(t)
	var buf bytes.Buffer
	log := slog.New(scrub.New(k).Handler(slog.NewJSONHandler(&buf, nil)))
	log.With("with", "w"+k).WithGroup("g").Warn("message "+k, "err", errors.New("echo "+k), "s", k, "n", 3,
		slog.Group("inner", "v", url.QueryEscape(k)), "any", struct{ Key string }{k})
	out := buf.String()
	if strings.Contains(out, k) || strings.Contains(out, url.QueryEscape(k)) || strings.Count(out, scrub.Redacted) != 6 || !strings.Contains(out, `"n":3`) {
		t.Errorf("log line %s", out)
	}
}
