package main

import (
	"context"
	"crypto/ed25519"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/deploy"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/nodetest"
	"wicket/strategy/worker"
)

// proposalNode is a node running deployments whose runner takes the
// node's operator key, with n propose-mode deployments each holding one
// waiting proposal (a buy after an up bar).
func proposalNode(t *testing.T, n int) (*nodetest.Server, *deploy.Runner, []deploy.Deployment) {
	t.Helper()
	h := deploy.NewHandler()
	ns := nodetest.NewServer(t, nodetest.WithDeployments(h))
	pool, err := worker.NewPool(worker.Config{Size: 1, Command: []string{builtWicket(t)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	store, err := deploy.OpenStore(filepath.Join(t.TempDir(), "deployments.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	ctx := context.Background()
	r, err := deploy.New(ctx, deploy.Config{Project: ns.Config, Store: store, Node: ns.Client(), Strategies: pool,
		OperatorKey: ns.OperatorKey.Public().(ed25519.PublicKey)})
	if err != nil {
		t.Fatal(err)
	}
	h.Attach(r)
	snap, err := ns.Client().Snapshot(ctx, "paper", 0)
	if err != nil {
		t.Fatal(err)
	}
	mark, _ := snap.Mark("paper", "BTC-USD")
	px, _ := mark.Float64()
	bar := deploy.Bar{Time: time.Now().UTC().Truncate(time.Minute).Add(-time.Minute), Open: px * 0.99, High: px, Low: px * 0.99, Close: px, Volume: 1}
	var deps []deploy.Deployment
	for i := range n {
		d, err := r.Create(ctx, deploy.Spec{Strategy: "flip.star", Source: deployFlip, Series: "BTC-USD@1m", Venue: "paper",
			Mode: deploy.ModePropose, Capital: decimal.NewFromInt(int64(1000 * (i + 1)))})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Step(ctx, d.ID, bar); err != nil {
			t.Fatal(err)
		}
		if d, err = r.Get(d.ID); err != nil || len(d.Proposals) != 1 {
			t.Fatalf("after an up bar deployment %d proposes %+v (%v)", i, d.Proposals, err)
		}
		deps = append(deps, d)
	}
	return ns, r, deps
}

// acceptedOrders counts the orders the node took with client order id cid.
func acceptedOrders(t *testing.T, n *nodetest.Server, cid string) int {
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

// TestApproveLinksForDeploymentProposals: wicket approve --http mints one
// link per waiting deployment proposal (one alert, however often it
// scans); the page shows the proposal and sends nothing; a forged link
// and an answer for another preview are refused; an approval is signed
// here with the operator key and sends the order once; a replay sends
// nothing more; a declined proposal is never sent; a link whose proposal
// the node no longer lists is forgotten.
func TestApproveLinksForDeploymentProposals(t *testing.T) {
	ns, r, deps := proposalNode(t, 2)
	yes, no := deps[0], deps[1]
	py, pn := yes.Proposals[0], no.Proposals[0]
	dir := t.TempDir()
	var raised []node.Alert
	a := &linkApprover{dir: dir, key: ns.OperatorKey, now: time.Now, out: io.Discard, node: ns.Client(),
		raise: func(al node.Alert) { raised = append(raised, al) }, links: map[string]*approveLink{}, minted: map[string]bool{}}
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	a.base = srv.URL
	for range 3 {
		a.scan(context.Background())
	}
	if len(raised) != 2 {
		t.Fatalf("%d alerts for two waiting proposals, want 2: %+v", len(raised), raised)
	}
	links := map[string]string{} // client order id → link
	for _, al := range raised {
		for _, p := range []deploy.Proposal{py, pn} {
			if al.ID == "approval-"+p.ClientOrderID {
				links[p.ClientOrderID] = al.Link
				if al.Kind != "approval_waiting" || !strings.HasPrefix(al.Link, srv.URL+"/a/") || !strings.Contains(al.Text, "proposes: buy "+p.Quantity.String()+" BTC-USD") {
					t.Errorf("alert %+v", al)
				}
			}
		}
	}
	if len(links) != 2 {
		t.Fatalf("alerts %+v", raised)
	}
	resp, err := http.Get(links[py.ClientOrderID])
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), "proposal     "+py.ClientOrderID+" of deployment "+yes.ID) ||
		!strings.Contains(string(page), "A deployment proposes this order") || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("GET link: %d %s", resp.StatusCode, page)
	}
	digest := func(link string) string {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.links[strings.TrimPrefix(link, srv.URL+"/a/")].digest
	}
	post := func(u, digest, decision string) (int, string) {
		t.Helper()
		resp, err := http.PostForm(u, url.Values{"digest": {digest}, "decision": {decision}})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	dy := digest(links[py.ClientOrderID])
	if code, body := post(srv.URL+"/a/"+strings.Repeat("B", 43), dy, "approve"); code != http.StatusNotFound || !strings.Contains(body, "not issued") {
		t.Errorf("forged link: %d %s", code, body)
	}
	if code, body := post(links[py.ClientOrderID], digest(links[pn.ClientOrderID]), "approve"); code != http.StatusConflict || !strings.Contains(body, "not for the preview") {
		t.Errorf("answer for another proposal: %d %s", code, body)
	}
	if got := acceptedOrders(t, ns, py.ClientOrderID) + acceptedOrders(t, ns, pn.ClientOrderID); got != 0 {
		t.Fatalf("%d orders before any approval", got)
	}
	if code, body := post(links[py.ClientOrderID], dy, "approve"); code != http.StatusOK || !strings.Contains(body, "Approved: order "+py.ClientOrderID) {
		t.Fatalf("approve: %d %s", code, body)
	}
	if got := acceptedOrders(t, ns, py.ClientOrderID); got != 1 {
		t.Fatalf("the approved proposal reached the node %d times", got)
	}
	if code, body := post(links[py.ClientOrderID], dy, "approve"); code != http.StatusGone || !strings.Contains(body, "answered already") {
		t.Errorf("replay: %d %s", code, body)
	}
	if code, body := post(links[pn.ClientOrderID], digest(links[pn.ClientOrderID]), "decline"); code != http.StatusOK || !strings.Contains(body, "Declined") {
		t.Errorf("decline: %d %s", code, body)
	}
	if code, _ := post(links[pn.ClientOrderID], digest(links[pn.ClientOrderID]), "approve"); code != http.StatusGone {
		t.Errorf("an approval after the decline: %d", code)
	}
	if got := acceptedOrders(t, ns, py.ClientOrderID); got != 1 {
		t.Fatalf("after the replay the approved proposal reached the node %d times", got)
	}
	if got := acceptedOrders(t, ns, pn.ClientOrderID); got != 0 {
		t.Fatalf("the declined proposal reached the node %d times", got)
	}
	if d, _ := r.Get(yes.ID); !d.Position.Equal(py.Quantity) || len(d.Proposals) != 0 {
		t.Fatalf("approved deployment: position %s, proposals %v", d.Position, d.Proposals)
	}
	a.scan(context.Background()) // the approved proposal is no longer listed: its link is forgotten
	if code, body := post(links[py.ClientOrderID], dy, "approve"); code != http.StatusNotFound {
		t.Errorf("a link of a proposal no longer waiting: %d %s", code, body)
	}
	if len(raised) != 2 {
		t.Errorf("%d alerts after the answers, want still 2", len(raised))
	}
}

// TestApproveLinkOfAProposalSignedByAnotherKey: a link answered by an
// approver holding a key that is not the operator's sends nothing (the
// node's deployments verify the signature).
func TestApproveLinkOfAProposalSignedByAnotherKey(t *testing.T) {
	ns, _, deps := proposalNode(t, 1)
	p := deps[0].Proposals[0]
	var raised []node.Alert
	a := &linkApprover{dir: t.TempDir(), key: testkit.Key(t), now: time.Now, out: io.Discard, node: ns.Client(),
		raise: func(al node.Alert) { raised = append(raised, al) }, links: map[string]*approveLink{}, minted: map[string]bool{}}
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	a.base = srv.URL
	a.scan(context.Background())
	if len(raised) != 1 {
		t.Fatalf("%d alerts", len(raised))
	}
	tok := strings.TrimPrefix(raised[0].Link, srv.URL+"/a/")
	resp, err := http.PostForm(raised[0].Link, url.Values{"digest": {a.links[tok].digest}, "decision": {"approve"}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict || !strings.Contains(string(body), "not sent") {
		t.Errorf("an answer signed by another key: %d %s", resp.StatusCode, body)
	}
	if got := acceptedOrders(t, ns, p.ClientOrderID); got != 0 {
		t.Fatalf("a proposal answered with another key reached the node %d times", got)
	}
}
