package project

import (
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
)

// Approval modes: who must agree before a confirmed write is sent.
const (
	ApprovalNone     = "none"     // the preview token is enough (the default)
	ApprovalElicit   = "elicit"   // the client asks its user (MCP elicitation)
	ApprovalOperator = "operator" // an operator at a terminal (wicket approve)
)

// ApprovalModes lists the valid approval modes.
var ApprovalModes = []string{ApprovalNone, ApprovalElicit, ApprovalOperator}

// AgentConfig is the [agent] table: the defaults of `wicket mcp`'s
// --approval and session budgets (the flags override them). A zero budget
// is no limit.
type AgentConfig struct {
	Approval           string          `toml:"approval"`
	MaxWrites          int             `toml:"max_writes"`
	MaxNotional        decimal.Decimal `toml:"max_notional"`
	MaxWritesPerMinute int             `toml:"max_writes_per_minute"`
}

// ValidApproval checks an approval mode, naming the valid ones.
func ValidApproval(mode string) error {
	for _, m := range ApprovalModes {
		if mode == m {
			return nil
		}
	}
	return fmt.Errorf("approval mode %q is not valid (valid: %s)", mode, strings.Join(ApprovalModes, ", "))
}

func (a *AgentConfig) validate() error {
	if a.Approval == "" {
		a.Approval = ApprovalNone
	}
	if err := ValidApproval(a.Approval); err != nil {
		return fmt.Errorf("agent.approval: %w", err)
	}
	if a.MaxWrites < 0 || a.MaxWritesPerMinute < 0 || a.MaxNotional.IsNegative() {
		return fmt.Errorf("agent.max_writes, agent.max_notional and agent.max_writes_per_minute must not be negative (0 means no limit)")
	}
	return nil
}
