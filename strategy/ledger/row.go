package ledger

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Who ran a trial: the surface, and for the agent its MCP session and
// caller (the caller's name under HTTP callers; empty on stdio).
type Who struct {
	Surface string `json:"surface"`
	Session string `json:"session,omitempty"`
	Caller  string `json:"caller,omitempty"`
}

// String is "cli", "mcp session S" or "mcp session S caller C".
func (w Who) String() string {
	s := w.Surface
	if s == "" {
		s = "unknown"
	}
	if w.Session != "" {
		s += " session " + w.Session
	}
	if w.Caller != "" {
		s += " caller " + w.Caller
	}
	return s
}

type whoKey struct{}

// WithWho returns ctx carrying who: research run under it is recorded as
// theirs.
func WithWho(ctx context.Context, who Who) context.Context {
	return context.WithValue(ctx, whoKey{}, who)
}

// WhoFrom is the Who ctx carries, or ok false.
func WhoFrom(ctx context.Context) (Who, bool) {
	w, ok := ctx.Value(whoKey{}).(Who)
	return w, ok
}

// Row is one trial. Append fills Seq, Time, RunID (when empty), PrevHash
// and Hash; the caller fills the rest.
type Row struct {
	Seq      int64  `json:"seq"`
	Time     string `json:"time"` // RFC3339 with nanoseconds, UTC
	Kind     string `json:"kind"`
	RunID    string `json:"run_id"`
	Who      Who    `json:"who"`
	Strategy string `json:"strategy"`
	Digest   string `json:"digest"` // SourceDigest of the strategy's text
	Series   string `json:"series"`
	From     string `json:"from"` // the range traded, RFC3339; empty when unknown
	To       string `json:"to"`
	// Params, Costs and Metrics are JSON objects (stored compact, as
	// given).
	Params  json.RawMessage `json:"params"`
	Costs   json.RawMessage `json:"costs"`
	Metrics json.RawMessage `json:"metrics"`
	// SharpePerPeriod is the run's per-period Sharpe ratio (mean/std of
	// its per-bar returns); NaN when undefined (no variance, a failed
	// run). It is what the deflated Sharpe ratio over the ledger reads.
	SharpePerPeriod float64 `json:"-"`
	// Audit is what an outsider needs to recompute the run's statistics
	// (a JSON object, or empty): for a sweep combination its return
	// statistics and PBO blocks. It is covered by the hash and not shown
	// in listings (`wicket research export` writes it).
	Audit    json.RawMessage `json:"-"`
	PrevHash string          `json:"prev_hash"`
	Hash     string          `json:"hash"`
}

// MarshalJSON writes SharpePerPeriod as sharpe_per_period, null when NaN.
func (r Row) MarshalJSON() ([]byte, error) {
	type plain Row
	var sr *float64
	if !math.IsNaN(r.SharpePerPeriod) && !math.IsInf(r.SharpePerPeriod, 0) {
		v := r.SharpePerPeriod
		sr = &v
	}
	return json.Marshal(struct {
		plain
		SR *float64 `json:"sharpe_per_period"`
	}{plain(r), sr})
}

// SourceDigest is the digest rows carry for a strategy's source text: the
// hex SHA-256 of its bytes.
func SourceDigest(source string) string {
	s := sha256.Sum256([]byte(source))
	return hex.EncodeToString(s[:])
}

// canonical is the text a row's hash covers: a JSON array of every field
// but the hash itself, in a fixed order, the previous row's hash included,
// byte for byte as json.Marshal writes the []string of them
// (TestCanonicalIsMarshal), without its reflection: a sweep hashes a
// hundred rows of a few kilobytes each.
func (r *Row) canonical(format string) []byte { return r.appendCanonical(nil, format) }

// appendCanonical appends r's canonical text to b.
func (r *Row) appendCanonical(b []byte, format string) []byte {
	var num [32]byte
	sr := []byte(nil)
	if !math.IsNaN(r.SharpePerPeriod) {
		sr = strconv.AppendFloat(num[:0], r.SharpePerPeriod, 'g', -1, 64)
	}
	b = append(b, '[')
	b = appendJSONString(b, format)
	b = append(b, ',')
	var seq [20]byte
	b = appendJSONString(b, strconv.AppendInt(seq[:0], r.Seq, 10))
	for _, f := range [...]string{r.Time, r.Kind, r.RunID, r.Who.Surface, r.Who.Session, r.Who.Caller, r.Strategy, r.Digest, r.Series, r.From, r.To} {
		b = append(b, ',')
		b = appendJSONString(b, f)
	}
	for _, f := range [...][]byte{r.Params, r.Costs, r.Metrics, sr} {
		b = append(b, ',')
		b = appendJSONString(b, f)
	}
	if format == formatKeyed { // the plain chain's text has no audit
		b = append(b, ',')
		b = appendJSONString(b, []byte(r.Audit))
	}
	b = append(b, ',')
	b = appendJSONString(b, r.PrevHash)
	return append(b, ']')
}

