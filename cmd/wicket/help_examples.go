package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"
)

// helpExample is one line of a command's --help EXAMPLES: a command line
// and what it does.
type helpExample struct{ line, does string }

// helpExamples are the --help examples of the most used commands, by
// command path; addHelpExamples appends them to each command's
// description. TestHelpExamples checks that every flag an example uses is
// the command's.
var helpExamples = map[string][]helpExample{
	"init": {
		{"wicket init ~/desk", "a new project in ~/desk, with fresh node keys and an operator key"},
		{"wicket init --operator-key ~/desk", "add the operator key pair to a project made before it had one"},
	},
	"data import": {
		{"wicket data import btc.csv --series BTC-USD@1h", "a CSV in any known layout, detected by its header"},
		{"wicket data import spy.csv --series SPY@1d --format yahoo --adjusted --replace", "Yahoo's adjusted closes, over the stored series"},
		{"wicket data import es.csv --series ES@1m --tz America/Chicago", "times written without a zone are Chicago's"},
	},
	"data delete": {
		{"wicket data delete BTC-USD@1h", "asks: delete N bars of BTC-USD@1h? [y/N]"},
		{"wicket data delete BTC-USD@1h --yes", "from a script: deletes without asking"},
	},
	"sweep": {
		{"wicket sweep trend --series BTC-USD@1h --grid fast=5:20:5 --grid slow=20:60:10", "20 combinations, ranked by Sharpe"},
		{"wicket sweep trend --series BTC-USD@1h --grid fast=5:20 --estimate", "how many combinations, and how long"},
		{"wicket sweep trend --series BTC-USD@1d --grid fast=5,10,20 --rank-by calmar --top 3 --json", "the whole result for a script"},
	},
	"walk-forward": {
		{"wicket walk-forward trend --series BTC-USD@1h --grid fast=5:20:5 --grid slow=20:60:10 --windows 5", "five rolling windows"},
		{"wicket walk-forward trend --series BTC-USD@1d --grid fast=5:20:5 --in-sample 720d --out-of-sample 180d --anchored", "windows by length, in-sample from the start"},
	},
	"optimize": {
		{"wicket optimize trend --series BTC-USD@1h --grid fast=2:50 --grid slow=20:200 --trials 200 --method tpe", "200 trials chosen by TPE"},
		{"wicket optimize trend --series BTC-USD@1h --grid fast=2:50 --grid slow=20:200 --resume RUN --trials 100", "100 more trials of an earlier run"},
	},
	"mcp": {
		{"wicket mcp --profile read-only --check", "what a read-only agent is served and refused"},
		{"wicket mcp --profile full --node 127.0.0.1:7879 --trace", "the whole surface over stdio, every call traced"},
		{"wicket mcp --http 127.0.0.1:8765 --approval operator", "Streamable HTTP; each confirmed write waits for `wicket approve`"},
	},
	"mcp-config": {
		{"wicket mcp-config", "the mcpServers block for Claude Desktop or Claude Code"},
		{"wicket mcp-config --profile read-only --deny-tool run_sweep", "a read-only agent without sweeps"},
		{"wicket mcp-config --http 127.0.0.1:8765", "a client block for an HTTP server"},
	},
	"node serve": {
		{"wicket node serve --log settings/state/node.log &", "the paper node at wicket.toml's [node] address, logging to a file"},
		{"wicket node serve --replay BTC-USD@1h --tick 100ms", "marks replayed from stored bars, fast"},
		{"wicket node serve --replay BTC-USD@1m --from 2026-03-01 --speed max", "a forward test: the node on the recorded tape's clock"},
		{"wicket node serve --replay BTC-USD@1m,ETH-USD@1m,SOL-USD@1m --from 2026-03-01", "a portfolio's forward test: its universe's tapes on one calendar, a 1m bar a second"},
		{"wicket node serve --allow-live", "real-money venues may be armed (they start disarmed)"},
	},
	"strategy new": {
		{"wicket strategy new trend --from sma_cross", "strategies/trend.star from a template (wicket strategy templates lists them)"},
	},
	"strategy validate": {
		{"wicket strategy validate trend", "syntax, entry points and a smoke run"},
		{"wicket strategy validate strategies/trend.star --json", "a file by path, for a script"},
	},
	"backtest": {
		{"wicket backtest --local trend --series BTC-USD@1h", "a summary table of one run over the stored bars"},
		{"wicket backtest --local trend --series BTC-USD@1d --param fast=10 --from 2023-01-01 --report trend.html", "one knob changed, since 2023, with the tear sheet as a page"},
		{"wicket backtest --local trend --series BTC-USD@1h --robustness --benchmark ETH-USD@1h --json", "the full report with Monte Carlo and a benchmark, for a script"},
		{"wicket backtest --local trend --series BTC-USD@1h --allowance max_daily_loss=200,max_orders_per_day=10", "under a deployment's limits: a breaker pauses the run"},
	},
	"deploy": {
		{"wicket deploy trend --series BTC-USD@1h --venue paper", "previews the deployment and asks (from a pipe: deploys nothing)"},
		{"wicket deploy trend --series BTC-USD@1h --venue paper --capital 5000 --max-daily-loss 250 --yes", "propose mode within an allowance, without asking"},
		{"wicket deploy trend --series BTC-USD@1h --venue bn --mode auto --max-order-notional 500 --yes", "auto mode: orders go out while the deployment and venue are armed"},
	},
	"trace show": {
		{"wicket trace show 4f1c9a2e", "one preview token's story: preview, confirm, outcome"},
		{"wicket trace show 4f1c9a2e --node 127.0.0.1:7879", "joined with the node's audit of what it executed"},
		{"wicket trace show 17 --session 01a2298d", "one call in full, by sequence number"},
		{"wicket trace show dep-01a2 --node 127.0.0.1:7879 --json", "a deployment's orders and the calls naming it, for a script"},
	},
	"trade submit_order": {
		{"wicket trade submit_order buy 0.5 BTC-USD limit 41000 --reason \"breakout retest\"", "previews a limit buy and sends nothing"},
		{"wicket trade submit_order sell 0.5 BTC-USD stop stop_price=39000 --yes", "previews it again and sends a stop, awaiting the outcome"},
		{"wicket trade submit_order buy 1 ETH-USD bracket stop_price=1900 take_profit=2300 --yes --json", "a market entry with both exits; preview and outcome as JSON"},
	},
	"trade modify": {
		{"wicket trade modify ord-00000001 price=40500", "previews a new limit price"},
		{"wicket trade modify client_order_id=wk-0192 quantity=0.25 --yes", "halves an order named by your id, and sends it"},
	},
	"trade cancel_order": {
		{"wicket trade cancel_order ord-00000001 --yes", "cancels one open order"},
		{"wicket trade cancel_order client_order_id=wk-0192 venue=bn --reason \"changed my mind\" --yes", "by your id, on venue bn, with a reason for the audit trail"},
	},
	"trade mass_cancel": {
		{"wicket trade mass_cancel", "previews cancelling every open order on the default venue"},
		{"wicket trade mass_cancel BTC-USD buy --yes", "only the BTC-USD buy orders"},
	},
	"trade flatten": {
		{"wicket trade flatten BTC-USD --reason \"stop out\" --yes", "closes one position at market; its open orders stay"},
		{"wicket trade flatten venue=bn --yes --json", "every position on venue bn; the outcome as JSON"},
	},
	"trade market_exit": {
		{"wicket trade market_exit", "previews cancelling every order and closing every position, on every venue"},
		{"wicket trade market_exit bn --reason \"end of day\" --yes", "the same on venue bn only"},
	},
	"trade set_trading_state": {
		{"wicket trade set_trading_state reduce_only --yes", "nothing that increases a position from now on"},
		{"wicket trade set_trading_state halted --reason drill --yes --node 127.0.0.1:7979", "halts another node: only cancels and this verb pass"},
	},
	"doctor": {
		{"wicket doctor", "every check, with the fix of each that is not ok"},
		{"wicket doctor --json | jq '.checks[] | select(.status != \"ok\")'", "what needs a look, for a script"},
		{"wicket doctor --addr 127.0.0.1:7979", "against a node elsewhere than wicket.toml says"},
	},
}

// printHelpExamples writes the examples of the command at path, for a
// command that prints its own help (a trade verb).
func printHelpExamples(w io.Writer, path string) {
	if ex := helpExamples[path]; len(ex) > 0 {
		fmt.Fprintf(w, "\n%s\n", examplesText(ex))
	}
}

// examplesText is the Examples: block of a command's help.
func examplesText(ex []helpExample) string {
	var b strings.Builder
	b.WriteString("Examples:")
	for _, e := range ex {
		b.WriteString("\n  " + e.line + "\n      " + e.does)
	}
	return b.String()
}

// addHelpExamples appends each command's examples to its description.
func addHelpExamples(cmds []*cli.Command) {
	var walk func(path []string, cmds []*cli.Command)
	walk = func(path []string, cmds []*cli.Command) {
		for _, c := range cmds {
			p := append(append([]string{}, path...), c.Name)
			if ex := helpExamples[strings.Join(p, " ")]; len(ex) > 0 {
				var b strings.Builder
				b.WriteString(c.Description)
				if c.Description != "" {
					b.WriteString("\n\n")
				}
				b.WriteString(examplesText(ex))
				c.Description = b.String()
			}
			walk(p, c.Subcommands)
		}
	}
	walk(nil, cmds)
}
