package agent

import "strings"

// The instruction sentences, fixed per build. Instructions are assembled
// from these constants only, so a test can check each clause is present or
// dropped exactly as the profile says.
const (
	instrSurface = "This server is one surface of wicket, a larger system for systematic trading; " +
		"some capabilities live outside it and only the operator runs them."
	instrOutsideData = "Bars reach the history store through the operator's commands `wicket data seed-demo`, `wicket data import FILE.csv --series S`, " +
		"`wicket data fetch SERIES` (real bars from Binance or Alpaca) and `wicket data record SERIES` (a live tape)."
	instrOutsideNode     = "A trading node is started by the operator with `wicket node serve`."
	instrOutsideBacktest = "The operator can run a backtest without this server with `wicket backtest --local`."
	instrOutsideKeys     = "Node keys are managed by the operator: `wicket secrets list` and `wicket secrets path` show them."
	instrNoneIsTool      = "None of these operator commands is a tool of this server, and no tool reads, writes or arms a credential."
	instrNoInvent        = "Rule: never invent a tool name; call only the tools this server lists."
	instrNoClaim         = "Rule: never report an operator-side command as something you ran; ask the operator to run it."
	// Conditional: only when list_series is served.
	instrSeries = "To check that data arrived, call list_series."
	// Conditional: only when a gated write tool is served.
	instrGate = "An order write without the preview_token issued for that exact command returns a preview and sends nothing; " +
		"to execute, call the same tool again with the same arguments plus confirm: true (the JSON boolean) and that preview_token within 60 seconds."
	// Conditional: only when a gated write tool is served (the read-only
	// fence forbids the word otherwise).
	instrArming = "A real venue (kind alpaca or binance; environment live is real money) starts disarmed and refuses writes until an operator " +
		"arms it at a terminal with `wicket node arm VENUE`; no tool, prompt or resource of this server can arm a venue, so report a " +
		"disarmed refusal to the operator as it is. node_snapshot shows each venue's environment and armed state."
)

// instructions assembles the initialize instructions for an access set.
func instructions(reg *registry, a *ToolAccess) string {
	parts := []string{
		instrSurface, instrOutsideData, instrOutsideNode, instrOutsideBacktest, instrOutsideKeys,
		instrNoneIsTool, instrNoInvent, instrNoClaim,
	}
	if a.Served("list_series") {
		parts = append(parts, instrSeries)
	}
	if len(servedWrites(reg, a)) > 0 {
		parts = append(parts, instrGate, instrArming)
	}
	return strings.Join(parts, "\n")
}

// servedWrites lists the served tools on the write roster.
func servedWrites(reg *registry, a *ToolAccess) []string {
	var out []string
	for _, n := range a.ServedNames() {
		if reg.isWriteTool(n) {
			out = append(out, n)
		}
	}
	return out
}
