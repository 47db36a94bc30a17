package alert_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/alert"
	"wicket/node/command"
)

// receiver is a webhook receiver on loopback that checks each delivery's
// signature and counts deliveries by alert id.
type receiver struct {
	*httptest.Server
	key []byte

	mu       sync.Mutex
	got      map[string]int
	bodies   map[string][]byte
	bad      int
	failNext int // answer 503 to this many deliveries first
	arrived  chan string
}

func newReceiver(t testing.TB, key []byte) *receiver {
	r := &receiver{key: key, got: map[string]int{}, bodies: map[string][]byte{}, arrived: make(chan string, 1024)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		if r.failNext > 0 {
			r.failNext--
			r.mu.Unlock()
			w.WriteHeader(http.StatusServiceUnavailable)
			r.arrived <- "failed"
			return
		}
		id := req.Header.Get(alert.HeaderID)
		if !alert.Verify(r.key, req.Header.Get(alert.HeaderTimestamp), body, req.Header.Get(alert.HeaderSignature)) {
			r.bad++
			r.mu.Unlock()
			w.WriteHeader(http.StatusUnauthorized)
			r.arrived <- "bad"
			return
		}
		r.got[id]++
		r.bodies[id] = body
		r.mu.Unlock()
		r.arrived <- id
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) wait(t testing.TB, n int) []string {
	t.Helper()
	var ids []string
	for len(ids) < n {
		select {
		case id := <-r.arrived:
			ids = append(ids, id)
		case <-time.After(10 * time.Second): // a bound on a hang, not a timing assertion
			t.Fatalf("the receiver got %d of %d deliveries", len(ids), n)
		}
	}
	return ids
}

func now() func() time.Time { return func() time.Time { return testkit.Time("2026-12-03T10:00:00Z") } }

func immediate(time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	ch <- time.Time{}
	return ch
}

func breakerEntry(ticket string) node.AuditEntry {
	return node.AuditEntry{Time: testkit.Time("2026-12-03T10:00:00Z"), Ticket: ticket, KeyID: node.KeyNode,
		Arming: &node.ArmingChange{Action: node.ArmingBreaker, Venue: "binance", Note: "daily loss 520 over max_daily_loss 500"}}
}

func TestWebhookGetsEachAlertOnceSigned(t *testing.T) {
	key := testkit.Bytes(t, 32)
	rc := newReceiver(t, key)
	rc.failNext = 1 // the first delivery is answered 503: retried, still once
	wh, err := alert.NewWebhook(rc.URL, key, "", rc.Client(), now())
	if err != nil {
		t.Fatal(err)
	}
	d := alert.NewDispatcher(alert.Options{Sinks: []alert.Sink{wh}, After: immediate})
	defer d.Close()

	d.Audit(breakerEntry("t1"))
	d.Audit(breakerEntry("t1"))                                                                                 // the same entry told twice: one alert
	d.Audit(node.AuditEntry{Ticket: "t2", Command: command.Command{Verb: command.SubmitOrder, Venue: "paper"}}) // no alert
	d.Audit(node.AuditEntry{Ticket: "t3", Arming: &node.ArmingChange{Action: "kill", Note: "operator kill: 3 orders canceled"}})
	d.Audit(node.AuditEntry{Ticket: "t4", Command: command.Command{Verb: "kill"}, Outcome: node.Outcome{Status: node.Rejected}}) // refused: no alert
	a, _ := alert.New(alert.ApprovalWaiting, "approval-p1", now()(), "", "submit_order: buy 1 SPY")
	if !d.Raise(a) || d.Raise(a) {
		t.Fatal("Raise takes an id once")
	}
	ids := slices.DeleteFunc(rc.wait(t, 4), func(id string) bool { return id == "failed" })
	slices.Sort(ids)
	if want := []string{"approval-p1", "audit-t1", "audit-t3"}; !slices.Equal(ids, want) {
		t.Fatalf("delivered %v, want %v", ids, want)
	}
	// Nothing else arrives: close the dispatcher (its queues are empty) and look.
	d.Close()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for id, n := range rc.got {
		if n != 1 {
			t.Errorf("alert %s delivered %d times", id, n)
		}
	}
	if rc.bad != 0 {
		t.Errorf("%d deliveries badly signed", rc.bad)
	}
	var got alert.Alert
	if err := json.Unmarshal(rc.bodies["audit-t1"], &got); err != nil {
		t.Fatal(err)
	}
	if got.Kind != string(alert.BreakerTrip) || got.Severity != string(alert.Critical) || got.Venue != "binance" || got.Text != "venue binance: daily loss 520 over max_daily_loss 500" {
		t.Errorf("breaker alert = %+v", got)
	}
	recent, n := d.Recent(0)
	if n != 3 || len(recent) != 3 {
		t.Errorf("recent = %d alerts of %d, want 3", len(recent), n)
	}
	if more, _ := d.Recent(n); len(more) != 0 {
		t.Errorf("nothing new after %d, got %v", n, more)
	}
}

func TestForgedSignatureFails(t *testing.T) {
	key, other := testkit.Bytes(t, 32), testkit.Bytes(t, 32)
	body := []byte(`{"id":"x"}`)
	sig := alert.Sign(key, "1700000000", body)
	if !alert.Verify(key, "1700000000", body, sig) {
		t.Fatal("a good signature fails")
	}
	if alert.Verify(other, "1700000000", body, sig) || alert.Verify(key, "1700000001", body, sig) || alert.Verify(key, "1700000000", []byte(`{"id":"y"}`), sig) {
		t.Fatal("a signature under another key, time or body passes")
	}
}

func TestRetriesAreBounded(t *testing.T) {
	key := testkit.Bytes(t, 32)
	rc := newReceiver(t, key)
	rc.failNext = 100
	wh, _ := alert.NewWebhook(rc.URL, key, "", rc.Client(), now())
	var waits []time.Duration
	var mu sync.Mutex
	d := alert.NewDispatcher(alert.Options{Sinks: []alert.Sink{wh}, Attempts: 3, Backoff: time.Second, After: func(w time.Duration) <-chan time.Time {
		mu.Lock()
		waits = append(waits, w)
		mu.Unlock()
		return immediate(w)
	}})
	defer d.Close()
	d.Audit(breakerEntry("t9"))
	rc.wait(t, 3)
	d.Close()
	rc.mu.Lock()
	left := rc.failNext
	rc.mu.Unlock()
	if tried := 100 - left; tried != 3 {
		t.Errorf("tried %d times, want 3", tried)
	}
	if !slices.Equal(waits, []time.Duration{time.Second, 2 * time.Second}) {
		t.Errorf("waits %v", waits)
	}
}

func TestTemplates(t *testing.T) {
	key := testkit.Bytes(t, 32)
	a, _ := alert.New(alert.StatementMismatch, "s1", now()(), "binance", `2 mismatches on 2026-12-02: "missing" fill`)
	a.Link = "https://example.test/a/1"
	for name, field := range map[string]string{"slack": "text", "discord": "content"} {
		wh, err := alert.NewWebhook("https://hooks.example.test/x", key, name, nil, now())
		if err != nil {
			t.Fatal(err)
		}
		b, err := wh.Body(a)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]string
		if err := json.Unmarshal(b, &m); err != nil || m[field] == "" {
			t.Fatalf("%s body %s: %v", name, b, err)
		}
	}
	if _, err := alert.NewWebhook("https://hooks.example.test/x", key, "{{.Nope", nil, now()); err == nil {
		t.Error("a bad template is taken")
	}
	if _, err := alert.NewWebhook("https://hooks.example.test/x", key[:8], "", nil, now()); err == nil {
		t.Error("a short key is taken")
	}
}

