package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"wicket/agent/approval"
	"wicket/deploy"
	"wicket/gate"
	"wicket/internal/project"
	"wicket/node"
	"wicket/strategy/templates"
	"wicket/trace"
)

// Deployments through MCP: deploy_strategy and stop_deployment are gated
// writes (a preview with a single-use token bound to the exact request,
// then a confirm that sends it once, through the session's budgets and
// approval like the order writes), deployment_report reads the node's
// tracking report. The node checks and runs deployments (package deploy);
// this file never decides what a deployment may do, it only carries the
// request and passes the node's answers through.

// deploymentsNode is the node's deployments surface (*node.Client has it).
type deploymentsNode interface {
	DeploymentsGet(ctx context.Context, sub string, q url.Values, out any) error
	DeploymentsPost(ctx context.Context, sub string, body, out any) error
}

// errNoDeployments is the answer when the node connection cannot reach
// deployments.
var errNoDeployments = errors.New("this server's node connection does not reach deployments; start `wicket mcp` with --node HOST:PORT")

// needDeployments is needNode for the deployment tools.
func (tb *toolbox) needDeployments() *result {
	if r := tb.needNode(); r != nil {
		return r
	}
	if _, ok := tb.Node.(deploymentsNode); !ok {
		return failErr(errNoDeployments)
	}
	return nil
}

func (tb *toolbox) deployNode() deploymentsNode { return tb.Node.(deploymentsNode) }

// deployArgs are deploy_strategy's arguments, declared once (see declare.go).
type deployArgs struct {
	Name      string         `json:"name" arg:"required" desc:"strategy name"`
	Series    string         `json:"series" arg:"required" desc:"SYMBOL@GRAN it trades"`
	Venue     string         `json:"venue" arg:"required" desc:"node venue"`
	Params    map[string]any `json:"params" arg:"shape=knobs" desc:"knob values"`
	Mode      string         `json:"mode" arg:"default=propose,enum=propose|auto" desc:"propose: an operator approves each order"`
	Capital   decimalText    `json:"capital" arg:"schema=decimal" desc:"allocation; default [research] capital"`
	Allowance map[string]any `json:"allowance" desc:"max_order_notional, max_position_notional, max_daily_loss, max_drawdown_pct, max_orders_per_day, max_tracking_gap"`
	confirmArgs
}

// stopArgs are stop_deployment's arguments.
type stopArgs struct {
	ID     string `json:"id" arg:"required" desc:"the deployment id"`
	Reason string `json:"reason" desc:"why"`
	confirmArgs
}

// confirmArgs are the gate's two arguments, as the deployment writes
// declare them (the order writes' gateParams say the same).
type confirmArgs struct {
	Confirm      bool   `json:"confirm" desc:"true with preview_token executes"`
	PreviewToken string `json:"preview_token" desc:"from this exact request's preview"`
}

// reportArgs are deployment_report's arguments.
type reportArgs struct {
	ID string `json:"id" arg:"required" desc:"the deployment id"`
}

// deployIntent is what a deployment preview token binds: the tool's
// request to the node, canonical JSON (the strategy's source included, so
// an edit between preview and confirm needs a new preview).
type deployIntent struct {
	path string // the node endpoint the confirm posts to
	body []byte
}

// SameIntent compares the requests byte for byte.
func (d deployIntent) SameIntent(confirming deployIntent) error {
	if d.path != confirming.path || !bytes.Equal(d.body, confirming.body) {
		return errors.New("the arguments (or the strategy's source) differ from the preview's")
	}
	return nil
}

var _ gate.Command[deployIntent] = deployIntent{}

// deployGate holds a toolbox's deployment previews and the confirmed
// writes parked for a person's answer in a 2026-07-28 retry (mrtr.go).
type deployGate struct {
	previews *gate.PendingPreviews[deployIntent]
	mu       sync.Mutex
	parked   map[string]deployIntent // by preview token
	watching map[string]bool         // deployments whose proposals this server asks about
}

func newDeployGate(now func() time.Time) *deployGate {
	return &deployGate{previews: gate.New[deployIntent](gate.Options{Now: now}), parked: map[string]deployIntent{}}
}

func (g *deployGate) park(tok string, in deployIntent) {
	g.mu.Lock()
	g.parked[tok] = in
	g.mu.Unlock()
}

