package node

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"github.com/shopspring/decimal"
)

// ArmInfo is what an operator sees before arming a real venue: which
// account it is, what it holds, and the limits the node will enforce.
// Refusal, when set, says why the venue cannot be armed now.
type ArmInfo struct {
	Venue               string          `json:"venue"`
	Kind                string          `json:"kind"`
	Environment         string          `json:"environment"`
	Live                bool            `json:"live"` // real money
	MayArm              bool            `json:"may_arm"`
	AllowLive           bool            `json:"allow_live"` // the node was started with --allow-live
	Account             string          `json:"account,omitempty"`
	Currency            string          `json:"currency,omitempty"`
	Cash                decimal.Decimal `json:"cash"`
	BuyingPower         decimal.Decimal `json:"buying_power"`
	Symbols             []string        `json:"symbols"`
	MaxOrderNotional    decimal.Decimal `json:"max_order_notional"`
	MaxPositionNotional decimal.Decimal `json:"max_position_notional"`
	PriceCollarPct      float64         `json:"price_collar_pct"`
	Armed               bool            `json:"armed"`
	ArmedUntil          time.Time       `json:"armed_until,omitzero"`
	Refusal             string          `json:"refusal,omitempty"`
	// Challenge is fresh at every read, for one arming of this venue on
	// this node within ChallengeLife; the operator key signs it.
	Challenge string `json:"challenge,omitempty"`
}

// ChallengeLife is how long an arming challenge stays good.
const ChallengeLife = time.Minute

// ArmRequest arms a venue for For; Confirm is the venue's name as the
// operator typed it. Challenge and Signature are the operator key's
// signature of the ArmStatement they make (see Arm): the control key alone
// does not arm.
type ArmRequest struct {
	For       string `json:"for"`
	Confirm   string `json:"confirm"`
	Challenge string `json:"challenge,omitempty"`
	Signature string `json:"signature,omitempty"`
}

// Statement is the ArmStatement that arming venue with r signs.
func (r ArmRequest) Statement(venue string) ArmStatement {
	return ArmStatement{Action: "arm", Target: "venue", Name: venue, For: r.For, Confirm: r.Confirm, Challenge: r.Challenge}
}

// Arming reads what arming venue would mean (any key), with a fresh
// challenge for the operator key to sign.
func (c *Client) Arming(ctx context.Context, venue string) (ArmInfo, error) {
	var out ArmInfo
	err := c.do(ctx, http.MethodGet, "/v1/venues/"+url.PathEscape(venue)+"/arming", nil, nil, KeyObserve, &out)
	return out, err
}

// Arm arms a real venue for d: it asks the node for a challenge, signs the
// arming statement with the operator's private key op, and sends it with
// the control key. The node refuses it unless the operator key signed it,
// the venue's wicket.toml table says may_arm = true, confirm is its name,
// and, for a live venue, the node runs with --allow-live. Only `wicket
// node arm` at an interactive terminal calls this; without op (nil) the
// request goes unsigned and the node refuses it.
func (c *Client) Arm(ctx context.Context, venue string, d time.Duration, confirm string, op ed25519.PrivateKey) (ArmInfo, error) {
	req := ArmRequest{For: d.String(), Confirm: confirm}
	if op != nil {
		info, err := c.Arming(ctx, venue)
		if err != nil {
			return info, err
		}
		req.Challenge = info.Challenge
		req.Signature = SignOperator(op, req.Statement(venue))
	}
	return c.armCall(ctx, venue, "arm", req)
}

// Disarm disarms a venue at once (control key).
func (c *Client) Disarm(ctx context.Context, venue string) (ArmInfo, error) {
	return c.armCall(ctx, venue, "disarm", ArmRequest{})
}

func (c *Client) armCall(ctx context.Context, venue, verb string, req ArmRequest) (ArmInfo, error) {
	var out ArmInfo
	if c.control == "" {
		return out, Errorf(KindForbidden, "no_control_key", "arming needs the control key; set WICKET_NODE_CONTROL_KEY")
	}
	body, err := json.Marshal(req)
	if err != nil {
		return out, &Error{Kind: KindBadRequest, Code: "bad_request", Message: err.Error(), Err: err}
	}
	err = c.do(ctx, http.MethodPost, "/v1/venues/"+url.PathEscape(venue)+"/"+verb, nil, body, KeyControl, &out)
	return out, err
}
