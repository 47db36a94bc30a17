package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// prompt is one prompt template; body renders it for the access set.
type prompt struct {
	name, title, description string
	args                     []string // optional arguments, as descriptions "name: what"
	body                     func(s *Server, a map[string]string) string
}

var prompts = []prompt{
	{
		name:        "author_strategy",
		title:       "Author a strategy",
		description: "Write a new Starlark strategy from an idea, starting from a template.",
		args:        []string{"idea: what the strategy should do", "template: a built-in template to start from (list_templates names them)"},
		body: func(s *Server, a map[string]string) string {
			start := "call list_templates to find the closest template and read its source"
			if t := strings.TrimSpace(a["template"]); t != "" {
				start = fmt.Sprintf("call list_templates with name %q and start from its source", t)
			}
			return "Write a wicket strategy for this idea: " + orDefault(a["idea"], "(ask the user for the idea)") + "\n" +
				"Steps: " + start + "; call list_indicators for the " +
				"indicator families you need; write the strategy with its knobs declared by param.*; call validate_strategy " +
				"with the source until it reports no problems; then call discover_params to show the knobs."
		},
	},
	{
		name:        "research_strategy",
		title:       "Research a strategy",
		description: "Backtest a strategy, sweep its knobs and check the winner out of sample.",
		args:        []string{"strategy: a strategy name in the project", "series: SYMBOL@GRANULARITY"},
		body: func(s *Server, a map[string]string) string {
			return fmt.Sprintf("Research the strategy %s on %s. Call list_series to confirm the data exists; run_backtest with "+
				"default knobs; run_sweep over a modest grid (use estimate: true first when the grid is large) and read the "+
				"deflated Sharpe ratio (over this sweep and over every trial of the strategy in the research ledger) and, for 16 or more "+
				"combinations, the probability of backtest overfitting before trusting the winner; then run_walk_forward with the same grid and report the "+
				"walk-forward efficiency. Say plainly when the evidence is weak.",
				orDefault(a["strategy"], "(ask which strategy)"), orDefault(a["series"], "(ask which series)"))
		},
	},
	{
		name:        "place_order",
		title:       "Place an order",
		description: "Walk through an order on the node, step by step.",
		args:        []string{"intent: what the user wants to do"},
		body: func(s *Server, a map[string]string) string {
			writes := servedWrites(s.reg, s.Access())
			return "The user wants: " + orDefault(a["intent"], "(ask the user)") + "\n" +
				"First call node_snapshot to see the trading state, cash, positions and marks.\n" + gateSteps(writes)
		},
	},
	{
		name:        "incident_review",
		title:       "Review an incident",
		description: "Review what happened in a session: what was attempted, refused and executed.",
		body: func(s *Server, a map[string]string) string {
			return "Help the operator review an incident. Read wicket://session for this server's profile and tools, and " +
				"node_snapshot for the node's state and recent events. The full transcript of tool calls is reviewed by the " +
				"operator with `wicket trace list`, `wicket trace show TOKEN` and `wicket trace stats`; those are operator " +
				"commands, not tools: ask the operator to run them and share the output."
		},
	},
}

// gateSteps renders the two-call gate instructions from the admitted
// write set.
func gateSteps(writes []string) string {
	if len(writes) == 0 {
		return "No order-changing tool is served here, so nothing can be sent from this session; describe the command " +
			"the user would need and leave it to the operator."
	}
	return "Writes served here: " + strings.Join(writes, ", ") + ". Each is two calls: first call the tool without confirm " +
		"to get a preview (the resolved command, guardrail checks, the node's dry-run verdict and a preview_token); show it " +
		"to the user; only after the user agrees, call the same tool with the same arguments plus confirm: true (the JSON " +
		"boolean) and that preview_token within 60 seconds. Report the outcome exactly as returned: accepted, rejected " +
		"(with the node's reason) or pending (check node_snapshot; do not retry)."
}

// writeBanner opens every prompt when no write tool is admitted.
func (s *Server) writeBanner() string {
	if len(servedWrites(s.reg, s.Access())) > 0 {
		return ""
	}
	return fmt.Sprintf("Note: this server (profile %s) serves no tool that changes orders or trading state; "+
		"nothing in this session can reach the market.\n\n", s.Access().Profile)
}

func (s *Server) addPrompts() {
	for _, p := range prompts {
		p := p
		opts := []mcp.PromptOption{mcp.WithPromptTitle(p.title), mcp.WithPromptDescription(p.description)}
		for _, a := range p.args {
			name, desc, _ := strings.Cut(a, ": ")
			opts = append(opts, mcp.WithArgument(name, mcp.ArgumentDescription(desc)))
		}
		s.mcp.AddPrompt(mcp.NewPrompt(p.name, opts...), func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			text := s.writeBanner() + p.body(s, req.Params.Arguments)
			return mcp.NewGetPromptResult(p.description, []mcp.PromptMessage{
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(text)),
			}), nil
		})
	}
}

func orDefault(v, def string) string {
	if strings.TrimSpace(v) == "" {
		return def
	}
	return v
}
