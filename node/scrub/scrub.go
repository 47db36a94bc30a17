// Package scrub removes the secret values a node loaded (its own keys, its
// venues' keys) from text before the node logs, returns or journals it: a
// venue whose error message echoes a key must not carry that key into
// node.log, an HTTP answer or the journal.
//
// A Scrubber knows the values themselves, so it needs no pattern and finds
// a key wherever it appears, also in its URL-encoded form. It never logs,
// returns or stores a secret, and a value too short to be a key (under
// MinLength) is not taken, so that ordinary words are never redacted.
package scrub

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"slices"
	"strings"

	"wicket/node"
)

// Redacted replaces each secret value.
const Redacted = "[redacted]"

// MinLength is the shortest value taken as a secret.
const MinLength = 8

// Scrubber replaces known secret values in text. The zero value and nil
// scrub nothing.
type Scrubber struct {
	r *strings.Replacer
}

// New makes a Scrubber of the secret values (empty and short ones are
// skipped).
func New(secrets ...string) *Scrubber {
	var forms []string
	for _, s := range secrets {
		if len(s) < MinLength {
			continue
		}
		forms = append(forms, s)
		if q := url.QueryEscape(s); q != s {
			forms = append(forms, q)
		}
	}
	if len(forms) == 0 {
		return &Scrubber{}
	}
	// Longest first, so a secret that contains another is replaced whole.
	slices.SortFunc(forms, func(a, b string) int { return len(b) - len(a) })
	pairs := make([]string, 0, 2*len(forms))
	for _, f := range slices.Compact(forms) {
		pairs = append(pairs, f, Redacted)
	}
	return &Scrubber{r: strings.NewReplacer(pairs...)}
}

// String is text with every secret value replaced.
func (s *Scrubber) String(text string) string {
	if s == nil || s.r == nil {
		return text
	}
	return s.r.Replace(text)
}

// Error is err with its text scrubbed; errors.Is and errors.As still see
// err's chain, and a node.VenueError keeps its kind with its message
// scrubbed. nil stays nil.
func (s *Scrubber) Error(err error) error {
	if err == nil || s == nil || s.r == nil {
		return err
	}
	text := err.Error()
	clean := s.String(text)
	var ve *node.VenueError
	if errors.As(err, &ve) && ve.Error() == text {
		return &node.VenueError{Kind: ve.Kind, Venue: ve.Venue, Message: s.String(ve.Message)}
	}
	if clean == text {
		return err
	}
	return &scrubbed{text: clean, err: err}
}

type scrubbed struct {
	text string
	err  error
}

func (e *scrubbed) Error() string { return e.text }
func (e *scrubbed) Unwrap() error { return e.err }

// Handler wraps h so that every record's message and attributes (errors,
// strings, anything formatted, in groups too) are scrubbed before h sees
// them.
func (s *Scrubber) Handler(h slog.Handler) slog.Handler {
	if s == nil || s.r == nil {
		return h
	}
	return &handler{s: s, h: h}
}

type handler struct {
	s *Scrubber
	h slog.Handler
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.h.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.s.String(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.h.Handle(ctx, out)
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = h.attr(a)
	}
	return &handler{s: h.s, h: h.h.WithAttrs(clean)}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{s: h.s, h: h.h.WithGroup(name)}
}

// attr scrubs one attribute: a group member by member, any other value
// through its text (kinds that cannot hold text are kept as they are).
func (h *handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindGroup:
		members := v.Group()
		clean := make([]any, len(members))
		for i, m := range members {
			clean[i] = h.attr(m)
		}
		return slog.Group(a.Key, clean...)
	case slog.KindInt64, slog.KindUint64, slog.KindFloat64, slog.KindBool, slog.KindDuration, slog.KindTime:
		return slog.Attr{Key: a.Key, Value: v}
	case slog.KindString:
		return slog.String(a.Key, h.s.String(v.String()))
	}
	text := v.String() // errors and other values as the handler would print them
	if clean := h.s.String(text); clean != text {
		return slog.String(a.Key, clean)
	}
	return slog.Attr{Key: a.Key, Value: v}
}
