package agent_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/shopspring/decimal"

	"wicket/deploy"
	"wicket/node"
	"wicket/node/nodetest"
	"wicket/strategy/worker"
	"wicket/trace"
)

// deploySchemaTools are the tools whose answers TestDeployThroughMCP
// validates against their outputSchema (they need a node running
// deployments, which TestOutputSchemasValidate's node does not).
var deploySchemaTools = []string{"deploy_strategy", "stop_deployment", "deployment_report"}

const deployFlipStar = `"""Long on up bars."""
def signals(bars):
    return {"long": bars.close > bars.open, "exit": bars.close < bars.open, "size": 0.5}
`

// deploymentsNode is a node running deployments (a real runner over a
// worker pool of the real binary and a store), and a project holding the
// strategy flip.
func deploymentsNode(t *testing.T) (*nodetest.Server, *deploy.Runner, string) {
	t.Helper()
	h := deploy.NewHandler()
	n := nodetest.NewServer(t, nodetest.WithDeployments(h))
	proj := newProject(t)
	if err := os.WriteFile(filepath.Join(proj, "strategies", "flip.star"), []byte(deployFlipStar), 0o644); err != nil {
		t.Fatal(err)
	}
	pool, err := worker.NewPool(worker.Config{Size: 1, Command: []string{wicketBin}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	store, err := deploy.OpenStore(filepath.Join(t.TempDir(), "deployments.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	r, err := deploy.New(context.Background(), deploy.Config{Project: n.Config, Store: store, Node: n.Client(), Strategies: pool,
		OperatorKey: n.OperatorKey.Public().(ed25519.PublicKey)})
	if err != nil {
		t.Fatal(err)
	}
	h.Attach(r)
	return n, r, proj
}

// TestDeployThroughMCP: deploy_strategy previews the node's check and
// creates nothing; the confirm with its token creates exactly one
// deployment; a replayed token and a token for other arguments send
// nothing; stop_deployment previews the state and stops it; the report,
// the snapshot and wicket://deployments/{id} answer; every answer
// validates against its tool's outputSchema.
func TestDeployThroughMCP(t *testing.T) {
	n, r, proj := deploymentsNode(t)
	traceDir := filepath.Join(t.TempDir(), "trace")
	s := startMCP(t, nodeEnv(n), proj, "--node", n.Addr, "--trace-dir", traceDir)
	schemas := outputSchemas(t, s)
	valid := func(tool string, res *mcp.CallToolResult) map[string]any {
		t.Helper()
		m := object(t, res)
		check(t, schemas[tool], tool, structured(t, res))
		return m
	}
	args := `"name":"flip","series":"BTC-USD@1m","venue":"paper","capital":"1000","allowance":{"max_orders_per_day":10,"max_order_notional":"250"}`

	prev := valid("deploy_strategy", s.call(t, "deploy_strategy", "{"+args+"}"))
	tok, _ := prev["preview_token"].(string)
	dep, _ := prev["deployment"].(map[string]any)
	allow, _ := dep["allowance"].(map[string]any)
	if prev["status"] != "preview" || tok == "" || dep["strategy"] != "flip.star" || dep["strategy_hash"] == "" || dep["venue"] != "paper" ||
		dep["mode"] != "propose" || allow["max_order_notional"] != "250" {
		t.Fatalf("preview = %v", prev)
	}
	if got := r.List(); len(got) != 0 {
		t.Fatalf("a preview created %d deployments", len(got))
	}

	// A token presented with other arguments is spent and sends nothing.
	other := s.call(t, "deploy_strategy", "{"+strings.Replace(args, `"1000"`, `"2000"`, 1)+`,"confirm":true,"preview_token":"`+tok+`"}`)
	if !other.IsError || !strings.Contains(text(other), "does not match") || len(r.List()) != 0 {
		t.Fatalf("mismatched confirm: %s (%d deployments)", text(other), len(r.List()))
	}
	prev = object(t, s.call(t, "deploy_strategy", "{"+args+"}"))
	tok, _ = prev["preview_token"].(string)
	confirm := "{" + args + `,"confirm":true,"preview_token":"` + tok + `"}`
	done := valid("deploy_strategy", s.call(t, "deploy_strategy", confirm))
	created, _ := done["deployment"].(map[string]any)
	id, _ := created["id"].(string)
	if done["status"] != "accepted" || !strings.HasPrefix(id, "dep-") || len(r.List()) != 1 || r.List()[0].ID != id {
		t.Fatalf("confirm = %v; node has %v", done, r.List())
	}
	replay := s.call(t, "deploy_strategy", confirm)
	if !replay.IsError || !strings.Contains(text(replay), "Nothing was sent") || len(r.List()) != 1 {
		t.Fatalf("replay: %s (%d deployments)", text(replay), len(r.List()))
	}

	snap := valid("node_snapshot", s.call(t, "node_snapshot", `{"events":0}`))
	rows, _ := snap["deployments"].([]any)
	if len(rows) != 1 {
		t.Fatalf("snapshot deployments = %v", snap["deployments"])
	}
	if row := rows[0].(map[string]any); row["id"] != id || row["strategy"] != "flip.star" || row["series"] != "BTC-USD@1m" ||
		row["venue"] != "paper" || row["mode"] != "propose" || row["state"] != "running" || row["source"] != nil {
		t.Fatalf("snapshot row = %v", row)
	}
	res, err := s.ReadResource(context.Background(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "wicket://deployments/" + id}})
	if err != nil || len(res.Contents) != 1 {
		t.Fatalf("read wicket://deployments/%s: %v", id, err)
	}
	var detail struct {
		Deployment deploy.Deployment `json:"deployment"`
	}
	if err := json.Unmarshal([]byte(res.Contents[0].(mcp.TextResourceContents).Text), &detail); err != nil || detail.Deployment.ID != id ||
		detail.Deployment.Allowance.MaxOrdersPerDay != 10 {
		t.Fatalf("resource: %v %+v", err, detail)
	}
	if _, err := s.ReadResource(context.Background(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "wicket://deployments/dep-none"}}); err == nil ||
		!strings.Contains(err.Error(), "no deployment") {
		t.Fatalf("unknown deployment: %v", err)
	}

	rep := valid("deployment_report", s.call(t, "deployment_report", `{"id":"`+id+`"}`))
	if body, _ := rep["report"].(map[string]any); body["deployment"] != id {
		t.Fatalf("report = %v", rep)
	}
	if res := s.call(t, "deployment_report", `{"id":"../etc"}`); !res.IsError {
		t.Fatalf("a bad id was read: %s", text(res))
	}

	stopArgs := `"id":"` + id + `"`
	sp := valid("stop_deployment", s.call(t, "stop_deployment", "{"+stopArgs+"}"))
	if d, _ := sp["deployment"].(map[string]any); sp["status"] != "preview" || d["state"] != "running" || r.List()[0].State != deploy.StateRunning {
		t.Fatalf("stop preview = %v", sp)
	}
	stopped := valid("stop_deployment", s.call(t, "stop_deployment", "{"+stopArgs+`,"confirm":true,"preview_token":"`+sp["preview_token"].(string)+`"}`))
	if d, _ := stopped["deployment"].(map[string]any); stopped["status"] != "accepted" || d["state"] != "stopped" || r.List()[0].State != deploy.StateStopped {
		t.Fatalf("stop = %v", stopped)
	}

	// The writes traced as the order writes are: preview, refused, ok.
	s.Close()
	entries, err := (&trace.Reader{Dir: traceDir}).Read(trace.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		if e.Write {
			got = append(got, fmt.Sprintf("%s:%s", e.Tool, e.Verdict))
		}
		if e.Write && e.Verdict != trace.Error && e.Token == "" {
			t.Errorf("write traced without its token: %+v", e)
		}
	}
	want := "deploy_strategy:preview deploy_strategy:refused deploy_strategy:preview deploy_strategy:ok deploy_strategy:refused " +
		"stop_deployment:preview stop_deployment:ok"
	if strings.Join(got, " ") != want {
		t.Errorf("trace verdicts\n got %v\nwant %v", got, want)
	}
}

