package node

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/shopspring/decimal"
)

// BreakerInfo is a venue's breaker (wicket.toml max_daily_loss and
// max_drawdown_pct): its limits, why it tripped (reduce_only until an
// operator clears it), and, while tripped, a challenge for the operator
// key to sign a clear.
type BreakerInfo struct {
	Venue          string          `json:"venue"`
	MaxDailyLoss   decimal.Decimal `json:"max_daily_loss,omitzero"`
	MaxDrawdownPct decimal.Decimal `json:"max_drawdown_pct,omitzero"`
	Tripped        string          `json:"tripped,omitempty"`
	Challenge      string          `json:"challenge,omitempty"`
}

// Breaker reads venue's breaker (any key).
func (c *Client) Breaker(ctx context.Context, venue string) (BreakerInfo, error) {
	var out BreakerInfo
	err := c.do(ctx, http.MethodGet, "/v1/venues/"+url.PathEscape(venue)+"/breaker", nil, nil, KeyObserve, &out)
	return out, err
}

// ClearBreaker clears venue's tripped breaker: it reads a challenge, signs
// the clear with the operator's key op (confirm: the venue's name typed
// back) and sends it with the control key. Only `wicket node
// clear-breaker` at an interactive terminal calls this.
func (c *Client) ClearBreaker(ctx context.Context, venue, confirm string, op ed25519.PrivateKey) (BreakerInfo, error) {
	var out BreakerInfo
	if c.control == "" {
		return out, Errorf(KindForbidden, "no_control_key", "clearing a breaker needs the control key; set WICKET_NODE_CONTROL_KEY")
	}
	info, err := c.Breaker(ctx, venue)
	if err != nil {
		return out, err
	}
	req := ArmRequest{Confirm: confirm, Challenge: info.Challenge}
	req.Signature = SignOperator(op, ArmStatement{Action: "clear_breaker", Target: "venue", Name: venue, Confirm: confirm, Challenge: info.Challenge})
	body, err := json.Marshal(req)
	if err != nil {
		return out, err
	}
	err = c.do(ctx, http.MethodPost, "/v1/venues/"+url.PathEscape(venue)+"/breaker/clear", nil, body, KeyControl, &out)
	return out, err
}
