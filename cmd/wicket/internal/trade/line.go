package trade

import (
	"fmt"
	"strings"

	"wicket/internal/project"
	"wicket/node/command"
)

// The grammar of a trade line, shared by the REPL and the one-shot verbs:
//
//	VERB [WORD]... [field=value | --field value | --field=value]... [--reason TEXT]
//
// VERB is a verb of the node's table (submit_order, ...) or its short name
// (submit, cancel, state). The positional WORDs fill the verb's common
// fields in a fixed order (tradeVerbs below); every field can also be named,
// in any order, once. reason rides beside the command into the audit trail,
// exactly like the write tools' reason argument. One-shot verbs also take
// --yes, --json and --node; the REPL asks instead of reading --yes.

// tradeVerb is the REPL's view of one verb: its short name, the fields its
// positional words fill, and an example line for help.
type tradeVerb struct {
	short      string
	positional []string
	example    string
}

// tradeVerbs covers every verb of command.Specs(); a test fails when the
// table and the verb table disagree.
var tradeVerbs = map[command.Verb]tradeVerb{
	command.SubmitOrder:     {"submit", []string{"side", "quantity", "symbol", "type", "price"}, `submit buy 0.5 BTC-USD limit 41000 --reason "breakout retest"`},
	command.CancelOrder:     {"cancel", []string{"order_id"}, "cancel ord-00000001"},
	command.Modify:          {"", []string{"order_id"}, "modify ord-00000001 price=40500"},
	command.Flatten:         {"", []string{"symbol"}, `flatten BTC-USD --reason "stop out"`},
	command.MarketExit:      {"", []string{"venue"}, `market_exit --reason "end of day"`},
	command.MassCancel:      {"", []string{"symbol", "side"}, "mass_cancel BTC-USD buy"},
	command.SetTradingState: {"state", []string{"state"}, `state halted --reason "drill"`},
}

// lookupTradeVerb resolves a verb name or short name.
func lookupTradeVerb(name string) (command.Verb, bool) {
	for _, v := range command.Verbs() {
		if name == string(v) || (name == tradeVerbs[v].short && name != "") {
			return v, true
		}
	}
	return "", false
}

// tradeVerbNames lists the verbs as help and errors show them: "submit_order
// (submit)".
func tradeVerbNames() []string {
	var out []string
	for _, v := range command.Verbs() {
		name := string(v)
		if s := tradeVerbs[v].short; s != "" {
			name += " (" + s + ")"
		}
		out = append(out, name)
	}
	return out
}

// tradeLine is one parsed line: the verb's text fields (for command.Build)
// and the options beside them.
type tradeLine struct {
	verb      command.Verb
	fields    map[string]string
	reason    string
	hasReason bool

	// One-shot only.
	yes, json, help bool
	node            string
}

// tradeLineMode says which options a line may carry.
type tradeLineMode int

const (
	tradeREPLLine    tradeLineMode = iota // the REPL: fields and --reason
	tradeOneShotLine                      // wicket trade VERB ...: also --yes, --json, --node, --help
)

// tradeLineError is a mistake in a line's words (not in a field's value,
// which command.Build reports).
type tradeLineError struct{ msg string }

func (e *tradeLineError) Error() string { return e.msg }

func tradeLineErrorf(format string, a ...any) error {
	return &tradeLineError{fmt.Sprintf(format, a...)}
}

