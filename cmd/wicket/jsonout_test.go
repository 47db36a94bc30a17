package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"wicket/internal/project"
	"wicket/node/nodetest"
)

// What --json each command owes, decided once here from the command tree:
// jsonYes commands print data and take --json; jsonLater ones print data
// but their files are being reworked elsewhere, so their --json is still
// owed (the test fails once one has it, to move it to jsonYes); jsonNo
// ones print no data (an action's one line, a server, a script), or print
// JSON or CSV by nature.
type jsonDuty int

const (
	jsonYes jsonDuty = iota
	jsonLater
	jsonNo
)

// jsonCase is one leaf command's duty. run, for a jsonYes command, is its
// arguments after the command's path in the fixture project of
// TestEveryDataCommandPrintsJSON ($NODE is a node's address); nil checks
// only the flag, and why names the test that runs it.
type jsonCase struct {
	duty  jsonDuty
	run   []string
	lines bool   // JSON Lines (a stream of entries) rather than one document
	why   string // jsonNo, jsonLater or a flag-only check: why
}

// jsonCommands lists every leaf command of the tree (TestJSONTableCoversTheTree keeps it whole).
var jsonCommands = map[string]jsonCase{
	"approve":                  {duty: jsonYes, run: []string{"--addr", "$NODE"}},
	"backtest":                 {duty: jsonYes, run: []string{"--local", "x", "--series", "BTC-USD@1d"}},
	"callers add":              {duty: jsonYes, run: []string{"ci-bot", "--profile", "offline"}},
	"callers grants":           {duty: jsonYes, run: []string{}},
	"callers list":             {duty: jsonYes, run: []string{}},
	"callers remove":           {duty: jsonNo, why: "an action: one line"},
	"callers revoke":           {duty: jsonNo, why: "an action: one line"},
	"completion":               {duty: jsonNo, why: "prints a shell script"},
	"data delete":              {duty: jsonYes, run: []string{"ACME@1d", "--yes"}},
	"data export":              {duty: jsonNo, why: "prints CSV by nature"},
	"data fetch":               {duty: jsonYes, why: "needs a provider: data_fetch.txtar, data_fetch_funding.txtar"},
	"data import":              {duty: jsonYes, run: []string{"$WORK/acme.csv", "--series", "ACME@1d", "--replace"}},
	"data list":                {duty: jsonYes, run: []string{}},
	"data record":              {duty: jsonNo, why: "a long-running recorder; logs on stderr"},
	"data seed-demo":           {duty: jsonYes, run: []string{}},
	"data serve":               {duty: jsonNo, why: "a server"},
	"demo":                     {duty: jsonNo, why: "a walkthrough for people"},
	"deploy":                   {duty: jsonYes, why: "needs a node running deployments: TestDeployCLI"},
	"doctor":                   {duty: jsonYes, run: []string{"--addr", "$NODE"}},
	"indicators":               {duty: jsonYes, run: []string{}},
	"init":                     {duty: jsonNo, why: "an action: names the files it made"},
	"mcp":                      {duty: jsonNo, why: "a server (stdout is the protocol)"},
	"mcp-config":               {duty: jsonNo, why: "prints JSON by nature"},
	"node approve-proposal":    {duty: jsonNo, why: "an operator's act at a terminal"},
	"node arm":                 {duty: jsonNo, why: "an operator's act at a terminal"},
	"node clear-breaker":       {duty: jsonNo, why: "an operator's act at a terminal"},
	"node deployments":         {duty: jsonYes, why: "needs a node running deployments: TestDeployCLI"},
	"node disarm":              {duty: jsonYes, why: "needs a real venue: TestNodeArmNeedsAnOperatorAtATerminal"},
	"node resume":              {duty: jsonNo, why: "an operator's act at a terminal"},
	"node rotate-operator-key": {duty: jsonNo, why: "an operator's act at a terminal"},
	"node heartbeat":           {duty: jsonNo, why: "an operator's act at a terminal"},
	"node kill":                {duty: jsonNo, why: "an operator's act at a terminal"},
	"node reset-throttle":      {duty: jsonNo, why: "an operator's act at a terminal"},
	"node resume-trading":      {duty: jsonNo, why: "an operator's act at a terminal"},
	"node risk":                {duty: jsonYes, why: "needs a node with risk limits: TestNodeRiskShowsEveryLimit"},
	"node statement":           {duty: jsonYes, why: "needs a node with a venue's history: TestStatementPrintsEachMismatchAndExits3"},
	"node serve":               {duty: jsonNo, why: "a server"},
	"node stop-deployment":     {duty: jsonYes, why: "needs a node running deployments: TestDeployCLI"},
	"cpcv":                     {duty: jsonYes, why: "a purged cross-validation of a grid: TestCPCVCommand"},
	"optimize":                 {duty: jsonYes, run: []string{"x", "--series", "BTC-USD@1d", "--grid", "fast=5:20", "--trials", "4"}},
	"research export":          {duty: jsonNo, why: "prints JSON by nature"},
	"research ledger":          {duty: jsonYes, run: []string{}, lines: true},
	"research plan":            {duty: jsonYes, why: "seals a plan first: TestResearchPlanSealedAndForgeryCaught"},
	"research verdict":         {duty: jsonYes, why: "needs a sealed plan's trials: TestPlanBudgetAcrossCLIAndMCP"},
	"research verify":          {duty: jsonYes, run: []string{}},
	"secrets list":             {duty: jsonYes, run: []string{}},
	"secrets path":             {duty: jsonNo, why: "prints one path"},
	"strategy new":             {duty: jsonNo, why: "an action: names the file it made"},
	"strategy params":          {duty: jsonYes, run: []string{"x"}},
	"strategy templates":       {duty: jsonYes, run: []string{}},
	"strategy validate":        {duty: jsonYes, run: []string{"x"}},
	"sweep":                    {duty: jsonYes, run: []string{"x", "--series", "BTC-USD@1d", "--grid", "fast=5,10"}},
	"trace follow":             {duty: jsonYes, why: "runs until interrupted: TestTraceFollow*"},
	"trace list":               {duty: jsonYes, run: []string{}, lines: true},
	"trace show":               {duty: jsonYes, why: "needs a traced call: trace_show.txtar"},
	"trace stats":              {duty: jsonYes, run: []string{}},
	"trade":                    {duty: jsonNo, why: "an interactive REPL"},
	"trade cancel_order":       {duty: jsonYes, run: []string{"order_id=ord-00000001", "--node", "$NODE"}},         // previewed, not sent
	"trade flatten":            {duty: jsonYes, run: []string{"ETH-USD", "--node", "$NODE"}},                       // previewed, not sent
	"trade market_exit":        {duty: jsonYes, run: []string{"--node", "$NODE"}},                                  // previewed, not sent
	"trade mass_cancel":        {duty: jsonYes, run: []string{"--node", "$NODE"}},                                  // previewed, not sent
	"trade modify":             {duty: jsonYes, run: []string{"ord-00000001", "--price", "98", "--node", "$NODE"}}, // previewed, not sent
	"trade set_trading_state":  {duty: jsonYes, run: []string{"halted", "--node", "$NODE"}},                        // previewed, not sent
	"trade snapshot":           {duty: jsonYes, run: []string{"--node", "$NODE"}},
	"trade submit_order":       {duty: jsonYes, run: []string{"buy", "0.5", "BTC-USD", "limit", "99", "--node", "$NODE"}}, // previewed, not sent
	"trade ticket":             {duty: jsonYes, why: "needs a sent command's ticket: trade_oneshot.txtar"},
	"walk-forward":             {duty: jsonYes, run: []string{"x", "--series", "BTC-USD@1d", "--grid", "fast=5,10"}},
	"worker":                   {duty: jsonNo, why: "a research cluster worker"},
	"__worker":                 {duty: jsonNo, why: "wicket's own strategy worker"},
}

