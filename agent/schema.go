package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// param describes one tool argument. The input schema and the strict
// argument check are both derived from the Params of a spec.
type param struct {
	Name        string
	Type        string // string, integer, number, boolean, object, array, or "" for any JSON value
	Description string
	Required    bool
	Default     any
	Enum        []string
	Min, Max    *float64
	// Schema, when set, is the property's whole JSON schema (for unions
	// like "a list or {from,to,step}"); Type, Enum and bounds are then
	// ignored.
	Schema map[string]any
	// Shape says in words what a value must be, for errors ("an object
	// mapping a knob to ..."); default from Type.
	Shape string
}

// shape is what an error says the value must be: the schema's words,
// never Go's.
func (p param) shape() string {
	if p.Shape != "" {
		return p.Shape
	}
	switch p.kind() {
	case "object":
		return "a JSON object"
	case "array":
		return "a JSON array"
	case "integer":
		return "an integer"
	case "number":
		return "a number"
	case "boolean":
		return "a JSON boolean (true or false)"
	case "string":
		return "a string"
	}
	return "a JSON value"
}

// kind is the param's JSON type when it has one ("object" for an object
// schema).
func (p param) kind() string {
	if p.Schema != nil {
		if t, ok := p.Schema["type"].(string); ok {
			return t
		}
		return ""
	}
	return p.Type
}

func num(v float64) *float64 { return &v }

// property renders p as a JSON-schema property.
func (p param) property() map[string]any {
	if p.Schema != nil {
		prop := map[string]any{}
		for k, v := range p.Schema {
			prop[k] = v
		}
		if p.Description != "" {
			prop["description"] = p.Description
		}
		return prop
	}
	prop := map[string]any{}
	if p.Type != "" {
		prop["type"] = p.Type
	}
	if p.Description != "" && p.Description != enumWords(p.Enum) {
		prop["description"] = p.Description
	}
	if p.Default != nil && p.Default != false { // an absent boolean is false: saying so in every schema costs tools/list bytes
		prop["default"] = p.Default
	}
	if len(p.Enum) > 0 {
		prop["enum"] = p.Enum
	}
	if p.Min != nil {
		prop["minimum"] = *p.Min
	}
	if p.Max != nil {
		prop["maximum"] = *p.Max
	}
	return prop
}

// enumWords is how a description lists enum's values ("a, b or c"): such
// a description only repeats the enum, so the schema leaves it out.
func enumWords(enum []string) string {
	switch n := len(enum); n {
	case 0:
		return ""
	case 1:
		return enum[0]
	default:
		return strings.Join(enum[:n-1], ", ") + " or " + enum[n-1]
	}
}

// inputSchema renders params as a closed JSON-schema object.
func inputSchema(params []param) json.RawMessage {
	props := map[string]any{}
	required := []string{}
	for _, p := range params {
		props[p.Name] = p.property()
		if p.Required {
			required = append(required, p.Name)
		}
	}
	schema := map[string]any{
		"type":                 "object",
		"properties":           props,
		"additionalProperties": false,
	}
	if len(required) > 0 {
		schema["required"] = required
	}
	b, err := json.Marshal(schema)
	if err != nil {
		panic(fmt.Sprintf("agent: input schema: %v", err)) // static data; a test marshals every tool
	}
	return b
}

// args is a tools/call's arguments, decoded strictly: numbers keep their
// exact text, and only the spec's parameter names are accepted.
type args map[string]json.RawMessage

// parseArgs decodes raw (absent, null or an object) and rejects names that
// are not parameters of the tool, naming the valid ones. An object or
// array argument sent as a JSON-encoded string (some clients do) is
// accepted when the string holds exactly that; notes say so.
func parseArgs(tool string, params []param, raw json.RawMessage) (args, []string, error) {
	a, err := parseArgsStrict(tool, params, raw)
	if err != nil {
		return nil, nil, err
	}
	var notes []string
	for _, p := range params {
		k := p.kind()
		v, ok := a[p.Name]
		if !ok || (k != "object" && k != "array") {
			continue
		}
		t := bytes.TrimSpace(v)
		if len(t) == 0 || t[0] != '"' {
			continue
		}
		var inner string
		if json.Unmarshal(t, &inner) != nil {
			continue
		}
		in := bytes.TrimSpace([]byte(inner))
		open := byte('{')
		if k == "array" {
			open = '['
		}
		if len(in) == 0 || in[0] != open || !json.Valid(in) {
			continue
		}
		a[p.Name] = json.RawMessage(in)
		notes = append(notes, fmt.Sprintf("argument %q arrived as a string holding JSON; it was read as the %s it contains (send it as %s)", p.Name, k, p.shape()))
	}
	return a, notes, nil
}

