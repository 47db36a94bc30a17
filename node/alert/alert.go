// Package alert tells an operator, away from the desk, what the node did
// that needs a person: a breaker trip, a kill, a dead man's switch, a lost
// venue stream, a statement mismatch, a waiting approval. It is told
// about every audit entry the node commits, maps each to an alert through
// one table (Kinds), and delivers each alert once to its sinks: the node
// log, the recent list the MCP listen streams read, and a signed HTTP
// webhook.
//
// alert never blocks the node's fold (a full queue drops with a log line),
// never delivers one alert id twice to a sink, never logs or sends its
// HMAC key, and never decides or sends anything itself: an alert only
// tells.
package alert

import (
	"fmt"
	"strings"
	"time"

	"wicket/node"
)

// Kind names what an alert is about.
type Kind string

// Severity is how soon a person should look.
type Severity string

// Severities, most urgent first.
const (
	Critical Severity = "critical"
	Warning  Severity = "warning"
	Notice   Severity = "notice"
)

// The kinds of alert.
const (
	BreakerTrip       Kind = "breaker_trip"
	Kill              Kind = "kill"
	ResumeTrading     Kind = "resume_trading"
	HeartbeatLapse    Kind = "heartbeat_lapse"
	StreamLost        Kind = "stream_lost"
	StatementMismatch Kind = "statement_mismatch"
	ApprovalWaiting   Kind = "approval_waiting"
	EnvelopeBreach    Kind = "agent_envelope"
	Override          Kind = "override"
)

// Rule is one row of the table: an alert kind, its severity, what it
// says first, and the audit entry names that raise it (an arming entry's
// action, else the command's verb). A kind with no names is raised
// directly (Raise): a stream loss, a waiting approval.
type Rule struct {
	Kind     Kind
	Severity Severity
	Title    string
	Names    []string
}

// Kinds is the table, declared once: every alert the node sends, and the
// audit entry names that raise it (the risk controls' entries of
// node/risk.go among them).
var Kinds = []Rule{
	{BreakerTrip, Critical, "venue breaker tripped", []string{string(node.ArmingBreaker)}},
	{Kill, Critical, "kill switch: trading halted", []string{string(node.ArmingKill)}},
	{ResumeTrading, Warning, "trading resumed after a kill", []string{string(node.ArmingResumeTrading)}},
	{HeartbeatLapse, Critical, "dead man's switch: no operator heartbeat", []string{string(node.ArmingSilence)}},
	{StreamLost, Warning, "venue stream lost", []string{string(node.ArmingStreamLoss)}},
	{StatementMismatch, Warning, "daily statement does not match the venue", []string{StatementAction}},
	{ApprovalWaiting, Notice, "a command waits for approval", nil},
	{EnvelopeBreach, Critical, "the agent's capital envelope is breached", []string{string(node.ArmingEnvelope)}},
	{Override, Warning, "an operator lifted a pre-trade check once", []string{string(node.ArmingOverride), string(node.ArmingOverrideUsed)}},
}

// StatementAction is the arming action of the audit entry the node
// records for a daily statement with a mismatch.
const StatementAction = "statement"

// RuleOf is kind's row of the table.
func RuleOf(kind Kind) (Rule, bool) {
	for _, r := range Kinds {
		if r.Kind == kind {
			return r, true
		}
	}
	return Rule{}, false
}

// byName looks an audit entry name up in the table.
func byName(name string) (Rule, bool) {
	for _, r := range Kinds {
		for _, n := range r.Names {
			if strings.EqualFold(n, name) {
				return r, true
			}
		}
	}
	return Rule{}, false
}

// Alert is one alert as every sink receives it (the webhook's JSON).
type Alert = node.Alert

// New is an alert of kind, with the table's severity and title.
func New(kind Kind, id string, at time.Time, venue, text string) (Alert, error) {
	r, ok := RuleOf(kind)
	if !ok {
		return Alert{}, fmt.Errorf("alert: no kind %q in the table", kind)
	}
	return Alert{ID: id, Kind: string(kind), Severity: string(r.Severity), Time: at.UTC(), Title: r.Title, Text: text, Venue: venue}, nil
}

// FromAudit is the alert an audit entry raises, if the table names it.
// Its id is the entry's ticket, so the same entry told twice is one alert.
// A refused command raises none: it changed nothing.
func FromAudit(e node.AuditEntry) (Alert, bool) {
	if e.Outcome.Status == node.Rejected {
		return Alert{}, false
	}
	name, venue, text := string(e.Command.Verb), e.Command.Venue, e.Reason
	if e.Arming != nil {
		name, venue = string(e.Arming.Action), e.Arming.Venue
		if e.Arming.Note != "" {
			text = e.Arming.Note
		}
	}
	if name == "" {
		return Alert{}, false
	}
	r, ok := byName(name)
	if !ok {
		return Alert{}, false
	}
	if text == "" {
		text = e.Outcome.Detail
	}
	if text == "" {
		text = e.Outcome.Reason
	}
	if text == "" {
		text = r.Title
	}
	if venue != "" {
		text = "venue " + venue + ": " + text
	}
	return Alert{ID: "audit-" + e.Ticket, Kind: string(r.Kind), Severity: string(r.Severity), Time: e.Time.UTC(), Title: r.Title,
		Text: text, Venue: venue, Ticket: e.Ticket}, true
}
