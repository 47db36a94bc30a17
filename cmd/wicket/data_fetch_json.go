package main

import (
	"fmt"
	"io"
	"time"

	"wicket/strategy/history"
	"wicket/strategy/provider"
)

// What `wicket data fetch` did, one entry per series (or funding pair):
// the --json array, and the line each entry prints as text.

// The kinds of a fetch.
const (
	fetchedBars    = "bars"
	fetchedFunding = "funding"
)

// fetchedJSON is one series' fetch in `wicket data fetch --json`. Added
// counts bars, or for kind funding, funding settlements; on an error, what
// was committed before it (kept: the next fetch resumes after it).
type fetchedJSON struct {
	Series         string `json:"series"`
	Kind           string `json:"kind"` // bars or funding
	Provider       string `json:"provider,omitempty"`
	ProviderSymbol string `json:"provider_symbol,omitempty"`
	Added          int    `json:"added"`
	First          string `json:"first,omitempty"` // RFC 3339 open time of the first added bar
	Last           string `json:"last,omitempty"`
	Pages          int    `json:"pages"`
	Replaced       bool   `json:"replaced,omitempty"` // --full
	Gaps           int    `json:"gaps"`
	// LargestGap is the largest hole (a Go duration) and where it starts.
	LargestGap   string `json:"largest_gap,omitempty"`
	LargestGapAt string `json:"largest_gap_at,omitempty"`
	Error        string `json:"error,omitempty"`

	gaps history.GapStats // for the text line
}

// barsFetched is a bar fetch's entry.
func barsFetched(r provider.FetchResult) fetchedJSON {
	out := fetchedJSON{Series: r.Series, Kind: fetchedBars, Provider: r.Provider, ProviderSymbol: r.ProviderSymbol,
		Added: r.Added, Pages: r.Pages, Replaced: r.Replaced, Gaps: r.Gaps.Count, gaps: r.Gaps}
	if r.Added > 0 {
		out.First, out.Last = rfc3339(r.First), rfc3339(r.Last)
	}
	if r.Gaps.Count > 0 {
		out.LargestGap, out.LargestGapAt = r.Gaps.Largest.String(), rfc3339(r.Gaps.At)
	}
	return out
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// withError is the entry with the fetch's error, if any.
func (f fetchedJSON) withError(err error) fetchedJSON {
	if err != nil {
		f.Error = err.Error()
	}
	return f
}

// line is the entry's text line; after an error, what was committed
// before it, or nothing.
func (f fetchedJSON) line(err error) string {
	what, src := "bar", f.Provider+" "+f.ProviderSymbol
	if f.Kind == fetchedFunding {
		what = "funding settlement"
	}
	switch {
	case err != nil && f.Added == 0:
		return ""
	case err != nil:
		return fmt.Sprintf("%s: %s committed before the error (through %s)", f.Series, history.Plural(f.Added, what), f.Last)
	case f.Added == 0 && f.Kind == fetchedFunding:
		return fmt.Sprintf("%s: funding up to date from %s; nothing new to add", f.Series, src)
	case f.Added == 0:
		return fmt.Sprintf("%s: up to date from %s; nothing new to add", f.Series, src)
	}
	verb := "added"
	if f.Replaced {
		verb = "replaced with"
	}
	s := fmt.Sprintf("%s: %s %s from %s (%s to %s) in %s", f.Series, verb, history.Plural(f.Added, what), src, f.First, f.Last,
		history.Plural(f.Pages, "page"))
	if f.Kind == fetchedBars {
		s += "; " + f.gaps.String()
	}
	return s
}

// writeFetched prints the entries as one JSON array with --json.
func writeFetched(o dataFetchOptions, w io.Writer, results []fetchedJSON) error {
	if !o.json {
		return nil
	}
	return writeJSON(w, results)
}
