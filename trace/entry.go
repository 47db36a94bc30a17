package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
	"unicode/utf8"
)

// Entry is one traced tool call: one line of a month file. The agent fills
// it; the Writer stamps TS when it is zero.
type Entry struct {
	TS      time.Time // when the call started; written as RFC3339 with milliseconds, UTC
	Session string    // the id of the server session that took the call
	Caller  string    // the caller (settings/callers.toml) whose session it was; empty over stdio and --no-auth
	Seq     int64     // the call's number within its session
	Tool    string    // the tool the agent called, as it named it
	Write   bool      // whether the tool is a write tool
	Profile string    // the server's profile (full, read-only, offline)
	Denied  []string  // the operator's --deny-tool list; omitted when empty

	Args        json.RawMessage // the call's arguments as the agent sent them
	ArgsDropped bool            // set by the Writer when the entry was too large to keep Args

	Verdict       Verdict
	Token         string  // the preview token's id, for a gated write's preview and confirm
	ClientOrderID string  // writes
	Ticket        string  // confirmed writes: the node's ticket
	Outcome       string  // confirmed writes: accepted, rejected or pending; previews: "" (checks passed), PreviewGuardrailFailed or PreviewWouldReject
	Error         string  // refused and error: what the agent was told
	MS            float64 // how long the call took, in milliseconds (see Millis)

	Approval   string // confirmed writes under --approval: accepted, declined, timeout or unsupported
	ApprovedBy string // operator approval: who decided (user, terminal, process)
}

// Millis converts a duration to Entry.MS: milliseconds, to the microsecond.
func Millis(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Microsecond)) / 1000
}

// millis rounds ms to the microsecond; a value JSON cannot hold is 0.
func millis(ms float64) float64 {
	if math.IsNaN(ms) || math.IsInf(ms, 0) {
		return 0
	}
	if r := math.Round(ms*1000) / 1000; !math.IsInf(r, 0) {
		return r
	}
	return ms
}

// tsLayout is RFC3339 with exactly three fractional digits, always in UTC.
const tsLayout = "2006-01-02T15:04:05.000Z"

// wire is Entry as it is stored, fields in the order of the spec.
type wire struct {
	TS            string          `json:"ts"`
	Session       string          `json:"session"`
	Caller        string          `json:"caller,omitempty"`
	Seq           int64           `json:"seq"`
	Tool          string          `json:"tool"`
	Write         bool            `json:"write"`
	Profile       string          `json:"profile"`
	Denied        []string        `json:"denied,omitempty"`
	Args          json.RawMessage `json:"args,omitempty"`
	ArgsDropped   bool            `json:"args_dropped,omitempty"`
	Verdict       Verdict         `json:"verdict"`
	Token         string          `json:"token,omitempty"`
	ClientOrderID string          `json:"client_order_id,omitempty"`
	Ticket        string          `json:"ticket,omitempty"`
	Outcome       string          `json:"outcome,omitempty"`
	Error         string          `json:"error,omitempty"`
	MS            float64         `json:"ms"`
	Approval      string          `json:"approval,omitempty"`
	ApprovedBy    string          `json:"approved_by,omitempty"`
}

// MarshalJSON encodes the entry as one trace line, without the newline.
// It fails for an entry with no verdict or with arguments that are not JSON.
func (e Entry) MarshalJSON() ([]byte, error) {
	b, err := appendLine(nil, &e)
	if err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b, []byte("\n")), nil
}

// UnmarshalJSON decodes one trace line. It requires ts and a valid verdict,
// and ignores fields it does not know (a newer writer may add some).
func (e *Entry) UnmarshalJSON(b []byte) error {
	var w wire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if w.TS == "" {
		return errors.New(`missing "ts"`)
	}
	ts, err := time.Parse(time.RFC3339Nano, w.TS)
	if err != nil {
		return fmt.Errorf(`bad "ts": %w`, err)
	}
	if w.Verdict.IsZero() {
		return errors.New(`missing "verdict"`)
	}
	*e = Entry{
		TS: ts.UTC(), Session: w.Session, Caller: w.Caller, Seq: w.Seq, Tool: w.Tool, Write: w.Write,
		Profile: w.Profile, Denied: w.Denied, Args: w.Args, ArgsDropped: w.ArgsDropped,
		Verdict: w.Verdict, Token: w.Token, ClientOrderID: w.ClientOrderID,
		Ticket: w.Ticket, Outcome: w.Outcome, Error: w.Error, MS: w.MS,
		Approval: w.Approval, ApprovedBy: w.ApprovedBy,
	}
	return nil
}

// appendLine appends e's line, newline included, to dst.
func appendLine(dst []byte, e *Entry) ([]byte, error) {
	w := wire{
		TS: e.TS.UTC().Format(tsLayout), Session: e.Session, Caller: e.Caller, Seq: e.Seq, Tool: e.Tool,
		Write: e.Write, Profile: e.Profile, Denied: e.Denied, Args: e.Args,
		ArgsDropped: e.ArgsDropped, Verdict: e.Verdict, Token: e.Token,
		ClientOrderID: e.ClientOrderID, Ticket: e.Ticket, Outcome: e.Outcome,
		Error: e.Error, MS: millis(e.MS),
		Approval: e.Approval, ApprovedBy: e.ApprovedBy,
	}
	buf := bytes.NewBuffer(dst)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&w); err != nil {
		return dst, &Problem{Kind: KindInvalid, Err: fmt.Errorf("encode entry %d of tool %q: %w", e.Seq, e.Tool, err)}
	}
	return buf.Bytes(), nil
}

// MaxLine is the largest line, newline included, a Writer writes. A larger
// entry loses its Args (ArgsDropped is set) and, if still too large, has its
// longest text fields cut short, so that the row itself always survives.
const MaxLine = 64 << 10

// encodeLine returns e's line for the Writer, degraded to fit MaxLine. e is
// the Writer's own copy and is modified.
func encodeLine(dst []byte, e *Entry) ([]byte, error) {
	line, err := appendLine(dst, e)
	if err != nil || len(line) <= MaxLine {
		return line, err
	}
	e.Args, e.ArgsDropped = nil, true
	for limit := 4096; ; limit /= 2 {
		line, err = appendLine(dst[:0], e)
		if err != nil || len(line) <= MaxLine || limit < 16 {
			return line, err
		}
		shorten(e, limit)
	}
}

// shorten cuts every text field of e to at most limit bytes (keeping valid
// UTF-8 and marking the cut with "…") and the deny list to 64 names.
func shorten(e *Entry, limit int) {
	for _, s := range []*string{&e.Session, &e.Caller, &e.Tool, &e.Profile, &e.Token, &e.ClientOrderID, &e.Ticket, &e.Outcome, &e.Error, &e.ApprovedBy} {
		*s = cut(*s, limit)
	}
	if len(e.Denied) > 64 {
		e.Denied = e.Denied[:64]
	}
	d := make([]string, len(e.Denied))
	for i, s := range e.Denied {
		d[i] = cut(s, limit)
	}
	e.Denied = d
}

func cut(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	i := limit
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
