package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"wicket/agent/approval"
	"wicket/internal/project"
	"wicket/node"
	"wicket/node/alert"
	"wicket/node/server"
)

// wicket approve --http: approvals away from the desk. The process holds
// the operator key, as `wicket approve` does, and watches the project's
// approval sockets; for each waiting command it mints a one-time link,
// bound to that command's preview (its id and the digest of what it
// shows), and sends it as a waiting-approval alert to [alerts]'s webhook.
// Opening the link shows the preview and asks; only a POST from that page
// answers, and the answer is signed here, on the server side, with the
// operator key. A link answers once: a replay, a link this process did
// not mint, a changed preview or a passed window is refused. It listens
// on loopback only; the operator's proxy (approve_url) may front it.
//
// The node's deployment proposals (a propose-mode deployment's orders)
// get links too, bound to the proposal (its digest); approving one sends
// it as wicket node approve-proposal does, signed here with the operator
// key; declining spends the link and sends nothing (the proposal lapses
// when its strategy decides another target). A proposal's link lives as
// long as the node lists the proposal.

// approveLinkBytes is a link token's size: 32 random bytes.
const approveLinkBytes = 32

// approveLink is one minted link: for a server's waiting command (w) or
// a node deployment's waiting proposal (p).
type approveLink struct {
	w      approval.Waiting
	p      *waitingProposal
	digest string // the preview the link is bound to
	used   bool
}

// key is what the link is minted for: a request id or a proposal's.
func (l *approveLink) key() string {
	if l.p != nil {
		return proposalKey(l.p.ClientOrderID)
	}
	return l.w.ID
}

func proposalKey(cid string) string { return "proposal " + cid }

// expired reports whether the link's window has passed at now; a
// proposal has none (it waits until its strategy decides another target).
func (l *approveLink) expired(now time.Time) bool {
	return l.p == nil && !now.Before(l.w.Expires)
}

// describe is what the link's page shows.
func (l *approveLink) describe(now time.Time) string {
	if l.p == nil {
		return l.w.Describe(now)
	}
	var b strings.Builder
	describeProposalOrder(&b, l.p.dep, l.p.Proposal)
	b.WriteString("approved, it is sized again at the venue's price then, within the deployment's allowance\n")
	return b.String()
}

// proposalDigest is the hex SHA-256 of what a proposal's link shows and
// sends: its deployment, order and bar.
func proposalDigest(w waitingProposal) string {
	d, p := w.dep, w.Proposal
	h := sha256.Sum256([]byte(strings.Join([]string{d.ID, d.Strategy, d.StrategyHash, d.Series, d.Venue, d.Symbol, p.ClientOrderID,
		p.Bar.UTC().Format(time.RFC3339Nano), p.Side, p.Quantity.String(), p.Symbol, p.Venue, p.BarClose.String(), p.Type,
		strconv.FormatFloat(p.Target, 'g', -1, 64), strconv.FormatBool(p.Qty)}, "\x00")))
	return hex.EncodeToString(h[:])
}

// linkApprover serves the one-time links.
type linkApprover struct {
	dir     string             // the approval sockets' directory
	key     ed25519.PrivateKey // the operator's: signs each answer
	base    string             // the links' base URL
	now     func() time.Time
	out     io.Writer
	node    deploymentsClient // the node's proposals; nil: none served
	nodeErr string            // the last error reading them, said once
	// raise sends a waiting-approval alert; decide answers the server
	// (approval.Decide; tests inject the same).
	raise  func(node.Alert)
	decide func(ctx context.Context, w approval.Waiting, approve bool, by string, key ed25519.PrivateKey) error

	mu     sync.Mutex
	links  map[string]*approveLink // token → link
	minted map[string]bool         // request ids and proposal keys with a link
}

