package deploy

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"wicket/node"
	"wicket/node/command"
	"wicket/strategy/worker"
)

// The operator's acts on a deployment (arm, resume, approve a proposal)
// use the node's arming scheme: the runner issues a one-use challenge, the
// operator key signs a node.ArmStatement naming the act, the deployment
// (or proposal) and the challenge, and the runner verifies it against
// settings/operator.pub. The control key alone does none of them.

// The actions an operator signs.
const (
	ActArm     = "arm"
	ActResume  = "resume"
	ActApprove = "approve"
	// ActApproveNext approves a propose-mode deployment's next N orders
	// ahead (the request's For is N).
	ActApproveNext = "approve-next"
	// ActArmWithoutPlan arms an auto deployment on a real venue whose
	// strategy has no passed research plan: the operator's override,
	// signed as its own act so no plain arming stands for it.
	ActArmWithoutPlan = "arm-without-plan"
)

// MaxApproveNext bounds the orders approved ahead at once.
const MaxApproveNext = 100

// MaxArm is the longest an operator arms a deployment for.
const MaxArm = 24 * time.Hour

// maxChallenges bounds the challenges waiting.
const maxChallenges = 256

type challenges struct {
	mu    sync.Mutex
	byID  map[string]challengeFor
	order []string
}

type challengeFor struct {
	act, name string
	expires   time.Time
}

func newChallenges() *challenges { return &challenges{byID: map[string]challengeFor{}} }

func (c *challenges) issue(act, name string, now time.Time) string {
	id := node.NewNonce()
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.order) > 0 && (len(c.order) >= maxChallenges || now.After(c.byID[c.order[0]].expires)) {
		delete(c.byID, c.order[0])
		c.order = c.order[1:]
	}
	c.byID[id] = challengeFor{act: act, name: name, expires: now.Add(node.ChallengeLife)}
	c.order = append(c.order, id)
	return id
}

func (c *challenges) take(id, act, name string, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch, ok := c.byID[id]
	if !ok || ch.act != act || ch.name != name || now.After(ch.expires) {
		return false
	}
	delete(c.byID, id)
	return true
}

// Statement is what the operator signs for act on name with req.
func Statement(act, name string, req node.ArmRequest) node.ArmStatement {
	target := "deployment"
	if act == ActApprove {
		target = "proposal"
	}
	return node.ArmStatement{Action: act, Target: target, Name: name, For: req.For, Confirm: req.Confirm, Challenge: req.Challenge}
}

// Challenge issues a challenge for act on name (a deployment id, or a
// proposal's client order id), after checking that name exists.
func (r *Runner) Challenge(act, name string) (string, error) {
	if err := r.exists(act, name); err != nil {
		return "", err
	}
	return r.chall.issue(act, name, r.cfg.Now()), nil
}

func (r *Runner) exists(act, name string) error {
	switch act {
	case ActArm, ActArmWithoutPlan, ActResume, ActApproveNext:
		_, err := r.get(name)
		return err
	case ActApprove:
		_, _, err := r.proposal(name)
		return err
	}
	return errorf(KindBadRequest, "no operator act %q: arm, resume, approve or approve-next", short(act))
}

// signed checks the operator's signature of act on name and uses up its
// challenge.
func (r *Runner) signed(act, name string, req node.ArmRequest) error {
	switch {
	case len(r.cfg.OperatorKey) == 0:
		return errorf(KindForbidden, "this node has no operator public key, so no operator act is possible: run `wicket init --operator-key` in the project, then restart wicket node serve")
	case req.Signature == "" || req.Challenge == "":
		return errorf(KindForbidden, "%s of %s needs the operator key's signature; the control key alone does not do it: the operator runs `wicket node %s %s` at a terminal", act, name, cliVerb(act), name)
	case !node.VerifyOperator(r.cfg.OperatorKey, Statement(act, name, req), req.Signature):
		return errorf(KindForbidden, "the %s of %s is not signed by this node's operator key (settings/operator.pub): run `wicket node %s %s` again with the project's operator key", act, name, cliVerb(act), name)
	case !r.chall.take(req.Challenge, act, name, r.cfg.Now()):
		return errorf(KindForbidden, "the challenge is unknown to this node, used already or older than %s: run `wicket node %s %s` again", node.ChallengeLife, cliVerb(act), name)
	case req.Confirm != name:
		return errorf(KindForbidden, "%s of %s needs its name typed to confirm", act, name)
	}
	return nil
}

