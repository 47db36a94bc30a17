package deploy

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"wicket/strategy/backtest"
	"wicket/strategy/portfolio"
	"wicket/strategy/scriptapi"
)

// Mode is how a deployment's orders leave: proposed to a person, or sent.
type Mode string

// The modes.
const (
	ModePropose Mode = "propose" // each order waits for an operator's approval; lapses at the next bar
	ModeAuto    Mode = "auto"    // sent within the allowance (a real venue: only while armed)
)

// State is where a deployment is.
type State string

// The states.
const (
	StateRunning State = "running"
	StatePaused  State = "paused" // a breaker tripped, or the operator paused it; only an operator resumes
	StateStopped State = "stopped"
)

// Allowance is what a deployment may do: backtest.Allowance, the one
// allowance of research and the node, so a backtest under a deployment's
// allowance measures the breakers the node trades under (the semantics
// are in strategy/backtest/allowance.go; the node applies them in
// step.go). A nil limit is no limit.
type Allowance = backtest.Allowance

// Spec is what deploying asks for; the node resolves and checks it.
type Spec struct {
	Strategy  string          `json:"strategy"` // the file name, e.g. sma_cross.star
	Source    string          `json:"source"`   // its text at deploy time
	Params    map[string]any  `json:"params,omitempty"`
	Series    string          `json:"series"` // SYMBOL@GRAN
	Venue     string          `json:"venue"`
	Mode      Mode            `json:"mode,omitempty"` // default propose
	Capital   decimal.Decimal `json:"capital"`
	Allowance Allowance       `json:"allowance"`
	// Warmup is how many bars before the bar decided at the strategy is
	// evaluated over (before the first live bar, from the history store);
	// 0: its own warm-up, at least DefaultWarmup. It must be long enough
	// that no indicator depends on where its history began (the
	// start-point check), so the decision equals the backtest's.
	Warmup int `json:"warmup,omitempty"`
	// Approval says who may approve a propose-mode deployment's
	// proposals: "" or ApprovalOperator, an operator only (signed with
	// the operator key); ApprovalElicit, also the person a `wicket mcp
	// --approval elicit` server asks through its client, on the word of
	// the control key that created the deployment.
	Approval string `json:"approval,omitempty"`
	// CreatedBy is the key id the request was signed with: the node's
	// HTTP surface sets it, never the request body.
	CreatedBy string `json:"-"`
}

// Who approves a propose-mode deployment's proposals (Spec.Approval).
const (
	ApprovalOperator = "operator"
	ApprovalElicit   = "elicit"
)