// leafCommands walks the command tree: each command with no subcommands,
// or with an action of its own, by its path.
func leafCommands() map[string]*cli.Command {
	out := map[string]*cli.Command{}
	var walk func(path []string, cmds []*cli.Command)
	walk = func(path []string, cmds []*cli.Command) {
		for _, c := range cmds {
			p := append(append([]string{}, path...), c.Name)
			if len(c.Subcommands) == 0 || hasFlag(c, "json") || c.Name == "trade" {
				out[strings.Join(p, " ")] = c
			}
			walk(p, c.Subcommands)
		}
	}
	walk(nil, newApp(nil, &bytes.Buffer{}, &bytes.Buffer{}).Commands)
	return out
}

func hasFlag(c *cli.Command, name string) bool {
	for _, f := range c.Flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}

// takesJSON: the command has a --json flag, or reads its own line (a
// trade verb: trade.ParseOneShot reads the flags among the fields) and
// names --json in its usage; the run in jsonCommands shows it works.
func takesJSON(c *cli.Command) bool {
	return hasFlag(c, "json") || (c.SkipFlagParsing && strings.Contains(c.ArgsUsage, "[--json]"))
}

// TestJSONTableCoversTheTree: every leaf command has its --json duty
// decided in jsonCommands, every jsonYes one has the flag, and a jsonLater
// one that gained it is to be moved.
func TestJSONTableCoversTheTree(t *testing.T) {
	leaves := leafCommands()
	var names []string
	for name := range leaves {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		c := leaves[name]
		jc, ok := jsonCommands[name]
		switch {
		case !ok:
			t.Errorf("wicket %s: decide its --json duty in jsonCommands (jsonout_test.go)", name)
		case jc.duty == jsonYes && !takesJSON(c):
			t.Errorf("wicket %s prints data but has no --json flag", name)
		case jc.duty == jsonLater && takesJSON(c):
			t.Errorf("wicket %s has --json now: make it jsonYes with a run in jsonCommands", name)
		case jc.duty != jsonYes && jc.why == "":
			t.Errorf("wicket %s: say why it has no --json", name)
		}
	}
	for name := range jsonCommands {
		if leaves[name] == nil {
			t.Errorf("jsonCommands names %q, which is no command", name)
		}
	}
}

