// Package jsoncompact tells, cheaply, whether a text is one JSON value
// written compact, as encoding/json writes it: what json.Compact would
// return unchanged and json.Valid accepts. It is for the hot paths that
// receive JSON the project's own encoders wrote (a research ledger's rows,
// a sweep chunk's metrics) and must still check it: a yes is certain, a
// no only means "ask encoding/json", which decides. It never changes a
// text and imports no domain package.
package jsoncompact

// maxCompactDepth is how deep Is follows objects and arrays
// before it leaves src to json.Compact.
const maxCompactDepth = 64

// Is reports whether src is exactly one JSON value, as encoding/json's
// scanner reads it, with no space anywhere outside its strings: what
// json.Compact would return unchanged. False means only "not sure":
// encoding/json decides (TestIsAgreesWithCompact holds the two to the
// same answers).
func Is(src []byte) bool {
	i, ok := compactValue(src, 0, 0)
	return ok && i == len(src)
}

// compactValue reads one value at src[i:] and returns the index after it.
func compactValue(src []byte, i, depth int) (int, bool) {
	if i >= len(src) {
		return i, false
	}
	switch c := src[i]; {
	case c == '{':
		return compactObject(src, i+1, depth+1)
	case c == '[':
		return compactArray(src, i+1, depth+1)
	case c == '"':
		return compactString(src, i+1)
	case c == '-' || (c >= '0' && c <= '9'):
		return compactNumber(src, i)
	case c == 't':
		return literal(src, i, "true")
	case c == 'f':
		return literal(src, i, "false")
	case c == 'n':
		return literal(src, i, "null")
	}
	return i, false
}

func literal(src []byte, i int, word string) (int, bool) {
	if len(src)-i < len(word) || string(src[i:i+len(word)]) != word {
		return i, false
	}
	return i + len(word), true
}

func compactObject(src []byte, i, depth int) (int, bool) {
	if depth > maxCompactDepth {
		return i, false
	}
	if i < len(src) && src[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(src) || src[i] != '"' {
			return i, false
		}
		var ok bool
		if i, ok = compactString(src, i+1); !ok {
			return i, false
		}
		if i >= len(src) || src[i] != ':' {
			return i, false
		}
		if i, ok = compactValue(src, i+1, depth); !ok {
			return i, false
		}
		if i >= len(src) {
			return i, false
		}
		switch src[i] {
		case ',':
			i++
		case '}':
			return i + 1, true
		default:
			return i, false
		}
	}
}

func compactArray(src []byte, i, depth int) (int, bool) {
	if depth > maxCompactDepth {
		return i, false
	}
	if i < len(src) && src[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = compactValue(src, i, depth); !ok {
			return i, false
		}
		if i >= len(src) {
			return i, false
		}
		switch src[i] {
		case ',':
			i++
		case ']':
			return i + 1, true
		default:
			return i, false
		}
	}
}

// compactString reads the rest of a string whose opening quote is before
// i: encoding/json refuses a control character in it and any escape but
// \", \\, \/, \b, \f, \n, \r, \t and \u with four hex digits, and passes
// every other byte (it does not check UTF-8).
func compactString(src []byte, i int) (int, bool) {
	for i < len(src) {
		c := src[i]
		switch {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return i, false
		case c == '\\':
			if i+1 >= len(src) {
				return i, false
			}
			switch src[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if len(src)-i < 6 || !isHex(src[i+2]) || !isHex(src[i+3]) || !isHex(src[i+4]) || !isHex(src[i+5]) {
					return i, false
				}
				i += 6
			default:
				return i, false
			}
		default:
			i++
		}
	}
	return i, false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// compactNumber reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func compactNumber(src []byte, i int) (int, bool) {
	if src[i] == '-' {
		i++
	}
	digits := func() bool {
		start := i
		for i < len(src) && src[i] >= '0' && src[i] <= '9' {
			i++
		}
		return i > start
	}
	switch {
	case i >= len(src):
		return i, false
	case src[i] == '0':
		i++
	case !digits():
		return i, false
	}
	if i < len(src) && src[i] == '.' {
		i++
		if !digits() {
			return i, false
		}
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		i++
		if i < len(src) && (src[i] == '+' || src[i] == '-') {
			i++
		}
		if !digits() {
			return i, false
		}
	}
	return i, true
}