// Deployment is a deployment with its running figures.
type Deployment struct {
	ID           string          `json:"id"`
	Strategy     string          `json:"strategy"`
	StrategyHash string          `json:"strategy_hash"` // sha256 of Source
	Source       string          `json:"source,omitempty"`
	Params       map[string]any  `json:"params,omitempty"`
	Series       string          `json:"series"`
	Symbol       string          `json:"symbol"`
	Venue        string          `json:"venue"`
	Mode         Mode            `json:"mode"`
	Approval     string          `json:"approval,omitempty"`   // propose mode: operator (default) or elicit
	CreatedBy    string          `json:"created_by,omitempty"` // the key id that created it
	Capital      decimal.Decimal `json:"capital"`
	Allowance    Allowance       `json:"allowance"`
	Warmup       int             `json:"warmup"`
	Style        string          `json:"style,omitempty"` // signals, or on_bar (whose ctx reads the deployment's own account)
	State        State           `json:"state"`
	Reason       string          `json:"reason,omitempty"`
	Created      time.Time       `json:"created"`
	Updated      time.Time       `json:"updated"`

	// The deployment's own share of the venue's account: its cash
	// (capital less what its fills cost), position, the standing target
	// its last order was sized for, and the equity the breakers watch.
	Cash     decimal.Decimal `json:"cash"`
	Position decimal.Decimal `json:"position"`
	Target   float64         `json:"target"`
	// NoTarget: the last order was a quantity (an on_bar strategy's
	// ctx.buy or ctx.sell), so no target stands and the next one trades,
	// as in the backtest.
	NoTarget    bool            `json:"no_target,omitempty"`
	Equity      decimal.Decimal `json:"equity"`
	Mark        decimal.Decimal `json:"mark,omitzero"` // the last close it was marked at
	Peak        decimal.Decimal `json:"peak"`
	Day         string          `json:"day,omitempty"` // the UTC day the day figures are of
	DayStart    decimal.Decimal `json:"day_start_equity"`
	OrdersToday int             `json:"orders_today"`
	LastBar     time.Time       `json:"last_bar,omitzero"` // the last bar evaluated or recorded missed
	// Exits are the protective exits the strategy attaches to its
	// positions (fractions of the average entry price, as the backtest
	// places them). EntryQty and EntryValue are the open position's
	// increases (quantity, and quantity × fill price), whose ratio is the
	// average entry the exits are priced from, as in the backtest. Guard
	// is the client order id of the command whose legs protect the
	// position now ("" for none).
	Exits      Exits           `json:"exits,omitzero"`
	EntryQty   decimal.Decimal `json:"entry_qty,omitzero"`
	EntryValue decimal.Decimal `json:"entry_value,omitzero"`
	Guard      string          `json:"guard,omitempty"`
	Missed     int             `json:"missed_bars,omitempty"`
	// Funding is the funding a futures venue booked for the deployment's
	// position (received positive), in Cash already; FundingSeq is the
	// node's event sequence of the last payment read (attrib_funding.go).
	Funding    decimal.Decimal `json:"funding,omitzero"`
	FundingSeq int64           `json:"funding_seq,omitempty"`
	// Legs, for a portfolio deployment (a strategy that declares a
	// universe; portfolio.go), are its assets, each with its own symbol,
	// position and mark; Series is then the universe's series,
	// comma-separated, and Symbol, Position and Mark are unused.
	// Rebalance is its schedule as declared and Schedule the schedule's
	// state after the last bar (nil before the first).
	Legs      []Leg                    `json:"legs,omitempty"`
	Rebalance string                   `json:"rebalance,omitempty"`
	Schedule  *portfolio.ScheduleState `json:"schedule,omitempty"`
	// Armed (auto on a real venue) lapses at ArmedUntil and at every
	// start of the node: it is never journaled as armed.
	ArmedUntil time.Time `json:"armed_until,omitzero"`
	// PlanOverride says that the operator armed it without a passed
	// research plan, signing the override (ActArmWithoutPlan); it lapses
	// with the arming.
	PlanOverride string `json:"plan_override,omitempty"`
	// PreApproved (propose mode) is how many of its next orders an
	// operator approved ahead (wicket node approve-proposal --next N
	// DEPLOYMENT): each is sent as an approved proposal is, without
	// waiting. It lapses at every start of the node, as arming does.
	PreApproved int        `json:"pre_approved,omitempty"`
	Proposals   []Proposal `json:"proposals,omitempty"`
	// Preview is what the checks before deploying found (the check's
	// answer only; never journaled).
	Preview *Preview `json:"preview,omitempty"`
}

// Preview is what a deployment's checks found before it trades.
type Preview struct {
	// StartPoint is the start-point check over the warm-up bars: how many
	// bars the strategy's values need before they stop depending on where
	// the history began; a warm-up shorter than Needed is refused.
	StartPoint *scriptapi.StartPoint `json:"start_point,omitempty"`
	// Plan is the research plan binding the strategy's text and its
	// verdict (preview.go), when the node reads the research ledger.
	Plan *PlanStatus `json:"plan,omitempty"`
	// Lookahead is the lookahead proof's verdict on the preview's
	// backtest (the decision at bar t sees bars <= t only).
	Lookahead string `json:"lookahead_check,omitempty"`
	// Backtest sums up a backtest over the last year of the series (or
	// what the store holds), run with the deployment's capital, the
	// venue's fee and slippage, and its allowance.
	Backtest *BacktestSummary `json:"backtest,omitempty"`
}

