// Package trace records and reads the agent transcript: one JSON line per MCP
// tool call, appended to DIR/YYYY-MM.jsonl by the UTC month of the call, so an
// operator can review after an incident what the agent attempted, what was
// refused and what was sent.
//
// A Writer appends entries with O_APPEND and exactly one write(2) per line, so
// several servers can share one directory without interleaving; it rolls to a
// new file when the month changes, prunes the directory to the newest month
// files when it opens, and degrades an oversized entry by dropping its
// arguments rather than the row. A Decoder reads one stream of lines, a Reader
// walks the month files in a time range, filters them and follows them as they
// grow, and Summarize and Chains turn entries into the views of `wicket trace`.
//
// Tracing is a record, not a gate: a Writer must never fail, panic or stall
// the tool call it records. A write failure is reported on the injected
// stderr, once per distinct error, and writing resumes when the cause goes
// away. The package never imports another wicket package, never records
// anything it was not handed (it never looks for keys, and never writes one
// it was not given), and never touches a file in the directory whose name is
// not a month file.
package trace
