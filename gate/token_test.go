package gate_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"wicket/gate"
)

func TestParseToken(t *testing.T) {
	const good = "3f2b8c1e-9d4a-4e7b-8a6c-0123456789ab"
	tests := []struct {
		in string
		ok bool
	}{
		{good, true},
		{"00000000-0000-0000-0000-000000000000", true},
		{"", false},
		{strings.ToUpper(good), false},
		{"3F2b8c1e-9d4a-4e7b-8a6c-0123456789ab", false},
		{"{" + good + "}", false},
		{"urn:uuid:" + good, false},
		{strings.ReplaceAll(good, "-", ""), false},
		{" " + good, false},
		{good + " ", false},
		{good + "\n", false},
		{good[:35], false},
		{good + "0", false},
		{"3f2b8c1e-9d4a-4e7b-8a6c_0123456789ab", false},
		{"3f2b8c1e9-d4a-4e7b-8a6c-0123456789ab", false},
		{"3f2b8c1e-9d4a-4e7b-8a6c-0123456789ag", false},
		{"3f2b8c1e-9d4a-4e7b-8a6c-0123456789a\u00e9"[:36], false},
		{"not-a-token", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			tok, err := gate.ParseToken(tt.in)
			if (err == nil) != tt.ok {
				t.Fatalf("ParseToken(%q) error = %v, want ok=%v", tt.in, err, tt.ok)
			}
			if err != nil {
				if tok != "" {
					t.Errorf("refused token returned %q", tok)
				}
				if !errors.Is(err, gate.ErrUnknownToken) {
					t.Errorf("error %v is not ErrUnknownToken", err)
				}
				return
			}
			if tok.String() != tt.in {
				t.Errorf("ParseToken(%q) = %q", tt.in, tok)
			}
		})
	}
}

func FuzzParseToken(f *testing.F) {
	for _, s := range []string{
		"3f2b8c1e-9d4a-4e7b-8a6c-0123456789ab",
		"3F2B8C1E-9D4A-4E7B-8A6C-0123456789AB",
		"{3f2b8c1e-9d4a-4e7b-8a6c-0123456789ab}",
		"urn:uuid:3f2b8c1e-9d4a-4e7b-8a6c-0123456789ab",
		"3f2b8c1e9d4a4e7b8a6c0123456789ab",
		"", "-", "------------------------------------",
		"3f2b8c1e-9d4a-4e7b-8a6c-0123456789a\xff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := gate.ParseToken(s)
		if err != nil {
			if tok != "" {
				t.Fatalf("ParseToken(%q) refused but returned %q", s, tok)
			}
			if !errors.Is(err, gate.ErrUnknownToken) {
				t.Fatalf("ParseToken(%q): %v is not ErrUnknownToken", s, err)
			}
			if len(err.Error()) > 1000 {
				t.Fatalf("ParseToken(%q): error text of %d bytes echoes the input", s, len(err.Error()))
			}
			return
		}
		// Accepted: exactly the canonical text of some uuid.
		u, err := uuid.Parse(s)
		if err != nil {
			t.Fatalf("ParseToken accepted %q, which uuid.Parse refuses: %v", s, err)
		}
		if u.String() != s || tok.String() != s {
			t.Fatalf("ParseToken accepted %q, whose canonical form is %q", s, u.String())
		}
	})
}

// FuzzParseTokenCanonical feeds 16 arbitrary bytes as a uuid: its canonical
// text must always parse.
func FuzzParseTokenCanonical(f *testing.F) {
	f.Add(make([]byte, 16))
	f.Add([]byte("0123456789abcdef"))
	f.Fuzz(func(t *testing.T, b []byte) {
		u, err := uuid.FromBytes(b)
		if err != nil {
			return
		}
		if _, err := gate.ParseToken(u.String()); err != nil {
			t.Fatalf("ParseToken(%q): %v", u.String(), err)
		}
	})
}