// TestEveryDataCommandPrintsJSON runs each jsonYes command that has a run
// in a project with demo data, a strategy and a research ledger, next to a
// real node, and checks that stdout is valid JSON (or JSON Lines).
func TestEveryDataCommandPrintsJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the wicket binary for every data command")
	}
	n := nodetest.NewServer(t)
	t.Setenv(project.KeyObserve, n.ObserveKey)
	t.Setenv(project.KeyControl, n.ControlKey)
	dir := t.TempDir()
	if _, err := project.Init(dir, rand.Reader); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	csv := "time,open,high,low,close,volume\n2024-01-02,1,2,0.5,1.5,10\n2024-01-03,1.5,2,1,1.8,12\n"
	if err := os.WriteFile(filepath.Join(work, "acme.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, setup := range [][]string{
		{"data", "seed-demo"},
		{"data", "import", filepath.Join(work, "acme.csv"), "--series", "ACME@1d"}, // for data delete, which sorts first
		{"strategy", "new", "x", "--from", "sma_cross"},
		{"backtest", "--local", "x", "--series", "BTC-USD@1d"}, // a research ledger
	} {
		if code, _, stderr := wicketIn(t, dir, setup...); code != 0 {
			t.Fatalf("%v: exit %d: %s", setup, code, stderr)
		}
	}
	trace := filepath.Join(dir, "settings", "state", "agent") // a traced history for the trace commands
	if err := os.MkdirAll(trace, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"2026-04.jsonl", "2026-05.jsonl"} {
		b, err := os.ReadFile(filepath.Join("../../testdata/trace/golden", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(trace, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	subst := strings.NewReplacer("$NODE", n.Addr, "$WORK", work)
	var names []string
	for name, jc := range jsonCommands {
		if jc.duty == jsonYes && jc.run != nil {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		jc := jsonCommands[name]
		args := strings.Fields(name)
		for _, a := range jc.run {
			args = append(args, subst.Replace(a))
		}
		args = append(args, "--json")
		code, stdout, stderr := wicketIn(t, dir, args...)
		if code != 0 {
			t.Errorf("wicket %s: exit %d: %s", strings.Join(args, " "), code, stderr)
			continue
		}
		if err := validJSON(stdout, jc.lines); err != nil {
			t.Errorf("wicket %s: stdout is not JSON: %v\n%s", strings.Join(args, " "), err, stdout)
		}
	}
	t.Logf("%d commands ran with --json", len(names))
}

// validJSON checks that s is one JSON document, or with lines, JSON Lines
// of at least one entry.
func validJSON(s string, lines bool) error {
	if !lines {
		var v any
		dec := json.NewDecoder(strings.NewReader(s))
		if err := dec.Decode(&v); err != nil {
			return err
		}
		if dec.More() {
			return errString("more than one JSON document")
		}
		return nil
	}
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	count := 0
	for sc.Scan() {
		if !json.Valid(sc.Bytes()) {
			return errString("a line is not JSON: " + sc.Text())
		}
		count++
	}
	if count == 0 {
		return errString("no entries")
	}
	return sc.Err()
}

type errString string

func (e errString) Error() string { return string(e) }

// decodeJSON reads one command's --json output as T.
func decodeJSON[T any](s string) (T, error) {
	var v T
	err := json.Unmarshal([]byte(s), &v)
	return v, err
}