func (g *deployGate) unpark(tok string) (deployIntent, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	in, ok := g.parked[tok]
	delete(g.parked, tok)
	return in, ok
}

func (tb *toolbox) deployTools() []*toolSpec {
	gated := " Preview, then confirm: true with its preview_token."
	return []*toolSpec{{
		Name: "deploy_strategy", Title: "Deploy a strategy", Ring: ringLiveWrite, Write: true,
		Hints:       hints{Destructive: true, OpenWorld: flag(true)},
		Description: "Runs a strategy on the node within an allowance; the preview is the node's check." + gated,
		Params:      paramsOf[deployArgs](),
		Output:      deployWriteSchema,
		Handle:      tb.deployStrategy,
	}, {
		Name: "stop_deployment", Title: "Stop a deployment", Ring: ringLiveWrite, Write: true,
		Hints:       hints{Destructive: true, Idempotent: true, OpenWorld: flag(true)},
		Description: "Stops a deployment; the preview shows it." + gated,
		Params:      paramsOf[stopArgs](),
		Output:      deployWriteSchema,
		Handle:      tb.stopDeployment,
	}, {
		Name: "deployment_report", Title: "Deployment report", Ring: ringLiveRead,
		Hints:       hints{ReadOnly: true, OpenWorld: flag(true)},
		Description: "A deployment's live decisions and fills against their replay.",
		Params:      paramsOf[reportArgs](),
		Output:      deployReportSchema,
		Handle:      tb.deploymentReport,
	}}
}

// deployWriteSchema covers a deployment write's preview and its confirm;
// deployment is the node's answer, passed through.
var deployWriteSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"status":        map[string]any{"type": "string", "enum": []string{"preview", "accepted"}},
		"tool":          map[string]any{"type": "string"},
		"deployment":    map[string]any{"type": "object"},
		"summary":       map[string]any{"type": "string"},
		"note":          map[string]any{"type": "string"},
		"preview_token": map[string]any{"type": "string"},
		"expires_at":    map[string]any{"type": "string"},
	},
	"required": []string{"status", "tool", "deployment"},
}

// deployReportSchema is deployment_report's answer: the node's report.
var deployReportSchema = map[string]any{
	"type":       "object",
	"properties": map[string]any{"report": map[string]any{"type": "object"}},
	"required":   []string{"report"},
}

// deploySpec resolves deploy_strategy's arguments into the node's request.
func (tb *toolbox) deploySpec(in deployArgs) (deploy.Spec, error) {
	st, err := templates.Resolve(tb.Project, strings.TrimSuffix(in.Name, ".star"))
	if errors.Is(err, fs.ErrNotExist) {
		return deploy.Spec{}, fmt.Errorf("%w; call list_strategies for the project's strategies", err)
	}
	if err != nil {
		return deploy.Spec{}, err
	}
	spec := deploy.Spec{Strategy: st.Label, Source: st.Source, Params: in.Params, Series: in.Series, Venue: in.Venue,
		Mode: deploy.Mode(in.Mode), Capital: tb.Config.Research.Capital}
	if tb.loop.cfg.Approval == project.ApprovalElicit && (spec.Mode == "" || spec.Mode == deploy.ModePropose) {
		// Its proposals are asked of this session's person too (watchProposals).
		spec.Approval = deploy.ApprovalElicit
	}
	if in.Capital != "" {
		if spec.Capital, err = decimal.NewFromString(string(in.Capital)); err != nil {
			return spec, fmt.Errorf("argument \"capital\" is %q: give an amount such as \"1000\"", in.Capital)
		}
	}
	if in.Allowance != nil {
		b, _ := json.Marshal(in.Allowance)
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&spec.Allowance); err != nil {
			return spec, fmt.Errorf("argument \"allowance\": %v; its keys are max_order_notional, max_position_notional, "+
				"max_daily_loss, max_drawdown_pct (decimal strings), max_orders_per_day (an integer) and max_tracking_gap (money, or bps of the capital: \"150bps\")", err)
		}
	}
	return spec, nil
}

