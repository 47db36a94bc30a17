package gate

// The argument names of the confirm rule, as a write tool declares them.
const (
	ConfirmArg = "confirm"       // must be the JSON boolean true to confirm
	TokenArg   = "preview_token" // the token a preview returned
)

// Confirmation applies the confirm rule to a write tool's arguments, decoded
// from JSON by encoding/json into a map[string]any. A call confirms only when
// args[ConfirmArg] is the boolean true and args[TokenArg] is a non-empty
// string; then confirmed is true and tok is that string. Anything else — the
// string "true", 1, "yes", null, false, an absent key, a token that is not a
// string or is empty — means the call asks for a preview. That is never an
// error: the worst a malformed confirm can do is show a preview and send
// nothing.
//
// tok is also returned, with confirmed false, when a token came without
// confirm: true, so the caller can tell the agent why its token was not used.
// The token itself is checked later, by [ParseToken] and [PendingPreviews.Take].
func Confirmation(args map[string]any) (tok string, confirmed bool) {
	tok, _ = args[TokenArg].(string)
	yes, _ := args[ConfirmArg].(bool)
	return tok, yes && tok != ""
}
