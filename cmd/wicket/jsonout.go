package main

import (
	"encoding/json"
	"io"
)

// The one JSON writer of the CLI's --json outputs and printed
// configuration blocks. <, > and & are written as they are, not escaped as
// \u003c...: the output is read by people and scripts (a reason "exit if
// < 41000", a path with &), never embedded in an HTML page.

// writeJSON writes v as one JSON document indented by two spaces, with a
// newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// writeJSONLines writes each value as one line of JSON (JSON Lines).
func writeJSONLines[T any](w io.Writer, vs []T) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, v := range vs {
		if err := enc.Encode(v); err != nil {
			return err
		}
	}
	return nil
}