func (tb *toolbox) deployStrategy(ctx context.Context, c *call) *result {
	if r := tb.needDeployments(); r != nil {
		return r
	}
	var in deployArgs
	if _, err := decodeArgs(c.args, &in); err != nil {
		return failErr(err)
	}
	spec, err := tb.deploySpec(in)
	if err != nil {
		return failErr(err)
	}
	body, err := json.Marshal(spec)
	if err != nil {
		return failErr(err)
	}
	intent := deployIntent{path: "", body: body}
	if !in.Confirm {
		var check json.RawMessage
		if err := tb.deployNode().DeploymentsPost(ctx, "/check", spec, &check); err != nil {
			return fail("the node refused the deployment: %v. Nothing was deployed", err)
		}
		words := fmt.Sprintf("deploy_strategy: run %s on %s at venue %s, mode %s, capital %s", spec.Strategy, spec.Series, spec.Venue,
			orDefault(string(spec.Mode), string(deploy.ModePropose)), spec.Capital)
		if m := tb.loop.cfg.Budget.MaxNotional; m.IsPositive() {
			words += fmt.Sprintf(". This session's --max-notional %s does NOT bound what the deployment trades: deploying counts as one write with no notional, "+
				"and its orders are bounded only by its capital, its allowance and the node's guardrail", m)
		}
		return tb.deployPreview(c, intent, words, deployVenue(spec.Venue), map[string]any{"deployment": check})
	}
	return tb.deployConfirm(ctx, c, intent, in.PreviewToken, "deploy_strategy: run "+spec.Strategy+" on "+spec.Series, deployVenue(spec.Venue))
}

func (tb *toolbox) stopDeployment(ctx context.Context, c *call) *result {
	if r := tb.needDeployments(); r != nil {
		return r
	}
	var in stopArgs
	if _, err := decodeArgs(c.args, &in); err != nil {
		return failErr(err)
	}
	if err := project.ValidName("deployment id", in.ID); err != nil {
		return failErr(err)
	}
	body, err := json.Marshal(deploy.StopRequest{Reason: in.Reason})
	if err != nil {
		return failErr(err)
	}
	intent := deployIntent{path: "/" + url.PathEscape(in.ID) + "/stop", body: body}
	if !in.Confirm {
		var detail struct {
			Deployment json.RawMessage `json:"deployment"`
		}
		if err := tb.deployNode().DeploymentsGet(ctx, "/"+url.PathEscape(in.ID), nil, &detail); err != nil {
			return fail("cannot read deployment %s: %v", in.ID, err)
		}
		return tb.deployPreview(c, intent, "stop_deployment: stop deployment "+in.ID, stopVenue, map[string]any{"deployment": detail.Deployment})
	}
	return tb.deployConfirm(ctx, c, intent, in.PreviewToken, "stop_deployment: stop deployment "+in.ID, stopVenue)
}

func (tb *toolbox) deploymentReport(ctx context.Context, c *call) *result {
	if r := tb.needDeployments(); r != nil {
		return r
	}
	var in reportArgs
	if _, err := decodeArgs(c.args, &in); err != nil {
		return failErr(err)
	}
	if err := project.ValidName("deployment id", in.ID); err != nil {
		return failErr(err)
	}
	var rep json.RawMessage
	if err := tb.deployNode().DeploymentsGet(ctx, "/"+url.PathEscape(in.ID)+"/report", nil, &rep); err != nil {
		return fail("cannot read the report of deployment %s: %v", in.ID, err)
	}
	return ok(map[string]any{"report": rep})
}

// deployPreview issues the token for intent and answers out with it.
func (tb *toolbox) deployPreview(c *call, intent deployIntent, words, venue string, out map[string]any) *result {
	tool := c.tool
	tok, expires, err := tb.deploys.previews.Issue(tool, intent)
	if err != nil {
		return failErr(err)
	}
	notes := tb.loop.remember(string(tok), expires, venue)
	notes = append(notes, fmt.Sprintf("Nothing was sent. To do exactly this, call %s again with the same arguments plus "+
		`"confirm": true and "preview_token": %q before %s. Any change needs a new preview.`, tool, tok, expires.UTC().Format(time.RFC3339)))
	out["status"], out["tool"], out["summary"] = "preview", tool, words
	out["note"] = strings.Join(notes, ". ")
	out["preview_token"], out["expires_at"] = string(tok), expires.UTC().Format(time.RFC3339Nano)
	return &result{structured: out, verdict: trace.Preview, token: string(tok)}
}

