package trade

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"wicket/internal/project"
	"wicket/node/command"
)

// tradeREPLCommands are the REPL's own commands beside the verbs.
var tradeREPLCommands = []struct{ usage, what string }{
	{"snapshot [VENUE]", "trading state, venues with cash and equity, positions, open orders, marks"},
	{"ticket TICKET", "a sent command's outcome (after a pending one)"},
	{"history", "the lines entered this session; !N runs line N again, !! the last one (each is previewed again)"},
	{"help [VERB]", "this list, or one verb's fields and rules"},
	{"quit", "leave (also exit, or end of input)"},
}

// tradeGrammar explains how a line is read; help and --help show it.
const tradeGrammar = `A line is: VERB [WORD]... [field=value | --field value | --field=value]... [--reason TEXT]
  The WORDs fill the verb's common fields in order (see help VERB); name any field, in any
  order, each once. Quote values with blanks: --reason "breakout retest". A quantity or price
  is a plain decimal ("0.5"), never rounded. venue may be left out when wicket.toml has one
  venue (not for market_exit, where no venue means every venue). A positional ORDER starting
  with wk- is read as a client_order_id, anything else as an order_id. reason goes to the
  node's audit trail (at most 512 characters).
Every write shows its preview (the resolved command, the guardrail's checks with their
numbers, the node's dry run) and asks send? [y/N]; only y or yes sends. Then the outcome is
awaited for 2 s: accepted, rejected with the node's reason, or pending.`

// printTradeHelp writes the REPL's overview: verbs from command.Specs(),
// the REPL's commands and the grammar.
func printTradeHelp(w io.Writer) {
	fmt.Fprintf(w, "verbs (the agent's write tools, same fields):\n")
	for _, sp := range command.Specs() {
		name := string(sp.Verb)
		if s := tradeVerbs[sp.Verb].short; s != "" {
			name += " (" + s + ")"
		}
		fmt.Fprintf(w, "  %s %s\n      %s\n", name, tradePositionalUsage(sp.Verb), sp.Summary)
	}
	fmt.Fprintf(w, "commands:\n")
	for _, c := range tradeREPLCommands {
		fmt.Fprintf(w, "  %s\n      %s\n", c.usage, c.what)
	}
	fmt.Fprintf(w, "%s\n", tradeGrammar)
}

// printTradeVerbHelp writes one verb's usage, fields (kind, required, choices,
// description) and rules, all from its spec. cfg names the default venue.
func printTradeVerbHelp(w io.Writer, verb command.Verb, cfg project.Config, tradeOneShot bool) {
	sp, _ := command.Lookup(verb)
	tv := tradeVerbs[verb]
	fmt.Fprintf(w, "%s", verb)
	if tv.short != "" {
		fmt.Fprintf(w, " (also: %s)", tv.short)
	}
	fmt.Fprintf(w, ": %s\n", sp.Summary)
	prefix := ""
	if tradeOneShot {
		prefix = "wicket trade "
	}
	fmt.Fprintf(w, "usage: %s%s %s [field=value]... [--reason TEXT]", prefix, verb, tradePositionalUsage(verb))
	if tradeOneShot {
		fmt.Fprintf(w, " [--yes] [--json] [--node HOST:PORT]")
	}
	fmt.Fprintf(w, "\nexample: %s%s\n", prefix, tv.example)
	fmt.Fprintf(w, "fields:\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, f := range sp.Fields {
		need := "optional"
		if f.Required {
			need = "required"
		}
		kind := string(f.Kind)
		if f.Kind == command.Enum {
			kind = strings.Join(f.Choices, "|")
		}
		desc := f.Description
		if f.Name == "venue" && f.Required && len(cfg.Venues) == 1 {
			desc += " (default: " + cfg.Venues[0].Name + ", the only venue in wicket.toml)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", f.Name, need, kind, desc)
	}
	fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", "reason", "optional", "text",
		fmt.Sprintf("why this is done; recorded in the node's audit trail (max %d characters)", command.MaxReasonRunes))
	tw.Flush()
	if len(sp.Rules) > 0 {
		fmt.Fprintf(w, "rules:\n")
		for _, r := range sp.Rules {
			fmt.Fprintf(w, "  - %s\n", r)
		}
	}
	if tradeOneShot {
		fmt.Fprintf(w, "Without --yes the preview is printed and nothing is sent; with --yes the command is previewed, sent\n"+
			"and its outcome awaited for 2 s. Exit status: 0 accepted (or previewed), 1 rejected, pending or not\n"+
			"sent, 2 a mistake in the line. --json prints the preview and outcome as one JSON object.\n")
	}
}