// scan mints a link for each waiting command and proposal that has
// none, and forgets links whose window passed or whose proposal the node
// no longer lists.
func (a *linkApprover) scan(ctx context.Context) {
	waiting, errs := approval.List(ctx, a.dir)
	for _, err := range errs {
		fmt.Fprintf(a.out, "note: %v\n", err)
	}
	var proposals []waitingProposal
	listed := a.node == nil // with no node, no proposal link stands
	if a.node != nil {
		var err error
		if proposals, err = listProposals(ctx, a.node); err != nil {
			if msg := err.Error(); msg != a.nodeErr { // said once, not every scan
				a.nodeErr = msg
				fmt.Fprintf(a.out, "note: %s\n", msg)
			}
		} else {
			a.nodeErr = ""
			listed = true
		}
	}
	now := a.now()
	a.mu.Lock()
	waits := map[string]bool{}
	for _, p := range proposals {
		waits[p.ClientOrderID] = true
	}
	for tok, l := range a.links {
		if l.expired(now) || (l.p != nil && listed && !waits[l.p.ClientOrderID]) {
			delete(a.links, tok)
			delete(a.minted, l.key())
		}
	}
	var fresh []*approveLink
	var tokens []string
	mint := func(l *approveLink) {
		b := make([]byte, approveLinkBytes)
		if _, err := rand.Read(b); err != nil {
			return
		}
		tok := base64.RawURLEncoding.EncodeToString(b)
		a.links[tok], a.minted[l.key()] = l, true
		fresh, tokens = append(fresh, l), append(tokens, tok)
	}
	for _, w := range waiting {
		if a.minted[w.ID] || !now.Before(w.Expires) {
			continue
		}
		mint(&approveLink{w: w, digest: w.Digest()})
	}
	for i := range proposals {
		if p := &proposals[i]; !a.minted[proposalKey(p.ClientOrderID)] {
			mint(&approveLink{p: p, digest: proposalDigest(*p)})
		}
	}
	a.mu.Unlock()
	for i, l := range fresh {
		link := strings.TrimSuffix(a.base, "/") + "/a/" + tokens[i]
		var al node.Alert
		if p := l.p; p != nil {
			text := fmt.Sprintf("deployment %s (%s on %s) proposes: %s %s %s at market on venue %s; approve before its strategy decides another target",
				p.dep.ID, p.dep.Strategy, p.dep.Series, p.Side, p.Quantity, p.dep.Symbol, p.dep.Venue)
			al, _ = alert.New(alert.ApprovalWaiting, "approval-"+p.ClientOrderID, now, p.dep.Venue, text)
			fmt.Fprintf(a.out, "waiting: proposal %s of deployment %s — one-time link sent to the alert sinks\n", p.ClientOrderID, p.dep.ID)
		} else {
			text := fmt.Sprintf("%s (session %s) asks to send: %s; decide until %s", l.w.Tool, l.w.Session, l.w.Command, l.w.Expires.UTC().Format("15:04:05 UTC"))
			if l.w.Attention != "" {
				text = l.w.Attention + " " + text
			}
			al, _ = alert.New(alert.ApprovalWaiting, "approval-"+l.w.ID, now, "", text)
			fmt.Fprintf(a.out, "waiting: %s — one-time link sent to the alert sinks\n", l.w.Command)
		}
		al.Link = link
		a.raise(al)
	}
}

// Handler serves GET and POST /a/{token}; nothing it answers is cached,
// framed by another page or sent on as a referrer.
func (a *linkApprover) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /a/{token}", a.show)
	mux.HandleFunc("POST /a/{token}", a.answer)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", "no-store")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", "default-src 'none'; form-action 'self'; frame-ancestors 'none'")
		mux.ServeHTTP(w, r)
	})
}

