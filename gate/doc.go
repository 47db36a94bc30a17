// Package gate is the preview gate: the one mechanism that stands between an
// agent and an order.
//
// A write tool called without confirmation returns a preview of the resolved
// command and a Token minted by [PendingPreviews.Issue]. The write executes only
// when a later call carries both confirm: true (the JSON boolean, see
// [Confirmation]) and that token, for the same tool and the same command. The
// caller then runs the command that [PendingPreviews.Take] returns: the stored,
// previewed one, so the client_order_id that reaches the node is the one the
// preview showed.
//
// A token is a random uuid. It is single-use, bound to the tool name and to the
// command it was issued for, and valid for [PreviewWindow] from the instance's
// injected clock. Take removes a token before it returns, so of any number of
// concurrent confirms exactly one wins. Every Take spends the token, whether it
// succeeds or not: a confirm for another tool or another command burns it and
// the agent must preview again, so each preview is confirmed at most once and
// its trace reads preview → one confirm. Spent and expired tokens are remembered
// for [RememberWindow] (bounded in count), so a late confirm hears "already used"
// or "expired" rather than "unknown". Memory is bounded: expired tokens are swept
// on every call, and the number of outstanding previews is capped.
//
// Every refusal is an [*Error] whose Kind says which rule refused, which
// matches one of the sentinels ([ErrUnknownToken], [ErrExpiredToken],
// [ErrUsedToken], [ErrMismatch], [ErrTooManyPreviews]) with errors.Is, and
// whose text tells the agent what to do next.
//
// The intent comparison belongs to the command type: anything with a
// SameIntent method satisfies [Command]; it compares decimals by value and
// ignores a client order id that the confirming call omitted (the tests bind
// tokens to a reference type, Fields, that does the same).
//
// gate never sends anything, never executes a command, and never persists a
// token: tokens live in process memory only and die with the server. It never
// accepts a token for a different tool or a different command, never lets a
// token fire twice, and imports no other wicket package.
package gate
