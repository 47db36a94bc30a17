package trace

import (
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Counts tallies entries by verdict; PreviewFailed counts the previews
// (among Preview) whose checks failed (PreviewFailed).
type Counts struct {
	OK            int `json:"ok"`
	Preview       int `json:"preview"`
	PreviewFailed int `json:"preview_failed"`
	Refused       int `json:"refused"`
	Error         int `json:"error"`
	Total         int `json:"total"`
}

// AddEntry counts e: by its verdict, and a preview whose checks failed.
func (c *Counts) AddEntry(e Entry) {
	c.Add(e.Verdict)
	if PreviewFailed(e) {
		c.PreviewFailed++
	}
}

// Add counts one entry of verdict v.
func (c *Counts) Add(v Verdict) {
	switch v {
	case OK:
		c.OK++
	case Preview:
		c.Preview++
	case Refused:
		c.Refused++
	case Error:
		c.Error++
	}
	c.Total++
}

// Of returns the count for verdict v.
func (c Counts) Of(v Verdict) int {
	switch v {
	case OK:
		return c.OK
	case Preview:
		return c.Preview
	case Refused:
		return c.Refused
	case Error:
		return c.Error
	}
	return 0
}

// ToolStats counts one tool's calls by verdict.
type ToolStats struct {
	Tool string `json:"tool"`
	Counts
}

// Reason counts the refusals that share a reason.
type Reason struct {
	Reason string   `json:"reason"`
	Count  int      `json:"count"`
	Tools  []string `json:"tools"` // the tools refused for it, sorted
}

// SessionStats describes one server session.
type SessionStats struct {
	Session string    `json:"session"`
	Caller  string    `json:"caller,omitempty"`
	Profile string    `json:"profile"`
	First   time.Time `json:"first"`
	Last    time.Time `json:"last"`
	Counts
}

// Stats summarises a set of entries: the view of `wicket trace stats`.
type Stats struct {
	Counts                  // all entries by verdict
	First    time.Time      `json:"first"`
	Last     time.Time      `json:"last"`
	Tools    []ToolStats    `json:"tools"`    // by tool name
	Refusals []Reason       `json:"refusals"` // most frequent first
	Sessions []SessionStats `json:"sessions"` // by first entry
}

// Summarize counts entries by verdict and tool, groups refusals by
// RefusalReason, and describes each session.
func Summarize(entries []Entry) Stats {
	var s Stats
	tools := map[string]*ToolStats{}
	reasons := map[string]*Reason{}
	reasonTools := map[string]map[string]bool{}
	sessions := map[string]*SessionStats{}
	for _, e := range entries {
		s.Counts.AddEntry(e)
		if s.First.IsZero() || e.TS.Before(s.First) {
			s.First = e.TS
		}
		if e.TS.After(s.Last) {
			s.Last = e.TS
		}

		t := tools[e.Tool]
		if t == nil {
			t = &ToolStats{Tool: e.Tool}
			tools[e.Tool] = t
		}
		t.AddEntry(e)

		if e.Verdict == Refused {
			key := RefusalReason(e.Error)
			r := reasons[key]
			if r == nil {
				r = &Reason{Reason: key}
				reasons[key] = r
				reasonTools[key] = map[string]bool{}
			}
			r.Count++
			reasonTools[key][e.Tool] = true
		}

		ss := sessions[e.Session]
		if ss == nil {
			ss = &SessionStats{Session: e.Session, Caller: e.Caller, Profile: e.Profile, First: e.TS, Last: e.TS}
			sessions[e.Session] = ss
		}
		if e.TS.Before(ss.First) {
			ss.First = e.TS
		}
		if e.TS.After(ss.Last) {
			ss.Last = e.TS
		}
		ss.AddEntry(e)
	}
	for _, t := range tools {
		s.Tools = append(s.Tools, *t)
	}
	sort.Slice(s.Tools, func(i, j int) bool { return s.Tools[i].Tool < s.Tools[j].Tool })
	for key, r := range reasons {
		for tool := range reasonTools[key] {
			r.Tools = append(r.Tools, tool)
		}
		sort.Strings(r.Tools)
		s.Refusals = append(s.Refusals, *r)
	}
	sort.Slice(s.Refusals, func(i, j int) bool {
		a, b := s.Refusals[i], s.Refusals[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Reason < b.Reason
	})
	for _, ss := range sessions {
		s.Sessions = append(s.Sessions, *ss)
	}
	sort.Slice(s.Sessions, func(i, j int) bool {
		a, b := s.Sessions[i], s.Sessions[j]
		if !a.First.Equal(b.First) {
			return a.First.Before(b.First)
		}
		return a.Session < b.Session
	})
	return s
}

// RefusalReason reduces a refusal's error text to the reason it shares with
// others like it: the first clause (up to the first ": ", "; ", ". " or line
// break), at most 100 characters, with every quoted value masked as "…" (a
// token or a name the agent passed is that call's detail, not its reason).
// "REFUSED [profile] read-only: tool flatten is not served" gives
// "REFUSED [profile] read-only", and `used preview token "5f0c2a8e-…": it
// already confirmed a call` gives `used preview token "…"`.
func RefusalReason(text string) string {
	text = strings.TrimSpace(maskQuoted(text))
	if text == "" {
		return "(no reason given)"
	}
	end := len(text)
	for _, sep := range []string{": ", "; ", ". ", "\n"} {
		if i := strings.Index(text, sep); i > 0 && i < end {
			end = i
		}
	}
	text = strings.TrimSpace(strings.TrimSuffix(text[:end], "."))
	if utf8.RuneCountInString(text) > 100 {
		r := []rune(text)
		text = string(r[:100]) + "…"
	}
	return text
}

// maskQuoted replaces the inside of every double-quoted value in s (Go or
// JSON quoting: a backslash escapes the next byte) with "…". An unclosed
// quote masks the rest of s.
func maskQuoted(s string) string {
	if !strings.Contains(s, `"`) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i+1])
		b.WriteString("…")
		j := i + 1
		for j < len(s) && s[j] != '"' {
			if s[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(s) {
			return b.String()
		}
		b.WriteByte('"')
		s = s[j+1:]
	}
}

// Chain is one preview token's story: the preview that issued it and the
// calls that tried to confirm with it, in order.
type Chain struct {
	Token         string  `json:"token"`
	Tool          string  `json:"tool"`
	ClientOrderID string  `json:"client_order_id,omitempty"`
	Entries       []Entry `json:"entries"`
	// State is "confirmed" when a call with the token ran (its Outcome
	// then says what the node did), "refused" or "error" when the last
	// confirm was, and "previewed" when none was attempted.
	State   string `json:"state"`
	Outcome string `json:"outcome,omitempty"`
	Ticket  string `json:"ticket,omitempty"`
}

// Chains groups the entries that carry a token into one Chain per token, in
// order of each chain's first entry. Entries keep their order.
func Chains(entries []Entry) []Chain {
	var order []string
	byToken := map[string]*Chain{}
	for _, e := range entries {
		if e.Token == "" {
			continue
		}
		c := byToken[e.Token]
		if c == nil {
			c = &Chain{Token: e.Token, Tool: e.Tool, State: "previewed"}
			byToken[e.Token] = c
			order = append(order, e.Token)
		}
		c.Entries = append(c.Entries, e)
		if c.ClientOrderID == "" {
			c.ClientOrderID = e.ClientOrderID
		}
		if e.Verdict == Preview || c.State == "confirmed" {
			continue
		}
		c.State = e.Verdict.String()
		if e.Verdict == OK {
			c.State = "confirmed"
			c.Outcome, c.Ticket = e.Outcome, e.Ticket
			if e.ClientOrderID != "" {
				c.ClientOrderID = e.ClientOrderID
			}
		}
	}
	out := make([]Chain, 0, len(order))
	for _, t := range order {
		out = append(out, *byToken[t])
	}
	return out
}

// Step names an entry's place in its token's chain: "preview" for the call
// that issued the token, "confirm" for a call that presented it.
func Step(e Entry) string {
	if e.Verdict == Preview {
		return "preview"
	}
	return "confirm"
}
