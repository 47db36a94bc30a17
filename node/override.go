package node

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"wicket/node/command"
)

// The operator's one-off override (docs/node.md "Risk controls"): one
// pre-trade check lifted for one command, named by its preview hash,
// signed by the operator key over a challenge, used once, audited when
// granted and when used.

// ActOverride is the override as signed (ArmStatement.Action); the
// audit trail records the grant as ArmingOverride and its use as
// ArmingOverrideUsed.
const (
	ActOverride = "override"

	ArmingOverride     ArmingAction = "override"
	ArmingOverrideUsed ArmingAction = "override_used"
)

// Overridable lists the checks an override may lift: the limits on price,
// size, position and the day's notional and the market's hours. The
// order's form (venue, symbol, quantity, precision, sides, legs), the
// message throttles (the venue's own rate), the identical-order throttle
// (the operator resets it), self-trade prevention and the margin checks
// are never lifted.
var Overridable = []string{"price_collar", "stop_collar", "order_notional", "position_notional", "order_quantity",
	"symbol_notional", "position_quantity", "daily_notional", "market_hours"}

// EventOverride journals a granted override (Override: its check,
// preview hash, expiry and reason); EventOverrideUsed, that a command
// spent it (Override: its check and preview hash). A restart replays
// both: an override still waiting stands again until its expiry, one
// used never does.
const (
	EventOverride     EventKind = "override_granted"
	EventOverrideUsed EventKind = "override_used"
)

// OverrideLife is how long a granted override waits for its command.
const OverrideLife = 10 * time.Minute

// PreviewHash is the hex SHA-256 of what c asks, without its client
// order id (a resend of the same command under a new id is the same
// command): the hash a refusal names and an override is bound to.
func PreviewHash(c command.Command) string {
	c.ClientOrderID = ""
	b, err := c.MarshalJSON()
	if err != nil {
		b = []byte(string(c.Verb)) // an unknown verb is refused before any check
	}
	h := sha256.Sum256(append([]byte("wicket preview v1\n"), b...))
	return hex.EncodeToString(h[:])
}

// OverrideState is a granted override: the check it lifts, the command's
// preview hash, until when it waits, and the operator's reason.
type OverrideState struct {
	Check   string    `json:"check"`
	Preview string    `json:"preview"`
	Until   time.Time `json:"until"`
	Reason  string    `json:"reason,omitempty"`
}

// Override lifts check once for the command whose preview hash is
// preview (operator key op); only `wicket node override` calls it.
func (c *Client) Override(ctx context.Context, check, preview, reason string, op ed25519.PrivateKey) (OverrideState, error) {
	var out OverrideState
	err := c.operatorAct(ctx, ActOverride, "/v1/risk/override", OperatorRequest{Confirm: ActOverride, Check: check, Preview: preview, Reason: reason}, op, &out)
	return out, err
}