func cliVerb(act string) string {
	switch act {
	case ActApprove:
		return "approve-proposal"
	case ActApproveNext:
		return "approve-proposal --next N"
	case ActArmWithoutPlan:
		return "arm --without-plan"
	}
	return act
}

// Arm arms an auto deployment for d (operator-signed). Arming lapses at
// d and at every start of the node. An auto deployment on a real venue
// whose strategy has no passed research plan is refused (preview.go):
// the operator signs ArmWithoutPlan instead.
func (r *Runner) Arm(id string, req node.ArmRequest) (Deployment, error) {
	return r.arm(id, req, ActArm)
}

// ArmWithoutPlan arms as Arm does, the operator's signed override of the
// research plan a real venue's auto deployment needs.
func (r *Runner) ArmWithoutPlan(id string, req node.ArmRequest) (Deployment, error) {
	return r.arm(id, req, ActArmWithoutPlan)
}

func (r *Runner) arm(id string, req node.ArmRequest, act string) (Deployment, error) {
	d, err := time.ParseDuration(req.For)
	if err != nil || d <= 0 || d > MaxArm {
		return Deployment{}, errorf(KindBadRequest, "for=%q: give a duration such as 8h, at most %s", short(req.For), MaxArm)
	}
	l, err := r.get(id)
	if err != nil {
		return Deployment{}, err
	}
	l.mu.Lock()
	dep := *l.d
	l.mu.Unlock()
	override, err := r.planToArm(&dep, act) // preview.go
	if err != nil {
		return Deployment{}, err
	}
	if err := r.signed(act, id, req); err != nil {
		return Deployment{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.d.State == StateStopped {
		return Deployment{}, errorf(KindConflict, "deployment %s is stopped: deploy again", id)
	}
	l.d.ArmedUntil, l.d.PlanOverride = r.cfg.Now().UTC().Add(d), override
	if override != "" {
		r.log.Warn("deployment armed by an operator without a passed research plan", "deployment", id, "override", override)
	}
	r.log.Warn("deployment armed by an operator", "deployment", id, "until", l.d.ArmedUntil)
	return l.d.view(), nil
}

// ApproveNext approves the next N orders of a propose-mode deployment
// ahead (operator-signed; N is req.For): each is sent as an approved
// proposal is, as it is decided, until N are sent. It lapses at every
// start of the node.
func (r *Runner) ApproveNext(id string, req node.ArmRequest) (Deployment, error) {
	n, err := strconv.Atoi(req.For)
	if err != nil || n < 1 || n > MaxApproveNext {
		return Deployment{}, errorf(KindBadRequest, "next=%q: give how many of its next orders to approve, 1 to %d", short(req.For), MaxApproveNext)
	}
	l, err := r.get(id)
	if err != nil {
		return Deployment{}, err
	}
	if err := r.signed(ActApproveNext, id, req); err != nil {
		return Deployment{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.d.State == StateStopped:
		return Deployment{}, errorf(KindConflict, "deployment %s is stopped: deploy again", id)
	case l.d.Mode != ModePropose:
		return Deployment{}, errorf(KindConflict, "deployment %s is in %s mode: only a propose-mode deployment's orders are approved (arm an auto one: wicket node arm %s)", id, l.d.Mode, id)
	}
	prev := *l.d
	l.d.PreApproved, l.d.Updated = n, r.cfg.Now().UTC()
	if err := r.cfg.Store.Commit(Batch{Deployment: l.d}); err != nil {
		*l.d = prev
		return Deployment{}, errorf(KindInternal, "the approval could not be journaled, so none is taken: %v", err)
	}
	r.log.Warn("deployment's next orders approved by an operator", "deployment", id, "orders", n)
	return l.d.view(), nil
}

// Resume resumes a paused deployment (operator-signed).
func (r *Runner) Resume(id string, req node.ArmRequest) (Deployment, error) {
	l, err := r.get(id)
	if err != nil {
		return Deployment{}, err
	}
	if err := r.signed(ActResume, id, req); err != nil {
		return Deployment{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.d.State != StatePaused {
		return Deployment{}, errorf(KindConflict, "deployment %s is %s, not paused: nothing to resume", id, l.d.State)
	}
	prev := *l.d
	now := r.cfg.Now().UTC()
	l.d.State, l.d.Reason, l.d.Updated = StateRunning, "resumed by an operator after: "+prev.Reason, now
	// The breakers measure from here: today's loss and the peak restart.
	l.d.Peak, l.d.DayStart = l.d.Equity, l.d.Equity
	if err := r.cfg.Store.Commit(Batch{Deployment: l.d}); err != nil {
		*l.d = prev
		return Deployment{}, errorf(KindInternal, "the resume could not be journaled, so the deployment stays paused: %v", err)
	}
	r.log.Warn("deployment resumed by an operator", "deployment", id)
	return l.d.view(), nil
}

func (r *Runner) proposal(cid string) (*live, Proposal, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, l := range r.deps {
		for _, p := range l.d.Proposals {
			if p.ClientOrderID == cid {
				return l, p, nil
			}
		}
	}
	return nil, Proposal{}, errorf(KindNotFound, "no waiting proposal %s: it was approved, or it lapsed at the next bar (wicket node deployments shows the waiting ones)", short(cid))
}

// Approve sends a waiting proposal through the node's write path
// (operator-signed), once.
// who says how the request reached the node (caller).
func (r *Runner) Approve(ctx context.Context, cid string, req node.ArmRequest, who string) (Intent, error) {
	l, p, err := r.proposal(cid)
	if err != nil {
		return Intent{}, err
	}
	if err := r.signed(ActApprove, cid, req); err != nil {
		return Intent{}, err
	}
	return r.sendProposal(ctx, l, p, "approved by an operator: signed with the operator key (settings/operator.pub), sent "+who)
}

// ApproveElicited sends a waiting proposal that the person a `wicket mcp
// --approval elicit` server asked has accepted, once. The node takes that
// word only for a deployment created with approval elicit, and only from
// the key that created it (keyID: the key the request was signed with).
func (r *Runner) ApproveElicited(ctx context.Context, cid, keyID, by, who string) (Intent, error) {
	l, p, err := r.proposal(cid)
	if err != nil {
		return Intent{}, err
	}
	l.mu.Lock()
	approval, creator, id := l.d.Approval, l.d.CreatedBy, l.d.ID
	l.mu.Unlock()
	switch {
	case approval != ApprovalElicit:
		return Intent{}, errorf(KindForbidden, "deployment %s takes its proposals' approval from an operator only (it was not created with approval elicit): the operator runs wicket approve or wicket node approve-proposal %s", id, cid)
	case creator == "" || keyID != creator:
		return Intent{}, errorf(KindForbidden, "deployment %s takes an elicited approval only from the key that created it: an operator can approve %s with wicket approve", id, cid)
	}
	if by = strings.TrimSpace(by); by == "" || len(by) > 200 {
		by = "the MCP client's user"
	}
	// The node cannot see a person: it records whose word it took, and
	// what that word claimed, never that a client was involved.
	return r.sendProposal(ctx, l, p, fmt.Sprintf("approved on the word of key %s (the key that created the deployment with approval elicit), %s, which says its MCP client's user (%s) accepted; the node cannot see the person", keyID, who, by))
}

// sendProposal sends the approved proposal p of l once; note says who
// approved it.
func (r *Runner) sendProposal(ctx context.Context, l *live, p Proposal, note string) (Intent, error) {
	cid := p.ClientOrderID
	l.mu.Lock()
	defer l.mu.Unlock()
	found := false
	for i, q := range l.d.Proposals {
		if q.ClientOrderID == cid {
			l.d.Proposals = append(l.d.Proposals[:i], l.d.Proposals[i+1:]...)
			found = true
			break
		}
	}
	if !found { // lapsed while the signature was checked
		return Intent{}, errorf(KindNotFound, "proposal %s lapsed at the bar's close before it was approved", cid)
	}
	if len(l.d.Legs) > 0 { // a portfolio's: its asset's own order (portfolio_propose.go)
		return r.sendLegProposal(ctx, l.d, p, note)
	}
	in, ok, err := r.cfg.Store.Intent(p.ClientOrderID)
	if err != nil || !ok {
		return Intent{}, errorf(KindInternal, "proposal %s is not in the deployments journal: %v", cid, err)
	}
	if l.d.State != StateRunning {
		in.Status, in.Note = IntentLapsed, fmt.Sprintf("lapsed: the deployment is %s (%s)", l.d.State, l.d.Reason)
		return in, r.cfg.Store.Commit(Batch{Deployment: l.d, Intents: []Intent{in}})
	}
	if m := l.d.Allowance.MaxOrdersPerDay; m > 0 && l.d.OrdersToday >= m {
		r.pause(l.d, fmt.Sprintf("max_orders_per_day: %d orders sent today (UTC) already; the approved proposal %s was not sent", l.d.OrdersToday, cid), r.cfg.Now().UTC())
		in.Status, in.Note = IntentLapsed, "not sent: "+l.d.Reason
		return in, r.cfg.Store.Commit(Batch{Deployment: l.d, Intents: []Intent{in}})
	}
	if why := r.resize(ctx, l.d, &in, p); why != "" {
		in.Status, in.Note, in.Updated = IntentLapsed, "not sent: "+why, r.cfg.Now().UTC()
		if err := r.cfg.Store.Commit(Batch{Deployment: l.d, Intents: []Intent{in}}); err != nil {
			return Intent{}, err
		}
		return in, errorf(KindConflict, "proposal %s was not sent: %s", cid, why)
	}
	if l.d.Guard != "" { // the exits resting for the position make way first
		why, changed := r.cancelGuard(ctx, l.d)
		if why != "" {
			in.Status, in.Note = IntentRefused, why
			return in, r.cfg.Store.Commit(Batch{Deployment: l.d, Intents: append(changed, in)})
		}
		if err := r.cfg.Store.Commit(Batch{Deployment: l.d, Intents: changed}); err != nil {
			return Intent{}, err
		}
	}
	in.Status, in.Note, in.Updated = IntentSending, in.Note+note, r.cfg.Now().UTC()
	l.d.OrdersToday++
	if err := r.cfg.Store.Commit(Batch{Deployment: l.d, Intents: []Intent{in}}); err != nil {
		return Intent{}, err
	}
	if err := r.cfg.Store.Commit(Batch{Intents: legs(in)}); err != nil {
		return Intent{}, err
	}
	if err = r.send(ctx, l.d, &in); err != nil {
		return in, err
	}
	vc, _ := r.cfg.Project.Venue(l.d.Venue)
	return in, r.protect(ctx, l.d, vc, in.Bar)
}

// resize sizes an approved proposal again at the venue's price now, as
// the deployment sizes an order at a bar's close: within its capital and
// allowance, with a bracket's exits priced from that price. It says why
// the proposal cannot be sent ("" when it can): no price at the venue, or
// no order left to send at the price now.
func (r *Runner) resize(ctx context.Context, d *Deployment, in *Intent, p Proposal) string {
	snap, err := r.cfg.Node.Snapshot(ctx, d.Venue, 0)
	if err != nil {
		return "the venue's price could not be read to size it again: " + err.Error()
	}
	px, ok := snap.Mark(d.Venue, d.Symbol)
	if !ok || !px.IsPositive() {
		return fmt.Sprintf("venue %s has no price of %s now to size it again at", d.Venue, d.Symbol)
	}
	vc, _ := r.cfg.Project.Venue(d.Venue)
	dec := worker.Decision{HasTarget: !in.Qty, Target: in.Target}
	if in.Qty {
		q, _ := in.Quantity.Float64()
		if in.Side == string(command.Sell) {
			q = -q
		}
		dec = worker.Decision{HasQty: true, Qty: q}
	}
	qty := r.order(d, vc, dec, px, r.step(ctx, vc, d.Symbol))
	if qty.IsZero() {
		return fmt.Sprintf("at %s's price now, %s (the bar closed at %s), the target %v needs no order within the allowance", d.Symbol, px, p.BarClose, in.Target)
	}
	side := string(command.Buy)
	if qty.IsNegative() {
		side = string(command.Sell)
	}
	if side != in.Side {
		return fmt.Sprintf("at %s's price now, %s, reaching the target %v takes a %s, not the %s proposed", d.Symbol, px, in.Target, side, in.Side)
	}
	if !qty.Abs().Equal(in.Quantity) {
		r.log.Info("approved proposal re-sized at the price now", "deployment", d.ID, "client_order_id", in.ClientOrderID,
			"proposed", in.Quantity, "sent", qty.Abs(), "bar_close", p.BarClose, "price", px)
		in.Note = fmt.Sprintf("re-sized at approval from %s at the bar's close %s to %s at the price then, %s; ", in.Quantity, p.BarClose, qty.Abs(), px)
		in.Quantity = qty.Abs()
	}
	if command.OrderType(in.Type) == command.Bracket {
		if !d.Position.IsZero() { // no longer an entry from flat: its exits come after the fill
			in.Type, in.StopPrice, in.LimitPrice = "", decimal.Zero, decimal.Zero
		} else {
			asBracket(in, d, px, r.tick(ctx, vc, d.Symbol), vc)
		}
	}
	return ""
}