// find is the link of token, and whether it may still answer: a token
// not minted here, used, or past its window is refused with the reason.
func (a *linkApprover) find(token string) (*approveLink, int, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var l *approveLink
	for tok, x := range a.links { // constant-time per token: a link is a secret
		if subtle.ConstantTimeCompare([]byte(tok), []byte(token)) == 1 {
			l = x
		}
	}
	switch {
	case l == nil:
		return nil, http.StatusNotFound, "this link was not issued by this approver (or it restarted); nothing was sent"
	case l.used:
		return nil, http.StatusGone, "this link has answered already; a link answers once, and nothing more was sent"
	case l.expired(a.now()):
		return nil, http.StatusGone, "this command's window has passed; nothing was sent"
	}
	return l, http.StatusOK, ""
}

var approvePage = template.Must(template.New("approve").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<meta name="robots" content="noindex"><title>wicket: approve?</title></head>
<body><h1>{{.Title}}</h1>
<pre>{{.Preview}}</pre>
<p>{{.Who}}. Approve only if you want it sent now; no decision sends nothing.</p>
<form method="post"><input type="hidden" name="digest" value="{{.Digest}}">
<button name="decision" value="approve">Approve and send</button>
<button name="decision" value="decline">Decline</button></form></body></html>
`))

// show is the preview. It answers nothing (a chat's link preview fetches
// it too).
func (a *linkApprover) show(w http.ResponseWriter, r *http.Request) {
	l, status, why := a.find(r.PathValue("token"))
	if l == nil {
		http.Error(w, why, status)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	page := map[string]string{"Title": "The agent asks to send this command", "Preview": l.describe(a.now()),
		"Who": l.w.Tool + ", session " + l.w.Session, "Digest": l.digest}
	if p := l.p; p != nil {
		page["Title"] = "A deployment proposes this order"
		page["Who"] = "Deployment " + p.dep.ID + " in propose mode"
	}
	_ = approvePage.Execute(w, page)
}

// answer takes the decision posted from the page: the link is spent
// before the answer is sent, so a replay, even a concurrent one, is
// refused; the preview it was minted for must still be the waiting one.
func (a *linkApprover) answer(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "unreadable form; nothing was sent", http.StatusBadRequest)
		return
	}
	decision := r.PostForm.Get("decision")
	if decision != "approve" && decision != "decline" {
		http.Error(w, "decision must be approve or decline; nothing was sent", http.StatusBadRequest)
		return
	}
	l, status, why := a.find(r.PathValue("token"))
	if l == nil {
		http.Error(w, why, status)
		return
	}
	if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("digest")), []byte(l.digest)) != 1 {
		http.Error(w, "this answer is not for the preview the link shows; nothing was sent", http.StatusConflict)
		return
	}
	a.mu.Lock()
	if l.used {
		a.mu.Unlock()
		http.Error(w, "this link has answered already; a link answers once, and nothing more was sent", http.StatusGone)
		return
	}
	l.used = true
	a.mu.Unlock()
	if l.p != nil {
		a.answerProposal(w, r, l, decision == "approve")
		return
	}
	// The command must still be waiting with the very preview the link
	// was minted for.
	waiting, _ := approval.List(r.Context(), a.dir)
	var cur *approval.Waiting
	for i := range waiting {
		if waiting[i].ID == l.w.ID && waiting[i].Socket == l.w.Socket {
			cur = &waiting[i]
		}
	}
	if cur == nil || cur.Digest() != l.digest {
		http.Error(w, "this command is no longer waiting with the preview the link showed; nothing was sent", http.StatusGone)
		return
	}
	by := "one-time link of wicket approve --http"
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	if err := a.decide(ctx, *cur, decision == "approve", by, a.key); err != nil {
		http.Error(w, "not decided: "+err.Error(), http.StatusConflict)
		return
	}
	fmt.Fprintf(a.out, "%sd through its one-time link: %s\n", decision, l.w.Command)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if decision == "approve" {
		fmt.Fprintln(w, "Approved: the server sends it now and reports the outcome to the agent.")
		return
	}
	fmt.Fprintln(w, "Declined: nothing is sent.")
}

// answerProposal answers a proposal's link, already spent: the proposal
// must still be waiting with the very preview the link was minted for;
// an approval is signed here with the operator key and sent once.
func (a *linkApprover) answerProposal(w http.ResponseWriter, r *http.Request, l *approveLink, approve bool) {
	waiting, err := listProposals(r.Context(), a.node)
	if err != nil {
		http.Error(w, "not decided: "+err.Error()+"; nothing was sent", http.StatusBadGateway)
		return
	}
	cid := l.p.ClientOrderID
	i := slices.IndexFunc(waiting, func(p waitingProposal) bool { return p.ClientOrderID == cid })
	if i < 0 || proposalDigest(waiting[i]) != l.digest {
		http.Error(w, "this proposal is no longer waiting with the preview the link showed (approved, or lapsed); nothing was sent", http.StatusGone)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if !approve {
		fmt.Fprintf(a.out, "declined through its one-time link: proposal %s of deployment %s\n", cid, l.p.dep.ID)
		fmt.Fprintln(w, "Declined: nothing is sent; the proposal lapses when its strategy decides another target.")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), nodeCallTimeout)
	defer cancel()
	got, err := approveProposal(ctx, a.node, a.key, cid)
	if err != nil {
		http.Error(w, "not sent: "+err.Error(), http.StatusConflict)
		return
	}
	fmt.Fprintf(a.out, "approved through its one-time link: proposal %s of deployment %s, order %s\n", cid, l.p.dep.ID, got.Status)
	fmt.Fprintf(w, "Approved: order %s %s %s is %s.\n", got.ClientOrderID, got.Side, got.Quantity, got.Status)
}

// runApproveHTTP serves the one-time links on listen (loopback only)
// until ctx ends, scanning for waiting commands every poll.
func runApproveHTTP(ctx context.Context, o approveOptions, listen string, stdout, stderr io.Writer) error {
	p, cfg, err := openProjectAt(o.project)
	if err != nil {
		return err
	}
	key, err := operatorKey(p) // every answer is signed with it, here
	if err != nil {
		return err
	}
	ln, err := server.Listen(listen, false)
	var le *server.ListenError
	if errors.As(err, &le) {
		return usageError{fmt.Errorf("--listen: %w (a proxy of the operator's may front it: set [alerts] approve_url)", err)}
	}
	if err != nil {
		return err
	}
	defer ln.Close()
	base := cfg.Alerts.ApproveURL
	if base == "" {
		base = "http://" + ln.Addr().String()
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	d, err := approveAlerts(p, cfg, log)
	if err != nil {
		return err
	}
	defer d.Close()
	a := &linkApprover{dir: p.StateDir(), key: key, base: base, now: o.now, out: stdout, decide: approval.Decide,
		raise: func(al node.Alert) { d.Raise(al) }, links: map[string]*approveLink{}, minted: map[string]bool{}}
	if client, _, err := armClientAt(o.project, o.addr); err != nil {
		fmt.Fprintf(stdout, "note: the node's deployment proposals get no links: %v\n", err)
	} else {
		a.node = client
	}
	hs := &http.Server{Handler: a.Handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()
	fmt.Fprintf(stdout, "wicket approve --http: serving one-time approval links on %s (links start %s/a/); Ctrl-C stops.\n", ln.Addr(), strings.TrimSuffix(base, "/"))
	if cfg.Alerts.Webhook == "" {
		fmt.Fprintln(stdout, "note: [alerts] webhook is not set in wicket.toml, so links are printed here only")
		a.raise = func(al node.Alert) { fmt.Fprintf(stdout, "link: %s\n", al.Link) }
	}
	t := time.NewTicker(o.poll)
	defer t.Stop()
	for {
		a.scan(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// approveAlerts is the dispatcher of waiting-approval alerts: the log
// and [alerts]'s webhook.
func approveAlerts(p project.Project, cfg project.Config, log *slog.Logger) (*alert.Dispatcher, error) {
	return nodeAlerts(p, cfg, log)
}