// deployConfirm takes the token (single use, before anything runs) and,
// through the session's budget and approval, posts the previewed request.
func (tb *toolbox) deployConfirm(ctx context.Context, c *call, intent deployIntent, tok, words, venue string) *result {
	tool := c.tool
	ctx = withRoundTrip(ctx, c.request.Params.MultiRoundTripParams, commandDigest(tool, c.raw)) // mrtr.go
	if r, resumed := tb.loop.resume(ctx, tool, tok, func(node.Preview) *result {
		parked, ok := tb.deploys.unpark(tok)
		if !ok {
			r := refuse("REFUSED [approval] this approval was already answered. Nothing was sent; preview again.")
			r.token = tok
			return r
		}
		return tb.deploySend(ctx, tool, parked, tok)
	}); resumed {
		return r
	}
	token, err := gate.ParseToken(tok)
	if err == nil {
		var stored deployIntent
		if stored, err = tb.deploys.previews.Take(tool, token, intent); err == nil {
			tb.deploys.park(tok, stored)
			q := tb.loop.takeQuote(tok, venue)
			req := approval.Request{ID: tok, Session: tb.loop.session, Tool: tool, Command: words, Project: tb.loop.cfg.Project,
				Guardrail: "none on the agent's side: the node checks the deployment and its allowance", DryRun: "the preview was the node's check",
				Venue: q.venue}
			r := tb.loop.approveAndSend(ctx, tool, node.Preview{}, tok, q, req, func() *result {
				in, _ := tb.deploys.unpark(tok)
				return tb.deploySend(ctx, tool, in, tok)
			})
			if r.input == nil {
				tb.deploys.unpark(tok) // answered (sent or refused): nothing stays parked
			}
			return r
		}
	}
	r := refuse(err.Error())
	r.token = tok
	return r
}

// deploySend posts a taken intent and passes the node's answer through.
func (tb *toolbox) deploySend(ctx context.Context, tool string, in deployIntent, tok string) *result {
	var answer json.RawMessage
	if err := tb.deployNode().DeploymentsPost(ctx, in.path, json.RawMessage(in.body), &answer); err != nil {
		f := fail("the node refused it: %v. The token is spent; preview again to retry", err)
		f.token = tok
		return f
	}
	out := map[string]any{"status": "accepted", "tool": tool, "deployment": answer}
	if tool == "deploy_strategy" {
		var d deploy.Deployment
		if json.Unmarshal(answer, &d) == nil && d.Approval == deploy.ApprovalElicit && d.ID != "" {
			if note := tb.watchProposals(ctx, d.ID); note != "" {
				out["note"] = note
			}
		}
	}
	return &result{structured: out, verdict: trace.OK, token: tok, outcome: "accepted"}
}

// Proposals of elicit deployments: a deployment that this session
// created under --approval elicit (approval elicit, propose mode) has
// each of its proposals asked of the session's person through the
// client (elicitation/create); an explicit accept sends the order once
// (POST /v1/deployments/proposals/{cid}/elicited, which the node takes
// only for a deployment created with approval elicit, by the key that
// created it); a decline, a cancel or no answer before the proposal
// lapses sends nothing.

// deployVenue is the approval's venue line of a deployment.
func deployVenue(v string) string {
	return "venue " + v + " (the node's check in the preview says its environment and arming; a real venue's orders also need the deployment armed)"
}

// stopVenue is the approval's venue line of a stop.
const stopVenue = "the deployment's own venue (stopping sends no order)"

// remember keeps, until it expires, what a deployment preview's confirm
// needs: it counts as one write of no notional of its own (its orders
// are the node's, within the allowance), and the words that say where.
func (l *writeLoop) remember(tok string, expires time.Time, venue string) []string {
	l.keep(tok, quote{notional: decimal.Zero, valued: true, venue: venue, expires: expires})
	return l.notes(decimal.Zero, true)
}

// takeQuote is remember's quote, or one that expires in a minute.
func (l *writeLoop) takeQuote(tok, venue string) quote {
	l.mu.Lock()
	q, ok := l.quotes[tok]
	delete(l.quotes, tok)
	l.mu.Unlock()
	if !ok {
		q = quote{notional: decimal.Zero, valued: true, venue: venue, expires: l.now().Add(time.Minute)}
	}
	return q
}
