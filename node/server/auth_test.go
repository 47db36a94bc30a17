package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"wicket/node"
	"wicket/node/command"
	"wicket/node/nodetest"
)

// raw sends a hand-signed request and returns the status and error code.
func raw(t *testing.T, srv *nodetest.Server, method, target, keyID, key, ts, nonce string, body []byte, tamper func(*http.Request)) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+srv.Addr+target, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if keyID != "" {
		req.Header.Set(node.HeaderKey, keyID)
		req.Header.Set(node.HeaderTimestamp, ts)
		req.Header.Set(node.HeaderNonce, nonce)
		req.Header.Set(node.HeaderSignature, node.Sign(key, method, target, ts, nonce, body))
	}
	if tamper != nil {
		tamper(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var eb struct {
		Error *node.Error `json:"error"`
	}
	_ = json.Unmarshal(data, &eb)
	if eb.Error == nil {
		return resp.StatusCode, ""
	}
	return resp.StatusCode, eb.Error.Code
}

// TestSigning checks that each way a request can be wrongly signed is
// refused with its own status and code, and that nothing it carried was
// executed.
func TestSigning(t *testing.T) {
	srv := nodetest.NewServer(t)
	now := node.Timestamp(time.Now())
	env, _ := json.Marshal(command.NewEnvelope(command.Command{Verb: command.SetTradingState, State: command.Halted}, "signing test"))
	nonces := 0
	fresh := func() string { nonces++; return strings.Repeat("n", 20) + string(rune('a'+nonces)) }

	tests := []struct {
		name                string
		method, target, key string
		keyID, ts           string
		body                []byte
		tamper              func(*http.Request)
		status              int
		code                string
	}{
		{"good read", "GET", "/v1/health", srv.ObserveKey, node.KeyObserve, now, nil, nil, 200, ""},
		{"unsigned", "GET", "/v1/health", "", "", now, nil, nil, 401, "unsigned"},
		{"bad signature", "GET", "/v1/health", srv.ObserveKey + "x", node.KeyObserve, now, nil, nil, 401, "bad_signature"},
		{"control key under the observe id", "GET", "/v1/health", srv.ControlKey, node.KeyObserve, now, nil, nil, 401, "bad_signature"},
		{"query changed in transit", "GET", "/v1/snapshot?venue=paper", srv.ObserveKey, node.KeyObserve, now, nil,
			func(r *http.Request) { r.URL.RawQuery = "venue=other" }, 401, "bad_signature"},
		{"body changed in transit", "POST", "/v1/commands", srv.ControlKey, node.KeyControl, now, env,
			func(r *http.Request) {
				b := bytes.Replace(env, []byte("halted"), []byte("active"), 1)
				r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
			}, 401, "bad_signature"},
		{"unknown key id", "GET", "/v1/health", srv.ObserveKey, "admin", now, nil, nil, 401, "unknown_key"},
		{"short nonce", "GET", "/v1/health", srv.ObserveKey, node.KeyObserve, now, nil,
			func(r *http.Request) { r.Header.Set(node.HeaderNonce, "short") }, 401, "bad_nonce"},
		{"timestamp not in unix seconds", "GET", "/v1/health", srv.ObserveKey, node.KeyObserve, "2025-01-02T15:04:05Z", nil, nil, 401, "bad_timestamp"},
		{"stale timestamp", "GET", "/v1/health", srv.ObserveKey, node.KeyObserve, node.Timestamp(time.Now().Add(-31 * time.Second)), nil, nil, 401, "stale_timestamp"},
		{"future timestamp", "GET", "/v1/health", srv.ObserveKey, node.KeyObserve, node.Timestamp(time.Now().Add(time.Minute)), nil, nil, 401, "stale_timestamp"},
		{"observe key writes", "POST", "/v1/commands", srv.ObserveKey, node.KeyObserve, now, env, nil, 403, "observe_key_cannot_write"},
		{"observe key may dry-run", "POST", "/v1/dry-run", srv.ObserveKey, node.KeyObserve, now, env, nil, 200, ""},
		{"control key writes", "POST", "/v1/commands", srv.ControlKey, node.KeyControl, now, env, nil, 202, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, code := raw(t, srv, tt.method, tt.target, tt.keyID, tt.key, tt.ts, fresh(), tt.body, tt.tamper)
			if status != tt.status || code != tt.code {
				t.Errorf("got %d %q, want %d %q", status, code, tt.status, tt.code)
			}
		})
	}

	t.Run("replayed nonce", func(t *testing.T) {
		n := fresh()
		if status, code := raw(t, srv, "GET", "/v1/health", node.KeyObserve, srv.ObserveKey, now, n, nil, nil); status != 200 {
			t.Fatalf("first use: %d %s", status, code)
		}
		if status, code := raw(t, srv, "GET", "/v1/health", node.KeyObserve, srv.ObserveKey, now, n, nil, nil); status != 401 || code != "replayed_nonce" {
			t.Errorf("replay: got %d %q, want 401 replayed_nonce", status, code)
		}
	})

	// Only the one properly signed write went through: the node is halted
	// once, by the control key, and the audit trail says so. (A snapshot
	// runs on the fold after the queued write, so the write is committed.)
	if s := snapshot(t, srv.Client()); s.TradingState != command.Halted {
		t.Errorf("trading state = %s, want halted", s.TradingState)
	}
	page, err := srv.Client().Audit(context.Background(), node.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Entries) != 1 || page.Entries[0].KeyID != node.KeyControl || page.Entries[0].Reason != "signing test" {
		t.Errorf("audit = %+v, want the one control-key write", page.Entries)
	}
}