// outputSchemas compiles each served tool's outputSchema.
func outputSchemas(t *testing.T, s *session) map[string]*jsonschema.Schema {
	t.Helper()
	list, err := s.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*jsonschema.Schema{}
	for _, tool := range list.Tools {
		raw := tool.RawOutputSchema
		if len(raw) == 0 {
			raw, _ = json.Marshal(tool.OutputSchema)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource("mem://"+tool.Name+".json", doc); err != nil {
			t.Fatal(err)
		}
		if out[tool.Name], err = c.Compile("mem://" + tool.Name + ".json"); err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
	}
	return out
}

// TestDeployOnNodeWithoutDeployments: against a node that runs none, the
// snapshot lists no deployments and says nothing of them, and a
// deploy_strategy preview answers the node's reason.
func TestDeployOnNodeWithoutDeployments(t *testing.T) {
	n := nodetest.NewServer(t)
	proj := newProject(t)
	runWicket(t, nil, "--project", proj, "strategy", "new", "mine", "--from", "sma_cross")
	s := startMCP(t, nodeEnv(n), proj, "--node", n.Addr)
	snap := object(t, s.call(t, "node_snapshot", `{"events":0}`))
	if _, listed := snap["deployments"]; listed || snap["deployments_note"] != nil {
		t.Fatalf("snapshot of a node without deployments: %v %v", snap["deployments"], snap["deployments_note"])
	}
	res := s.call(t, "deploy_strategy", `{"name":"mine","series":"BTC-USD@1m","venue":"paper"}`)
	if !res.IsError || !strings.Contains(text(res), "runs no deployments") || !strings.Contains(text(res), "Nothing was deployed") {
		t.Fatalf("deploy on a node without deployments: %s", text(res))
	}
}

// TestDeployProfileReadOnly: the read-only profile serves the report, the
// snapshot and wicket://deployments/{id}, never the two writes, and
// refuses a call to one.
func TestDeployProfileReadOnly(t *testing.T) {
	n, _, proj := deploymentsNode(t)
	s := startMCP(t, nodeEnv(n), proj, "--node", n.Addr, "--profile", "read-only")
	names := s.toolNames(t)
	for _, w := range []string{"deploy_strategy", "stop_deployment"} {
		if slices.Contains(names, w) {
			t.Errorf("read-only lists %s", w)
		}
	}
	for _, r := range []string{"deployment_report", "node_snapshot"} {
		if !slices.Contains(names, r) {
			t.Errorf("read-only does not list %s: %v", r, names)
		}
	}
	tpls, err := s.ListResourceTemplates(context.Background(), mcp.ListResourceTemplatesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, tp := range tpls.ResourceTemplates {
		uris = append(uris, tp.URITemplate.Raw())
	}
	if !slices.Contains(uris, "wicket://deployments/{id}") {
		t.Errorf("read-only templates %v lack wicket://deployments/{id}", uris)
	}
	if res := s.call(t, "deploy_strategy", `{"name":"flip","series":"BTC-USD@1m","venue":"paper"}`); !res.IsError {
		t.Fatalf("read-only served deploy_strategy: %s", text(res))
	}
}

// TestDeployApprovalAndBudget: under --approval elicit a declined confirm
// deploys nothing and an accepted one deploys exactly once, the person
// being shown the request; with --max-writes 1 the second deployment
// write is refused by the budget and sends nothing.
func TestDeployApprovalAndBudget(t *testing.T) {
	n, r, proj := deploymentsNode(t)
	el := &elicitor{answer: answer(mcp.ElicitationResponseActionDecline, nil)}
	s, _ := startMCPWith(t, nodeEnv(n), proj, []client.ClientOption{client.WithElicitationHandler(el)},
		"--node", n.Addr, "--approval", "elicit", "--max-writes", "1", "--max-notional", "500")
	args := `"name":"flip","series":"BTC-USD@1m","venue":"paper","capital":"1000"`
	confirm := func() *mcp.CallToolResult {
		prev := object(t, s.call(t, "deploy_strategy", "{"+args+"}"))
		if !strings.Contains(prev["note"].(string), "the user is asked") {
			t.Fatalf("preview note lacks the approval: %v", prev["note"])
		}
		// The session's notional budget does not bound the deployment's
		// orders, and the preview says so plainly.
		if sum, _ := prev["summary"].(string); !strings.Contains(sum, "--max-notional 500 does NOT bound what the deployment trades") {
			t.Fatalf("preview summary lacks the notional caveat: %v", prev["summary"])
		}
		return s.call(t, "deploy_strategy", "{"+args+`,"confirm":true,"preview_token":"`+prev["preview_token"].(string)+`"}`)
	}
	if res := confirm(); !res.IsError || !strings.Contains(text(res), "REFUSED [approval]") || len(r.List()) != 0 {
		t.Fatalf("declined: %s (%d deployments)", text(res), len(r.List()))
	}
	el.mu.Lock()
	el.answer = answer(mcp.ElicitationResponseActionAccept, map[string]any{"approve": true})
	shown := strings.Join(el.shown, "\n")
	el.mu.Unlock()
	if !strings.Contains(shown, "deploy_strategy: run flip.star on BTC-USD@1m") || !strings.Contains(shown, "venue paper") {
		t.Fatalf("the person was shown: %s", shown)
	}
	if res := confirm(); res.IsError || len(r.List()) != 1 {
		t.Fatalf("accepted: %s (%d deployments)", text(res), len(r.List()))
	}
	if res := confirm(); !res.IsError || !strings.Contains(text(res), "REFUSED [budget]") || len(r.List()) != 1 {
		t.Fatalf("over budget: %s (%d deployments)", text(res), len(r.List()))
	}
}

// proposalRig is a propose-mode deployment on deploymentsNode's node
// with one waiting proposal: a buy at the bar that just closed.
func proposalRig(t *testing.T, n *nodetest.Server, r *deploy.Runner, capital int64) (deploy.Deployment, deploy.Proposal) {
	t.Helper()
	ctx := context.Background()
	d, err := r.Create(ctx, deploy.Spec{Strategy: "flip.star", Source: deployFlipStar, Series: "BTC-USD@1m", Venue: "paper",
		Mode: deploy.ModePropose, Capital: decimal.NewFromInt(capital)})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := n.Client().Snapshot(ctx, "paper", 0)
	if err != nil {
		t.Fatal(err)
	}
	mark, _ := snap.Mark("paper", "BTC-USD")
	px, _ := mark.Float64()
	bar := deploy.Bar{Time: time.Now().UTC().Truncate(time.Minute).Add(-time.Minute), Open: px * 0.99, High: px, Low: px * 0.99, Close: px, Volume: 1}
	if err := r.Step(ctx, d.ID, bar); err != nil {
		t.Fatal(err)
	}
	got, err := r.Get(d.ID)
	if err != nil || len(got.Proposals) != 1 {
		t.Fatalf("after an up bar the deployment proposes %+v (%v)", got.Proposals, err)
	}
	return got, got.Proposals[0]
}

// nodeOrders counts the orders the node took with client order id cid.
func nodeOrders(t *testing.T, n *nodetest.Server, cid string) int {
	t.Helper()
	page, err := n.Client().Audit(context.Background(), node.AuditQuery{ClientOrderID: cid, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	c := 0
	for _, e := range page.Entries {
		if e.Outcome.Status == node.Accepted {
			c++
		}
	}
	return c
}

// TestDeployProposalsThroughWicketApprove: wicket approve, at a
// terminal, shows the node's waiting deployment proposals beside the
// servers' commands; y sends the order exactly once (signed with the
// operator key the node verifies), n sends nothing.
func TestDeployProposalsThroughWicketApprove(t *testing.T) {
	n, r, proj := deploymentsNode(t)
	// The project's node is n, and its operator key the one n verifies.
	toml := filepath.Join(proj, "wicket.toml")
	cfg, err := os.ReadFile(toml)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(toml, []byte(strings.Replace(string(cfg), `address = "127.0.0.1:7879"`, `address = "`+n.Addr+`"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"operator.key", "operator.pub"} {
		if err := os.Remove(filepath.Join(proj, "settings", f)); err != nil {
			t.Fatal(err)
		}
	}
	yes, py := proposalRig(t, n, r, 1000)
	no, pn := proposalRig(t, n, r, 2000)
	if nodeOrders(t, n, py.ClientOrderID)+nodeOrders(t, n, pn.ClientOrderID) != 0 {
		t.Fatal("a proposal was sent before anyone approved it")
	}
	term := startApprove(t, proj, append(nodeEnv(n), "WICKET_OPERATOR_KEY="+hex.EncodeToString(n.OperatorKey.Seed()))...)
	// Newest deployment first: the one to decline.
	term.waitFor("proposal "+pn.ClientOrderID+" of deployment "+no.ID, 1)
	term.waitFor("Send it?", 1)
	term.typeLine("n")
	term.waitFor("declined: nothing is sent", 1)
	term.waitFor("proposal "+py.ClientOrderID+" of deployment "+yes.ID, 1)
	// The terminal shows a proposal a line at a time: wait for its order
	// line rather than read it the moment the heading arrives.
	term.waitFor("order        buy "+py.Quantity.String()+" BTC-USD at market on venue paper", 1)
	term.waitFor("Send it?", 2)
	term.typeLine("y")
	term.waitFor("approved: order "+py.ClientOrderID+" buy "+py.Quantity.String()+" is filled", 1)
	if got := nodeOrders(t, n, py.ClientOrderID); got != 1 {
		t.Fatalf("the approved proposal reached the node %d times", got)
	}
	if got := nodeOrders(t, n, pn.ClientOrderID); got != 0 {
		t.Fatalf("the declined proposal reached the node %d times", got)
	}
	if d, _ := r.Get(yes.ID); !d.Position.Equal(py.Quantity) || len(d.Proposals) != 0 {
		t.Fatalf("approved deployment: position %s, proposals %v", d.Position, d.Proposals)
	}
	term.typeLine("q")
}

// proposalElicitor approves the session's deployment writes and answers
// the proposals it is asked about as told: accept, decline, or no answer
// until the test ends.
type proposalElicitor struct {
	mu      sync.Mutex
	answers map[string]string // deployment id → accept, decline, silent
	asked   []string
	hold    chan struct{}
}

func (e *proposalElicitor) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	msg := req.Params.Message
	accept := &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"approve": true}}}
	if !strings.Contains(msg, "proposes an order") {
		return accept, nil // the deploy_strategy write itself
	}
	e.mu.Lock()
	e.asked = append(e.asked, msg)
	var how string
	for id, a := range e.answers {
		if strings.Contains(msg, id) {
			how = a
		}
	}
	e.mu.Unlock()
	switch how {
	case "accept":
		return accept, nil
	case "silent":
		select {
		case <-e.hold:
		case <-ctx.Done():
		}
		return nil, context.Canceled
	}
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionDecline}}, nil
}

// TestDeployProposalsElicited: a propose deployment made through `wicket
// mcp --approval elicit` has each proposal asked of the client's person:
// an accept sends the order exactly once, a decline and no answer before
// it lapses send none (the server says which); the node refuses an
// elicited approval for a deployment made without approval elicit.
func TestDeployProposalsElicited(t *testing.T) {
	n, r, proj := deploymentsNode(t)
	el := &proposalElicitor{answers: map[string]string{}, hold: make(chan struct{})}
	t.Cleanup(func() { close(el.hold) })
	s, notes := startMCPWith(t, nodeEnv(n), proj, []client.ClientOption{client.WithElicitationHandler(el)}, "--node", n.Addr, "--approval", "elicit")
	deployOne := func(capital string) string {
		t.Helper()
		args := `"name":"flip","series":"BTC-USD@1m","venue":"paper","capital":"` + capital + `"`
		prev := object(t, s.call(t, "deploy_strategy", "{"+args+"}"))
		done := object(t, s.call(t, "deploy_strategy", "{"+args+`,"confirm":true,"preview_token":"`+prev["preview_token"].(string)+`"}`))
		d, _ := done["deployment"].(map[string]any)
		id, _ := d["id"].(string)
		if done["status"] != "accepted" || d["approval"] != "elicit" || !strings.Contains(fmt.Sprint(done["note"]), "asked of you through your client") {
			t.Fatalf("deploy under --approval elicit: %v", done)
		}
		return id
	}
	snap, err := n.Client().Snapshot(context.Background(), "paper", 0)
	if err != nil {
		t.Fatal(err)
	}
	mark, _ := snap.Mark("paper", "BTC-USD")
	px, _ := mark.Float64()
	propose := func(id string, at time.Time) deploy.Proposal {
		t.Helper()
		if err := r.Step(context.Background(), id, deploy.Bar{Time: at, Open: px * 0.99, High: px, Low: px * 0.99, Close: px, Volume: 1}); err != nil {
			t.Fatal(err)
		}
		d, err := r.Get(id)
		if err != nil || len(d.Proposals) != 1 {
			t.Fatalf("deployment %s proposes %+v (%v)", id, d.Proposals, err)
		}
		return d.Proposals[0]
	}
	waitNote := func(words string) {
		t.Helper()
		for range 2000 {
			for _, m := range notes.all() {
				if strings.Contains(m, words) {
					return
				}
			}
			time.Sleep(5 * time.Millisecond) // a poll of the notifications received, bounded
		}
		t.Fatalf("no notification says %q; got %v", words, notes.all())
	}
	bar := time.Now().UTC().Truncate(time.Minute).Add(-time.Minute)

	yes, no, silent := deployOne("1000"), deployOne("2000"), deployOne("3000")
	el.mu.Lock()
	el.answers[yes], el.answers[no], el.answers[silent] = "accept", "decline", "silent"
	el.mu.Unlock()

	py := propose(yes, bar)
	waitNote("the accepted proposal " + py.ClientOrderID)
	if got := nodeOrders(t, n, py.ClientOrderID); got != 1 {
		t.Fatalf("the accepted proposal reached the node %d times", got)
	}
	if d, _ := r.Get(yes); !d.Position.Equal(py.Quantity) || len(d.Proposals) != 0 {
		t.Fatalf("accepted: position %s, proposals %v", d.Position, d.Proposals)
	}

	pn := propose(no, bar)
	waitNote("proposal " + pn.ClientOrderID + " was declined; nothing was sent")
	if got := nodeOrders(t, n, pn.ClientOrderID); got != 0 {
		t.Fatalf("the declined proposal reached the node %d times", got)
	}

	// A bar whose question ends two seconds from now, unanswered.
	ps := propose(silent, time.Now().UTC().Add(-2*time.Minute+2*time.Second))
	waitNote("nobody answered about proposal " + ps.ClientOrderID + " within two bars")
	if got := nodeOrders(t, n, ps.ClientOrderID); got != 0 {
		t.Fatalf("the unanswered proposal reached the node %d times", got)
	}
	el.mu.Lock()
	asked := strings.Join(el.asked, "\n")
	el.mu.Unlock()
	if !strings.Contains(asked, "Deployment "+yes+" (flip.star on BTC-USD@1m, venue paper) proposes an order: buy "+py.Quantity.String()+" BTC-USD at market") {
		t.Fatalf("the person was asked:\n%s", asked)
	}

	// The trust rule: no elicited approval for a deployment that was
	// not created with approval elicit.
	op, err := r.Create(context.Background(), deploy.Spec{Strategy: "flip.star", Source: deployFlipStar, Series: "BTC-USD@1m", Venue: "paper",
		Mode: deploy.ModePropose, Capital: decimal.NewFromInt(1000)})
	if err != nil {
		t.Fatal(err)
	}
	po := propose(op.ID, bar)
	var in deploy.Intent
	err = n.Client().DeploymentsPost(context.Background(), "/proposals/"+po.ClientOrderID+"/elicited", deploy.Elicited{By: "someone"}, &in)
	if err == nil || !strings.Contains(err.Error(), "from an operator only") || nodeOrders(t, n, po.ClientOrderID) != 0 {
		t.Fatalf("an elicited approval of an operator-only deployment: %v", err)
	}
}

// TestDeployBadInputNamesTheFix: through deploy_strategy, an unknown
// series, a strategy that fails validation and an allowance above the
// node's guardrail are refused at the preview with the node's fix, and
// nothing is deployed.
func TestDeployBadInputNamesTheFix(t *testing.T) {
	n, r, proj := deploymentsNode(t)
	if err := os.WriteFile(filepath.Join(proj, "strategies", "broken.star"), []byte("def signals(bars):\n    return {\"long\": undefined_name}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startMCP(t, nodeEnv(n), proj, "--node", n.Addr)
	for _, c := range []struct {
		name, args string
		words      []string
	}{
		{"unknown series", `"name":"flip","series":"DOGE-USD@1m","venue":"paper"`, []string{"unknown to venue paper", "BTC-USD", "add DOGE-USD to the venue's symbols"}},
		{"fails validation", `"name":"broken","series":"BTC-USD@1m","venue":"paper"`, []string{"fails validation", "wicket strategy validate broken.star"}},
		{"allowance above the guardrail", `"name":"flip","series":"BTC-USD@1m","venue":"paper","allowance":{"max_order_notional":"30000"}`,
			[]string{"above the node's guardrail limit of 25000", "give at most 25000"}},
	} {
		res := s.call(t, "deploy_strategy", "{"+c.args+"}")
		if !res.IsError {
			t.Fatalf("%s: previewed: %s", c.name, text(res))
		}
		for _, w := range append(c.words, "Nothing was deployed") {
			if !strings.Contains(text(res), w) {
				t.Errorf("%s: %q lacks %q", c.name, text(res), w)
			}
		}
	}
	if len(r.List()) != 0 {
		t.Fatalf("bad input deployed %d", len(r.List()))
	}
}
