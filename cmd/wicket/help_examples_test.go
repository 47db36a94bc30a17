package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"wicket/cmd/wicket/internal/trade"
	"wicket/internal/project"
	"wicket/node/command"
)

// TestHelpExamples: each command in helpExamples exists, its --help shows
// every example, and every example is a line of that command using only
// its own flags (and the app's --project).
func TestHelpExamples(t *testing.T) {
	if len(helpExamples) < 10 {
		t.Errorf("%d commands have --help examples, want the ten most used at least", len(helpExamples))
	}
	app := newApp(nil, &bytes.Buffer{}, &bytes.Buffer{})
	for path, examples := range helpExamples {
		c := findCommand(app.Commands, strings.Fields(path))
		if c == nil {
			t.Errorf("helpExamples names %q, which is no command", path)
			continue
		}
		code, stdout, stderr := wicket(t, append(strings.Fields(path), "--help")...)
		if code != 0 || !strings.Contains(stdout, "Examples:") {
			t.Errorf("wicket %s --help: code %d, no examples\n%s%s", path, code, stdout, stderr)
		}
		for _, e := range examples {
			if !strings.Contains(stdout, e.line) || !strings.Contains(stdout, e.does) {
				t.Errorf("wicket %s --help does not show %q", path, e.line)
			}
			if !strings.HasPrefix(e.line, "wicket "+path) {
				t.Errorf("example %q is not a line of wicket %s", e.line, path)
			}
			if verb, ok := strings.CutPrefix(path, "trade "); ok { // a trade verb's line parses as the verb reads it
				words := shellWords(strings.TrimPrefix(e.line, "wicket "+path))
				if ln, err := trade.ParseOneShot(command.Verb(verb), words); err != nil {
					t.Errorf("example %q does not parse: %v", e.line, err)
				} else if _, err := ln.Build(project.Defaults()); err != nil {
					t.Errorf("example %q is no command: %v", e.line, err)
				}
			}
			line, _, _ := strings.Cut(e.line, " |") // what a pipe feeds is not ours
			for _, word := range strings.Fields(line) {
				if !strings.HasPrefix(word, "--") {
					continue
				}
				name, _, _ := strings.Cut(strings.TrimPrefix(word, "--"), "=")
				// A trade verb reads its own line: its flags are in its usage.
				ownLine := c.SkipFlagParsing && (strings.Contains(c.ArgsUsage, "[--"+name+" ") || strings.Contains(c.ArgsUsage, "[--"+name+"]"))
				if !hasFlag(c, name) && !ownLine && name != "project" {
					t.Errorf("example %q: wicket %s has no flag --%s", e.line, path, name)
				}
			}
		}
	}
}

// shellWords splits a line into words as a shell would, for lines with
// double-quoted words and no escapes.
func shellWords(line string) []string {
	var words []string
	for i, part := range strings.Split(line, `"`) {
		if i%2 == 1 {
			words = append(words, part)
			continue
		}
		words = append(words, strings.Fields(part)...)
	}
	return words
}

func findCommand(cmds []*cli.Command, path []string) *cli.Command {
	for _, c := range cmds {
		if c.Name != path[0] {
			continue
		}
		if len(path) == 1 {
			return c
		}
		return findCommand(c.Subcommands, path[1:])
	}
	return nil
}