// BenchmarkAuditToWebhook measures an alert's latency from the audit
// entry to the webhook receiver on loopback (p50 and p99).
func BenchmarkAuditToWebhook(b *testing.B) {
	key := testkit.Bytes(b, 32)
	rc := newReceiver(b, key)
	wh, _ := alert.NewWebhook(rc.URL, key, "", rc.Client(), time.Now)
	d := alert.NewDispatcher(alert.Options{Sinks: []alert.Sink{wh}})
	defer d.Close()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		d.Audit(breakerEntry("b" + strconv.Itoa(i)))
		<-rc.arrived
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	_ = context.Background()
}

// TestRiskEntriesAlert: each audit entry the risk controls record (kill,
// resume, the dead man's switch, a venue's stream loss) raises its alert,
// and the operator's heartbeat, which changes nothing, raises none.
func TestRiskEntriesAlert(t *testing.T) {
	for action, want := range map[node.ArmingAction]alert.Kind{
		node.ArmingKill: alert.Kill, node.ArmingResumeTrading: alert.ResumeTrading,
		node.ArmingSilence: alert.HeartbeatLapse, node.ArmingStreamLoss: alert.StreamLost, node.ArmingBreaker: alert.BreakerTrip,
	} {
		e := node.AuditEntry{Time: testkit.Time("2026-12-03T10:00:00Z"), Ticket: "t-" + string(action), KeyID: node.KeyOperator,
			Arming: &node.ArmingChange{Action: action, Note: "why"}, Outcome: node.Outcome{Status: node.Accepted}}
		a, ok := alert.FromAudit(e)
		if !ok || a.Kind != string(want) {
			t.Errorf("%s raised %+v, %v; want %s", action, a, ok, want)
		}
	}
	beat := node.AuditEntry{Time: testkit.Time("2026-12-03T10:00:00Z"), Ticket: "t-beat", KeyID: node.KeyOperator,
		Arming: &node.ArmingChange{Action: node.ArmingAction(node.ActHeartbeat)}, Outcome: node.Outcome{Status: node.Accepted}}
	if a, ok := alert.FromAudit(beat); ok {
		t.Errorf("a heartbeat raised %+v", a)
	}
}
