package node

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"wicket/node/command"
	"wicket/node/guardrail"
)

// Risk controls an operator holds over the whole node (docs/node.md "Risk
// controls"): the kill switch, the dead man's switch's heartbeat and the
// reset of the identical-order throttle. Each is signed by the operator
// key over a challenge the node issued for that act, as arming is; the
// control key alone gets 403.

// The operator's risk acts, as signed (ArmStatement.Action) and as the
// audit trail records them (ArmingChange.Action).
const (
	ActKill          = "kill"
	ActResumeTrading = "resume-trading"
	ActHeartbeat     = "heartbeat"
	ActResetThrottle = "reset-throttle"

	ArmingKill          ArmingAction = "kill"
	ArmingResumeTrading ArmingAction = "resume_trading"
	ArmingSilence       ArmingAction = "dead_mans_switch"
	ArmingStreamLoss    ArmingAction = "stream_loss"
)

// Event kinds of the kill switch: EventKilled halted the node (State: the
// trading state before, Note: why); EventKillEnded is the operator's
// resume-trading (State: the trading state restored).
const (
	EventKilled    EventKind = "node_killed"
	EventKillEnded EventKind = "node_kill_ended"
)

// KillState is a standing kill: since when, why, and the trading state
// resume-trading restores.
type KillState struct {
	Since  time.Time            `json:"since"`
	Reason string               `json:"reason"`
	Prior  command.TradingState `json:"prior_state"`
}

// KillReport is what one kill did: the orders it canceled (venue:id),
// those whose cancel the venue did not confirm, the closing orders of
// --flatten, the deployments it paused, and one line saying so.
type KillReport struct {
	Kill        KillState `json:"kill"`
	Canceled    []string  `json:"canceled"`
	Unconfirmed []string  `json:"unconfirmed,omitempty"`
	Flattened   []string  `json:"flattened,omitempty"`
	Paused      []string  `json:"paused_deployments"`
	Detail      string    `json:"detail"`
}

// HeartbeatState is the dead man's switch: how often an operator must beat,
// the last beat, when the next is due, and whether it lapsed (the auto
// deployments were paused then, and stay paused until an operator resumes
// each).
type HeartbeatState struct {
	Every     string    `json:"every"`
	OnSilence string    `json:"on_silence"`
	Last      time.Time `json:"last"`
	Due       time.Time `json:"due"`
	Lapsed    bool      `json:"lapsed"`
	Note      string    `json:"note,omitempty"`
}

// PausedDeployment is a deployment the kill switch or the dead man's
// switch paused: its id, venue, and the client order ids of its orders
// still working at the node.
type PausedDeployment struct {
	ID      string   `json:"id"`
	Venue   string   `json:"venue"`
	Working []string `json:"working,omitempty"`
}

// RiskStatus is every risk control at once (GET /v1/risk, the MCP tool
// risk_status, wicket node risk): the trading state, the kill and the
// heartbeat, each configured limit and throttle with its headroom, and
// the venues' breakers. It stays under 4 KB for a project of a few venues
// and symbols.
type RiskStatus struct {
	Time         time.Time            `json:"time"`
	TradingState command.TradingState `json:"trading_state"`
	Kill         *KillState           `json:"kill,omitempty"`
	Heartbeat    *HeartbeatState      `json:"heartbeat,omitempty"`
	StreamLoss   []string             `json:"stream_loss,omitempty"` // venues whose lost stream paused their deployments
	Limits       []guardrail.Headroom `json:"limits"`
	Breakers     []RiskBreaker        `json:"breakers,omitempty"`
}

// RiskBreaker is one venue's breaker as risk_status shows it.
type RiskBreaker struct {
	Venue   string `json:"venue"`
	Limits  string `json:"limits"`
	Tripped string `json:"tripped,omitempty"`
}

// OperatorRequest is an operator's risk act: the challenge the node
// issued for it, the operator key's signature of its statement, what was
// typed to confirm, --flatten (kill only) and a reason for the audit
// trail.
type OperatorRequest struct {
	Challenge string `json:"challenge"`
	Signature string `json:"signature"`
	Confirm   string `json:"confirm,omitempty"`
	Flatten   bool   `json:"flatten,omitempty"`
	Reason    string `json:"reason,omitempty"`
	// Check and Preview name an override's check and command (override.go).
	Check   string `json:"check,omitempty"`
	Preview string `json:"preview,omitempty"`
}