// jsonByte says how json.Marshal writes a byte of a string: as it is
// (0), after a backslash (1: " and \\), or otherwise (2: a control
// character, <, > and &, which it escapes, and the bytes of multi-byte
// characters, which it checks).
var jsonByte = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case c == '"' || c == '\\':
			t[c] = 1
		case c < 0x20 || c >= 0x80 || c == '<' || c == '>' || c == '&':
			t[c] = 2
		}
	}
	return t
}()

// PlainJSON says whether json.Marshal writes s between its quotes as it
// is, every byte unescaped and unchecked (jsonByte).
func PlainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if jsonByte[s[i]] != 0 {
			return false
		}
	}
	return true
}

// appendJSONString appends s as json.Marshal writes a string. A string
// with a byte it writes otherwise than as it is or after a backslash
// (jsonByte) is written by json.Marshal itself.
func appendJSONString[T string | []byte](b []byte, s T) []byte {
	start := len(b)
	b = append(b, '"')
	from := 0
	for i := 0; i < len(s); i++ {
		switch jsonByte[s[i]] {
		case 1:
			b = append(b, s[from:i]...)
			b = append(b, '\\', s[i])
			from = i + 1
		case 2:
			q, _ := json.Marshal(string(s)) // a string always encodes
			return append(b[:start], q...)
		}
	}
	b = append(b, s[from:]...)
	return append(b, '"')
}

// plainHash is a schema-1 row's hash: hex SHA-256 of its canonical text.
func (r *Row) plainHash() string {
	s := sha256.Sum256(r.canonical(formatPlain))
	return hex.EncodeToString(s[:])
}

// keyedHash is a row's hash: hex HMAC-SHA256 of its canonical text under
// key.
func (r *Row) keyedHash(key []byte) string { return r.keyedHashWith(hmac.New(sha256.New, key)) }

// keyedHashWith is keyedHash with mac, an HMAC-SHA256 under the key, which
// it resets: a batch keys its rows with one.
func (r *Row) keyedHashWith(mac hash.Hash) string {
	buf := canonicalBufs.Get().(*[]byte)
	*buf = r.appendCanonical((*buf)[:0], formatKeyed)
	mac.Reset()
	mac.Write(*buf)
	canonicalBufs.Put(buf)
	var sum [sha256.Size]byte
	return hex.EncodeToString(mac.Sum(sum[:0]))
}

// canonicalBufs hold the canonical texts being hashed.
var canonicalBufs = sync.Pool{New: func() any { return new([]byte) }}

// keyCheck is what meta holds to tell the ledger's key from another: the
// HMAC of a fixed text, which says nothing of the key itself.
func keyCheck(key []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("wicket-research-ledger-key-check"))
	return hex.EncodeToString(m.Sum(nil))
}

// normalise checks a row and compacts its JSON fields.
func (r *Row) normalise() error {
	if !validKind(r.Kind) {
		return fmt.Errorf("kind %q is not one of %s", r.Kind, strings.Join(Kinds, ", "))
	}
	if r.Strategy == "" || r.Series == "" {
		return errors.New("a row needs its strategy and series")
	}
	if r.Who.Surface == "" {
		r.Who.Surface = "unknown"
	}
	if math.IsInf(r.SharpePerPeriod, 0) {
		r.SharpePerPeriod = math.NaN()
	}
	for _, f := range []*json.RawMessage{&r.Params, &r.Costs, &r.Metrics} {
		if len(*f) == 0 {
			*f = json.RawMessage(`{}`)
			continue
		}
		c, err := compactJSON(*f)
		if err != nil {
			return fmt.Errorf("params, costs and metrics must be JSON: %w", err)
		}
		*f = c
	}
	if len(r.Audit) > 0 {
		c, err := compactJSON(r.Audit)
		if err != nil {
			return fmt.Errorf("audit must be JSON: %w", err)
		}
		r.Audit = c
	}
	return nil
}

func validKind(k string) bool { return slices.Contains(Kinds, k) }