// TestClientErrorKinds checks the kinds a client reports, read with
// errors.As.
func TestClientErrorKinds(t *testing.T) {
	srv := nodetest.NewServer(t)
	ctx := context.Background()
	kind := func(err error) node.Kind {
		var ne *node.Error
		if !errors.As(err, &ne) {
			t.Fatalf("error %v is not a *node.Error", err)
		}
		return ne.Kind
	}

	wrong, _ := node.NewClient(srv.Addr, srv.ControlKey, srv.ObserveKey) // keys swapped
	if _, err := wrong.Health(ctx); kind(err) != node.KindAuth {
		t.Errorf("wrong keys: %v", err)
	}
	skewed := srv.Client(node.WithClock(func() time.Time { return time.Now().Add(-time.Hour) }))
	if _, err := skewed.Snapshot(ctx, "", 0); kind(err) != node.KindAuth || !strings.Contains(err.Error(), "stale_timestamp") {
		t.Errorf("skewed clock: %v", err)
	}
	fixed := srv.Client(node.WithNonce(func() string { return "the-same-nonce-every-time" }))
	if _, err := fixed.Health(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := fixed.Health(ctx); kind(err) != node.KindAuth || !strings.Contains(err.Error(), "replayed_nonce") {
		t.Errorf("fixed nonce: %v", err)
	}
	readOnly, _ := node.NewClient(srv.Addr, srv.ObserveKey, "")
	if _, err := readOnly.Submit(ctx, command.NewEnvelope(command.Command{Verb: command.MarketExit}, "")); kind(err) != node.KindForbidden {
		t.Errorf("read-only client write: %v", err)
	}
	controlOnly, _ := node.NewClient(srv.Addr, "", srv.ControlKey) // the control key may read
	if _, err := controlOnly.Snapshot(ctx, "", 0); err != nil {
		t.Errorf("control-key-only client read: %v", err)
	}
	if _, err := srv.Client().Snapshot(ctx, "nowhere", 0); kind(err) != node.KindNotFound || !strings.Contains(err.Error(), "this node has: paper") {
		t.Errorf("unknown venue: %v", err)
	}
	if _, err := srv.Client().Ticket(ctx, "tk-nope", 0); kind(err) != node.KindNotFound {
		t.Errorf("unknown ticket: %v", err)
	}
	other := httptest.NewServer(http.NotFoundHandler()) // not a node
	defer other.Close()
	stranger, _ := node.NewClient(other.URL, srv.ObserveKey, srv.ControlKey)
	if _, err := stranger.Health(ctx); kind(err) != node.KindBadRequest || !strings.Contains(err.Error(), "a wicket node (wicket node serve)?") {
		t.Errorf("a server that is not a node: %v", err)
	}
	if fmt := srv.Client().String(); strings.Contains(fmt, srv.ObserveKey) || strings.Contains(fmt, srv.ControlKey) {
		t.Error("Client.String shows a key")
	}

	addr := srv.Addr
	srv.Close()
	gone, _ := node.NewClient(addr, srv.ObserveKey, srv.ControlKey)
	if _, err := gone.Health(ctx); kind(err) != node.KindUnreachable {
		t.Errorf("stopped node: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, time.Nanosecond)
	defer cancel()
	<-short.Done()
	if _, err := gone.Health(short); kind(err) != node.KindTimeout {
		t.Errorf("expired deadline: %v", err)
	}
}