// Statement is the ArmStatement an operator signs for act with r; an
// override's names its check and its command's preview hash.
func (r OperatorRequest) Statement(act string) ArmStatement {
	if act == ActOverride {
		return ArmStatement{Action: act, Target: "command", Name: r.Check, For: r.Preview, Confirm: r.Confirm, Challenge: r.Challenge}
	}
	flatten := ""
	if r.Flatten {
		flatten = "flatten"
	}
	return ArmStatement{Action: act, Target: "node", Name: "node", For: flatten, Confirm: r.Confirm, Challenge: r.Challenge}
}

// RiskChallenge is a fresh challenge for one operator risk act.
type RiskChallenge struct {
	Act       string `json:"act"`
	Challenge string `json:"challenge"`
}

// Risk reads every risk control (observe key).
func (c *Client) Risk(ctx context.Context) (RiskStatus, error) {
	var out RiskStatus
	err := c.do(ctx, http.MethodGet, "/v1/risk", nil, nil, KeyObserve, &out)
	return out, err
}

// operatorAct reads a challenge for act, signs it with op (unsigned when
// op is nil: the node then refuses it) and posts it to path.
func (c *Client) operatorAct(ctx context.Context, act, path string, req OperatorRequest, op ed25519.PrivateKey, out any) error {
	if c.control == "" {
		return Errorf(KindForbidden, "no_control_key", "%s needs the control key (and the operator key); set WICKET_NODE_CONTROL_KEY", act)
	}
	if op != nil {
		var ch RiskChallenge
		if err := c.do(ctx, http.MethodGet, "/v1/risk/challenge", url.Values{"act": {act}}, nil, KeyObserve, &ch); err != nil {
			return err
		}
		req.Challenge = ch.Challenge
		req.Signature = SignOperator(op, req.Statement(act))
	}
	body, err := json.Marshal(req)
	if err != nil {
		return &Error{Kind: KindBadRequest, Code: "bad_request", Message: err.Error(), Err: err}
	}
	return c.do(ctx, http.MethodPost, path, nil, body, KeyControl, out)
}

// Kill is the kill switch: every working order on every venue canceled,
// every deployment paused, the node halted until ResumeTrading, and with
// flatten every position closed. Signed with the operator key op; only
// `wicket node kill` calls it.
func (c *Client) Kill(ctx context.Context, flatten bool, reason string, op ed25519.PrivateKey) (KillReport, error) {
	var out KillReport
	err := c.operatorAct(ctx, ActKill, "/v1/kill", OperatorRequest{Confirm: ActKill, Flatten: flatten, Reason: reason}, op, &out)
	return out, err
}

// ResumeTrading ends a kill (operator key op).
func (c *Client) ResumeTrading(ctx context.Context, reason string, op ed25519.PrivateKey) (RiskStatus, error) {
	var out RiskStatus
	err := c.operatorAct(ctx, ActResumeTrading, "/v1/resume-trading", OperatorRequest{Confirm: ActResumeTrading, Reason: reason}, op, &out)
	return out, err
}

// Heartbeat is the operator's heartbeat for the dead man's switch
// (operator key op).
func (c *Client) Heartbeat(ctx context.Context, op ed25519.PrivateKey) (HeartbeatState, error) {
	var out HeartbeatState
	err := c.operatorAct(ctx, ActHeartbeat, "/v1/heartbeat", OperatorRequest{Confirm: ActHeartbeat}, op, &out)
	return out, err
}

// ResetThrottle clears the identical-order throttle's refusals (operator
// key op).
func (c *Client) ResetThrottle(ctx context.Context, op ed25519.PrivateKey) (RiskStatus, error) {
	var out RiskStatus
	err := c.operatorAct(ctx, ActResetThrottle, "/v1/risk/reset-throttle", OperatorRequest{Confirm: ActResetThrottle}, op, &out)
	return out, err
}

var _ guardrail.RestingView = (*Snapshot)(nil)

// Resting lists the open orders of symbol on venue as the snapshot shows
// them (guardrail.RestingView: a client's preview runs the self-trade
// check on it).
func (s *Snapshot) Resting(venue, symbol string) []guardrail.Order {
	var out []guardrail.Order
	if v := s.venue(venue); v != nil {
		for _, o := range v.OpenOrders {
			if o.Symbol == symbol && o.Status == OrderOpen {
				out = append(out, o.View())
			}
		}
	}
	return out
}

// MarketClock is a venue's market clock (Alpaca's GET /v2/clock): open
// now or not, when it next opens and closes, and when it was read.
type MarketClock struct {
	Open      bool      `json:"open"`
	NextOpen  time.Time `json:"next_open"`
	NextClose time.Time `json:"next_close"`
	Read      time.Time `json:"read"`
}
