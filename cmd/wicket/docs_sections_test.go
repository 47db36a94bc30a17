package main

import (
	"io"
	"strings"
)

// docSections splits a generated reference into tool name → the stable
// part of its section (up to the example).
func docSections(r io.Reader) (map[string]string, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	parts := strings.Split(string(data), "\n## ")
	for _, p := range parts[1:] {
		name, _, _ := strings.Cut(p, "\n")
		stable, _, _ := strings.Cut(p, exampleMarker)
		out[strings.TrimSpace(name)] = "## " + stable
	}
	return out, nil
}