// parseTradeWords reads the words after the verb.
func parseTradeWords(verb command.Verb, words []string, mode tradeLineMode) (tradeLine, error) {
	sp, ok := command.Lookup(verb)
	if !ok {
		return tradeLine{}, tradeLineErrorf("unknown verb %q; verbs: %s", verb, strings.Join(tradeVerbNames(), ", "))
	}
	tv := tradeVerbs[verb]
	ln := tradeLine{verb: verb, fields: map[string]string{}}
	setField := func(name, value string) error {
		name = strings.ReplaceAll(name, "-", "_")
		if name == "reason" {
			if ln.hasReason {
				return tradeLineErrorf("%s: reason given twice; give it once", verb)
			}
			ln.reason, ln.hasReason = value, true
			return nil
		}
		if _, ok := sp.Field(name); !ok {
			return tradeLineErrorf("%s: unknown field %q; valid fields: %s, reason", verb, name, strings.Join(sp.FieldNames(), ", "))
		}
		if _, dup := ln.fields[name]; dup {
			return tradeLineErrorf("%s: %s given twice; give each field once", verb, name)
		}
		ln.fields[name] = value
		return nil
	}
	npos := 0
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "-y" || w == "--yes":
			if mode != tradeOneShotLine {
				return ln, tradeLineErrorf("%s is for the one-shot `wicket trade %s ...`; here, answer the send? prompt", w, verb)
			}
			ln.yes = true
		case w == "--json":
			if mode != tradeOneShotLine {
				return ln, tradeLineErrorf("--json is for the one-shot `wicket trade %s ... --json`", verb)
			}
			ln.json = true
		case w == "-h" || w == "--help":
			if mode != tradeOneShotLine {
				return ln, tradeLineErrorf("for help type: help %s", verb)
			}
			ln.help = true
		case w == "--":
			return ln, tradeLineErrorf("%s: unexpected --; fields are field=value or --field value", verb)
		case strings.HasPrefix(w, "--"):
			name, value, inline := strings.Cut(w[2:], "=")
			if name == "" {
				return ln, tradeLineErrorf("%s: %q names no field", verb, w)
			}
			if !inline {
				if i+1 >= len(words) {
					return ln, tradeLineErrorf("%s: --%s needs a value: --%s VALUE", verb, name, name)
				}
				i++
				value = words[i]
			}
			if name == "node" {
				if mode != tradeOneShotLine {
					return ln, tradeLineErrorf("--node is chosen when the REPL starts: wicket trade --node HOST:PORT")
				}
				if ln.node != "" {
					return ln, tradeLineErrorf("--node given twice")
				}
				ln.node = value
				continue
			}
			if err := setField(name, value); err != nil {
				return ln, err
			}
		case strings.Contains(w, "="):
			name, value, _ := strings.Cut(w, "=")
			if name == "" {
				return ln, tradeLineErrorf("%s: %q names no field; write field=value", verb, w)
			}
			if err := setField(name, value); err != nil {
				return ln, err
			}
		default:
			if npos >= len(tv.positional) {
				words := "words"
				if len(tv.positional) == 1 {
					words = "word"
				}
				return ln, tradeLineErrorf("%s: unexpected word %q: it takes at most %d positional %s (%s); name other fields as field=value",
					verb, w, len(tv.positional), words, tradePositionalUsage(verb))
			}
			name := tv.positional[npos]
			npos++
			if name == "order_id" && strings.HasPrefix(w, command.ClientOrderIDPrefix) {
				name = "client_order_id"
			}
			if err := setField(name, w); err != nil {
				return ln, err
			}
		}
	}
	return ln, nil
}

// tradePositionalUsage is the verb's positional words as help shows them:
// "SIDE QUANTITY SYMBOL TYPE [PRICE]".
func tradePositionalUsage(verb command.Verb) string {
	sp, _ := command.Lookup(verb)
	var parts []string
	optional := 0
	for _, name := range tradeVerbs[verb].positional {
		word := strings.ToUpper(name)
		f, _ := sp.Field(name)
		required := f.Required
		if name == "order_id" {
			// exactly one of order_id or client_order_id: the word is either
			word, required = "ORDER", true
		}
		if required && optional == 0 {
			parts = append(parts, word)
			continue
		}
		parts = append(parts, "["+word)
		optional++
	}
	if optional > 0 {
		parts[len(parts)-1] += strings.Repeat("]", optional)
	}
	return strings.Join(parts, " ")
}

// buildTradeCommand makes the command of a line at the one construction site,
// command.Build. A verb whose venue is required gets the project's only
// venue when the line names none; market_exit without a venue means every
// venue and is left alone.
func buildTradeCommand(cfg project.Config, ln tradeLine) (command.Command, error) {
	fields := make(map[string]string, len(ln.fields)+1)
	for k, v := range ln.fields {
		fields[k] = v
	}
	if _, named := fields["venue"]; !named && len(cfg.Venues) == 1 {
		if sp, _ := command.Lookup(ln.verb); tradeVenueRequired(sp) {
			fields["venue"] = cfg.Venues[0].Name
		}
	}
	return command.Build(string(ln.verb), fields)
}

func tradeVenueRequired(sp command.Spec) bool {
	f, ok := sp.Field("venue")
	return ok && f.Required
}

// splitTradeLine splits a typed line into words the way a shell would for the
// simple cases: blanks separate words; '...' keeps everything literally;
// "..." keeps blanks and honours \" and \\; a backslash outside quotes
// escapes the next character. An unterminated quote is an error.
func splitTradeLine(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case ch == '\'':
			inWord = true
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, tradeUnterminated('\'')
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 1
		case ch == '"':
			inWord = true
			closed := false
			for i++; i < len(s); i++ {
				if s[i] == '"' {
					closed = true
					break
				}
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				cur.WriteByte(s[i])
			}
			if !closed {
				return nil, tradeUnterminated('"')
			}
		case ch == '\\':
			inWord = true
			if i+1 < len(s) {
				i++
				cur.WriteByte(s[i])
			}
		default:
			inWord = true
			cur.WriteByte(ch)
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

func tradeUnterminated(q byte) error {
	return tradeLineErrorf("unterminated %c quote: close it with %c", q, q)
}
