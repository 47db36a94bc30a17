package trace

import "fmt"

// Verdict is what became of a tool call. It is exactly one of OK, Preview,
// Refused and Error: the type has no other values, so no other verdict can be
// written. The zero Verdict means "none given"; a Writer records it as Error
// and reports the caller's mistake, and a Filter reads it as "any verdict".
type Verdict struct{ v uint8 }

// The four verdicts.
var (
	// OK: the tool ran and answered.
	OK = Verdict{1}
	// Preview: a write tool returned its preview and sent nothing.
	Preview = Verdict{2}
	// Refused: a gate said no (profile, deny-tool, unknown tool, or the
	// preview token binding) and nothing was attempted.
	Refused = Verdict{3}
	// Error: the tool was admitted and failed.
	Error = Verdict{4}
)

var verdictNames = [...]string{"", "ok", "preview", "refused", "error"}

// Verdicts returns the four verdicts in their canonical order.
func Verdicts() []Verdict { return []Verdict{OK, Preview, Refused, Error} }

// ParseVerdict returns the verdict named s ("ok", "preview", "refused" or
// "error").
func ParseVerdict(s string) (Verdict, error) {
	for i := 1; i < len(verdictNames); i++ {
		if s == verdictNames[i] {
			return Verdict{uint8(i)}, nil
		}
	}
	return Verdict{}, &Problem{Kind: KindInvalid,
		Err: fmt.Errorf("unknown verdict %q; valid: ok, preview, refused, error", s)}
}

// IsZero reports whether v is the zero Verdict (none given).
func (v Verdict) IsZero() bool { return v.v == 0 }

// String returns the verdict's name, or "" for the zero Verdict.
func (v Verdict) String() string {
	if int(v.v) < len(verdictNames) {
		return verdictNames[v.v]
	}
	return ""
}

// MarshalText encodes the verdict's name. The zero Verdict does not encode.
func (v Verdict) MarshalText() ([]byte, error) {
	if v.IsZero() {
		return nil, &Problem{Kind: KindInvalid, Err: fmt.Errorf("entry has no verdict; set one of ok, preview, refused, error")}
	}
	return []byte(v.String()), nil
}

// UnmarshalText accepts exactly one of the four names.
func (v *Verdict) UnmarshalText(b []byte) error {
	p, err := ParseVerdict(string(b))
	if err != nil {
		return err
	}
	*v = p
	return nil
}