func parseArgsStrict(tool string, params []param, raw json.RawMessage) (args, error) {
	a := args{}
	trimmed := strings.TrimSpace(string(raw))
	if trimmed == "" || trimmed == "null" {
		return a, nil
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("%s: arguments must be a JSON object", tool)
	}
	valid := map[string]bool{}
	names := make([]string, 0, len(params))
	for _, p := range params {
		valid[p.Name] = true
		names = append(names, p.Name)
	}
	var unknown []string
	for k := range a {
		if !valid[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		sort.Strings(names)
		valid := "none"
		if len(names) > 0 {
			valid = strings.Join(names, ", ")
		}
		return nil, fmt.Errorf("%s: unknown argument(s) %s; valid: %s", tool, strings.Join(unknown, ", "), valid)
	}
	for _, p := range params {
		if v, ok := a[p.Name]; p.Required && (!ok || string(v) == "null") {
			return nil, fmt.Errorf("%s: missing required argument %q", tool, p.Name)
		}
	}
	return a, nil
}

// has reports whether name is present and not null.
func (a args) has(name string) bool {
	v, ok := a[name]
	return ok && strings.TrimSpace(string(v)) != "null"
}

// str reads a string argument; absent or null gives def.
func (a args) str(name, def string) (string, error) {
	if !a.has(name) {
		return def, nil
	}
	var s string
	if err := json.Unmarshal(a[name], &s); err != nil {
		return "", fmt.Errorf("argument %q must be a string", name)
	}
	return s, nil
}

// integer reads an integer argument within [lo, hi]; absent gives def.
func (a args) integer(name string, def, lo, hi int) (int, error) {
	if !a.has(name) {
		return def, nil
	}
	var n json.Number
	dec := json.NewDecoder(strings.NewReader(string(a[name])))
	dec.UseNumber()
	if err := dec.Decode(&n); err != nil {
		return 0, fmt.Errorf("argument %q must be an integer", name)
	}
	v, err := n.Int64()
	if err != nil {
		return 0, fmt.Errorf("argument %q must be an integer, got %s", name, n)
	}
	if v < int64(lo) || v > int64(hi) {
		return 0, fmt.Errorf("argument %q is %d; allowed range %d..%d", name, v, lo, hi)
	}
	return int(v), nil
}

// boolean reads a strict JSON boolean; absent gives def. The string
// "true" is an error here (the preview gate's confirm has its own rule).
func (a args) boolean(name string, def bool) (bool, error) {
	if !a.has(name) {
		return def, nil
	}
	var b bool
	if err := json.Unmarshal(a[name], &b); err != nil {
		return false, fmt.Errorf("argument %q must be a JSON boolean (true or false)", name)
	}
	return b, nil
}

// decimalText reads a decimal given as a JSON string or number, returning
// its exact text; absent gives def.
func (a args) decimalText(name, def string) (string, error) {
	if !a.has(name) {
		return def, nil
	}
	raw := strings.TrimSpace(string(a[name]))
	if strings.HasPrefix(raw, `"`) {
		var s string
		if err := json.Unmarshal([]byte(raw), &s); err != nil {
			return "", fmt.Errorf("argument %q must be a decimal string", name)
		}
		return s, nil
	}
	var n json.Number
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&n); err != nil {
		return "", fmt.Errorf("argument %q must be a decimal (a string like \"10000\")", name)
	}
	return n.String(), nil
}

// object decodes an argument into v; absent leaves v alone. A value of
// the wrong JSON type is answered in the schema's words (shape), never
// with Go's type names; a value the type itself rejects keeps that
// type's own message.
func (a args) object(name, shape string, v any) error {
	if !a.has(name) {
		return nil
	}
	err := json.Unmarshal(a[name], v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	if errors.As(err, &te) || errors.As(err, &se) || strings.Contains(err.Error(), "Go ") || strings.Contains(err.Error(), "json: ") {
		return fmt.Errorf("argument %q must be %s", name, shape)
	}
	return fmt.Errorf("argument %q: %v", name, err)
}
