package main

import (
	"context"
	"crypto/ed25519"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"wicket/agent/approval"
	"wicket/internal/testkit"
	"wicket/node"
)

// TestApproveLinkAnswersOnceAndRefusesForgeries: a waiting command gets
// one link (one alert, however often the approver scans); the link's page
// shows the preview and decides nothing; a forged link, an answer for
// another preview and a replay are refused; the answer that is taken is
// signed with the operator key, which the waiting server checks.
func TestApproveLinkAnswersOnceAndRefusesForgeries(t *testing.T) {
	dir, err := os.MkdirTemp("", "apph")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	key := testkit.Key(t)
	q, err := approval.Listen(dir, nil, key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	var raised []node.Alert
	a := &linkApprover{dir: dir, key: key, now: time.Now, out: io.Discard, decide: approval.Decide,
		raise: func(al node.Alert) { raised = append(raised, al) }, links: map[string]*approveLink{}, minted: map[string]bool{}}
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	a.base = srv.URL

	decided := make(chan approval.Decision, 1)
	go func() {
		d, err := q.Wait(context.Background(), approval.Request{ID: "prev-1", Session: "s1", Tool: "submit_order",
			Command: "submit_order: buy 1 SPY at market, day, on venue al"}, time.Now().Add(time.Minute))
		if err != nil {
			t.Errorf("wait: %v", err)
		}
		decided <- d
	}()
	for i := 0; i < 10000 && len(raised) == 0; i++ {
		a.scan(context.Background())
		runtime.Gosched()
	}
	a.scan(context.Background())
	if len(raised) != 1 {
		t.Fatalf("%d alerts for one waiting command, want 1", len(raised))
	}
	al := raised[0]
	if al.Kind != "approval_waiting" || al.ID != "approval-prev-1" || !strings.HasPrefix(al.Link, srv.URL+"/a/") || !strings.Contains(al.Text, "buy 1 SPY") {
		t.Fatalf("alert %+v", al)
	}
	link := al.Link

	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), "buy 1 SPY at market") || resp.Header.Get("X-Frame-Options") != "DENY" || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("GET link: %d %s", resp.StatusCode, page)
	}
	a.mu.Lock()
	digest := a.links[strings.TrimPrefix(link, srv.URL+"/a/")].digest
	a.mu.Unlock()

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
	if code, body := post(srv.URL+"/a/"+strings.Repeat("A", 43), digest, "approve"); code != http.StatusNotFound || !strings.Contains(body, "not issued") {
		t.Errorf("forged link: %d %s", code, body)
	}
	if code, body := post(link, strings.Repeat("0", 64), "approve"); code != http.StatusConflict || !strings.Contains(body, "not for the preview") {
		t.Errorf("answer for another preview: %d %s", code, body)
	}
	select {
	case d := <-decided:
		t.Fatalf("decided %+v by a refused answer", d)
	default:
	}
	if code, body := post(link, digest, "approve"); code != http.StatusOK || !strings.Contains(body, "Approved") {
		t.Fatalf("answer: %d %s", code, body)
	}
	d := <-decided
	if !d.Approved || !strings.Contains(d.By, "one-time link") {
		t.Errorf("decision %+v", d)
	}
	if code, body := post(link, digest, "approve"); code != http.StatusGone || !strings.Contains(body, "answered already") {
		t.Errorf("replay: %d %s", code, body)
	}
	if code, _ := post(link, digest, "decline"); code != http.StatusGone {
		t.Errorf("replay as a decline: %d", code)
	}

	// A link whose command's window has passed answers nothing.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_, _ = q.Wait(ctx, approval.Request{ID: "prev-2", Session: "s1", Tool: "cancel_order", Command: "cancel_order: cancel order ord-1 on venue al"},
			time.Now().Add(time.Minute))
	}()
	for i := 0; i < 10000 && len(raised) < 2; i++ {
		a.scan(context.Background())
		runtime.Gosched()
	}
	if len(raised) != 2 {
		t.Fatalf("no link for the second command: %d alerts", len(raised))
	}
	a.mu.Lock()
	late := a.links[strings.TrimPrefix(raised[1].Link, srv.URL+"/a/")].digest
	a.mu.Unlock()
	a.now = func() time.Time { return time.Now().Add(2 * time.Minute) }
	if code, body := post(raised[1].Link, late, "approve"); code != http.StatusGone || !strings.Contains(body, "window has passed") {
		t.Errorf("a late answer: %d %s", code, body)
	}
}
