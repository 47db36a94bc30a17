package agent

import (
	"errors"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"wicket/gate"
	"wicket/internal/project"
	"wicket/node"
	"wicket/node/guardrail"
)

// Node is the agent's view of a trading node: node.Conn, the one interface
// both write surfaces use; *node.Client satisfies it.
type Node = node.Conn // the one interface both write surfaces use

// Backends are what the tools reach. A nil backend makes its tools answer
// with what the operator has to do, while the other tools keep working.
type Backends struct {
	Config project.Config // venues and guardrail limits (the client-side guardrail)
	// Project is the project the server works in; nil when there is none
	// (strategies by name and the embedded history store then fail).
	Project *project.Project
	// Strategies runs strategy code in worker processes.
	Strategies Strategies
	// Research runs backtests, sweeps and walk-forwards and lists series
	// and strategies: in-process or through the data service.
	Research Research
	// Ledger is the project's research ledger, read by research_history;
	// nil without a project.
	Ledger Ledger

	// Node is the node client; nil when no --node was given.
	Node Node
	// NodeErr, when set, is why the node tools cannot work although a node
	// was named (missing keys): they all answer with it.
	NodeErr error
}

var (
	errNoProject = errors.New("no wicket project: the operator creates one with `wicket init` and starts `wicket mcp` inside it (or with --project DIR)")
	errNoWorkers = errors.New("strategy workers are not available in this server")
)

// toolbox holds the backends the handlers close over.
type toolbox struct {
	Backends
	newID    func() string
	now      func() time.Time // the server's clock (Options.Now)
	previews *gate.PendingPreviews[pendingWrite]
	deploys  *deployGate // the deployment writes' previews (tools_deploy.go)
	guard    *guardrail.Guardrail
	venues   *venueKinds
	// rendered caches each tool's tools/list entry (its schemas are fixed
	// per build), so opening an HTTP session does not marshal them again;
	// nil renders every time.
	rendered *sync.Map
	loop     *writeLoop // budgets and approval (loop.go)
	runs     *runStore  // wicket://runs/{id} (runs.go)

	// sheets keeps the tear sheets of ui://wicket/report/{run} (report.go).
	sheets *sheetStore

	// owners are the orders each caller placed, shared by the sessions of
	// one HTTP server (owners.go); caller is this session's.
	owners *orderOwners
	caller string
}

// productionTools is the cache of the registry New builds.
var productionTools sync.Map // tool name → mcp.Tool

// render is spec's tools/list entry.
func (tb *toolbox) render(spec *toolSpec) mcp.Tool {
	if tb.rendered == nil {
		return spec.mcpTool()
	}
	if t, ok := tb.rendered.Load(spec.Name); ok {
		return t.(mcp.Tool)
	}
	t := spec.mcpTool()
	tb.rendered.Store(spec.Name, t)
	return t
}

// clock is the server's clock (Options.Now), or the wall clock for a
// toolbox built without one.
func (tb *toolbox) clock() time.Time {
	if tb.now == nil {
		return time.Now()
	}
	return tb.now()
}

// specs is the whole registry: every tool the server knows, in one place.
func (tb *toolbox) specs() []*toolSpec {
	var all []*toolSpec
	all = append(all, tb.authoringTools()...)
	all = append(all, tb.researchTools()...)
	all = append(all, tb.historyTools()...)
	all = append(all, tb.planTools()...) // tools_plan.go
	all = append(all, tb.nodeTools()...)
	all = append(all, tb.riskTools()...) // tools_risk.go
	all = append(all, tb.writeTools()...)
	all = append(all, tb.deployTools()...)
	return all
}