// BacktestSummary is the preview's backtest: its range, figures (ratios;
// null when undefined, as in a backtest's result) and the breaker that
// paused it, if one tripped; Error says why it could not run.
type BacktestSummary struct {
	From        string            `json:"from"`
	To          string            `json:"to,omitempty"`
	TotalReturn *float64          `json:"total_return"`
	Sharpe      *float64          `json:"sharpe"`
	MaxDrawdown *float64          `json:"max_drawdown"`
	Trades      int               `json:"trades"`
	Breaker     *backtest.Breaker `json:"breaker,omitempty"`
	Error       string            `json:"error,omitempty"`
}

// Proposal is an order a propose-mode deployment wants, waiting for an
// operator's approval until the next bar closes.
type Proposal struct {
	ClientOrderID string          `json:"client_order_id"`
	Bar           time.Time       `json:"bar"`
	Side          string          `json:"side"`
	Quantity      decimal.Decimal `json:"quantity"`
	Target        float64         `json:"target"`
	Symbol        string          `json:"symbol,omitempty"`
	Venue         string          `json:"venue,omitempty"`
	// BarClose is the price it was sized at: the close of its bar. An
	// approval re-sizes it at the venue's price then, within the
	// allowance (or refuses it).
	BarClose decimal.Decimal `json:"bar_close,omitzero"`
	Type     string          `json:"type,omitempty"` // "" market, or bracket
	Qty      bool            `json:"qty,omitempty"`  // an on_bar strategy's quantity, not a target
}

// IDPrefix starts every deployment id.
const IDPrefix = "dep-"

// Limits of what a deployment may ask.
const (
	// MaxEvalBars bounds a deployment's warm-up: each evaluation sends a
	// worker the bar decided at and the warm-up bars before it.
	MaxEvalBars = 20000
	// DefaultWarmup is the history evaluated before the first live bar
	// when the strategy states a shorter warm-up.
	DefaultWarmup = 500
)

// Error is a deployment request refused, with the fix in its message.
type Error struct {
	Kind Kind
	Msg  string
}

// Kind is the wire word of an Error.
type Kind string

// The error kinds.
const (
	KindBadRequest Kind = "bad_request"
	KindNotFound   Kind = "not_found"
	KindForbidden  Kind = "forbidden"
	KindConflict   Kind = "conflict"
	KindInternal   Kind = "internal"
)

func (e *Error) Error() string { return e.Msg }

func errorf(k Kind, format string, a ...any) *Error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, a...)}
}

// validMode checks a mode, defaulting it.
func validMode(m Mode) (Mode, error) {
	switch m {
	case "":
		return ModePropose, nil
	case ModePropose, ModeAuto:
		return m, nil
	}
	return m, errorf(KindBadRequest, "mode %q is not one of %s, %s", m, ModePropose, ModeAuto)
}

// checkAllowance names the first limit out of range, as the backtest's
// --allowance does.
func checkAllowance(a *Allowance) error {
	if err := a.Check(); err != nil {
		return errorf(KindBadRequest, "%v", err)
	}
	return nil
}

// clean trims a deployment id read from a path.
func cleanID(id string) (string, error) {
	if !strings.HasPrefix(id, IDPrefix) || len(id) > 64 || strings.ContainsAny(id, "/\\ .") {
		return "", errorf(KindBadRequest, "%q is not a deployment id: they start with %s (see wicket node deployments)", short(id), IDPrefix)
	}
	return id, nil
}

func short(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// Knobs renders knob values for people: name=value pairs sorted by name
// ("fast=5, slow=20"), strings quoted; "defaults" when none is set.
func Knobs(params map[string]any) string {
	if len(params) == 0 {
		return "defaults"
	}
	names := make([]string, 0, len(params))
	for k := range params {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		v := params[k]
		switch x := v.(type) {
		case string:
			v = strconv.Quote(x)
		case float64:
			v = strconv.FormatFloat(x, 'f', -1, 64)
		}
		parts[i] = fmt.Sprintf("%s=%v", k, v)
	}
	return strings.Join(parts, ", ")
}
