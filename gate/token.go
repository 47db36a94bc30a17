package gate

import "fmt"

// Token is a preview token: a uuid in its canonical lowercase form
// (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx), minted by [PendingPreviews.Issue].
type Token string

// String returns the token text.
func (t Token) String() string { return string(t) }

// tokenLen is the length of a canonical uuid.
const tokenLen = 36

// ParseToken accepts exactly the form Issue mints: 36 characters, lowercase
// hexadecimal digits with hyphens after the 8th, 12th, 16th and 20th digit.
// Braces, a urn:uuid: prefix, upper case, surrounding space and the unhyphenated
// form are all refused, because a token is copied, never re-typed. The error is
// an [*Error] of kind [KindUnknown] (errors.Is [ErrUnknownToken]): a string of
// another shape cannot be a token this server issued.
func ParseToken(s string) (Token, error) {
	if why := tokenSyntax(s); why != "" {
		return "", &Error{Kind: KindUnknown, Token: Token(s), Err: fmt.Errorf("malformed: %s", why)}
	}
	return Token(s), nil
}

// tokenSyntax says what is wrong with s as a token, or "" when nothing is.
func tokenSyntax(s string) string {
	if s == "" {
		return "it is empty"
	}
	if len(s) != tokenLen {
		return fmt.Sprintf("it has %d bytes, a token has %d", len(s), tokenLen)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return fmt.Sprintf("byte %d is %q, want '-'", i+1, c)
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return fmt.Sprintf("byte %d is %q, want a lowercase hexadecimal digit", i+1, c)
			}
		}
	}
	return ""
}
