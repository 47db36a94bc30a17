package front

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"wicket/agent"
	"wicket/internal/project"
	"wicket/strategy/research"
)

// TestSDKCancelStopsTheCall is issue 44's item 18: the official Go SDK's
// notifications/cancelled (protocol 2026-07-28: the version in its
// Mcp-Protocol-Version header, none in _meta) was answered 400, so the
// call it cancelled ran on. The front desk accepts it, and the cancelled
// sweep's context ends.
func TestSDKCancelStopsTheCall(t *testing.T) {
	fake := &blockingResearch{started: make(chan struct{}), stopped: make(chan struct{})}
	h, err := NewHTTP(agent.Options{Profile: agent.ProfileFull, NewID: uuid.NewString}, agent.Backends{Config: project.Defaults(), Research: fake},
		HTTPOptions{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := sdk.NewClient(&sdk.Implementation{Name: "go-sdk", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rec := &cancelRecorder{answered: make(chan struct{})}
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL + MCPPath, MaxRetries: -1, HTTPClient: &http.Client{Transport: rec}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	callCtx, stop := context.WithCancel(ctx)
	called := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(callCtx, &sdk.CallToolParams{Name: "run_sweep",
			Arguments: map[string]any{"source": "x", "series": "BTC-USD@1h", "grid": map[string]any{"fast": []int{1, 2}}}})
		called <- err
	}()
	waitFor(t, fake.started, "the sweep to start")
	stop()
	waitFor(t, called, "the cancelled call to return")
	waitFor(t, fake.stopped, "the sweep's context to end on the SDK's notifications/cancelled")
	waitFor(t, rec.answered, "the SDK's notifications/cancelled to be answered")
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.status != http.StatusAccepted {
		t.Errorf("notifications/cancelled (protocol %q, body %s) was answered %d %s; want 202", rec.version, rec.body, rec.status, rec.reply)
	}
}

// cancelRecorder notes how the server answered the client's
// notifications/cancelled.
type cancelRecorder struct {
	mu                   sync.Mutex
	status               int
	version, body, reply string
	answered             chan struct{}
	once                 sync.Once
}

func (r *cancelRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var sent []byte
	if req.Body != nil {
		sent, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(sent))
	}
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || !bytes.Contains(sent, []byte(`"notifications/cancelled"`)) {
		return res, err
	}
	reply, _ := io.ReadAll(res.Body)
	res.Body = io.NopCloser(bytes.NewReader(reply))
	r.mu.Lock()
	r.status, r.version, r.body, r.reply = res.StatusCode, req.Header.Get("Mcp-Protocol-Version"), string(sent), string(reply)
	r.mu.Unlock()
	r.once.Do(func() { close(r.answered) })
	return res, nil
}

// blockingResearch is a hand-written fake research service: its sweep
// reports progress and then blocks until its context ends.
type blockingResearch struct {
	agent.Research
	started, stopped chan struct{}
}

func (b *blockingResearch) Sweep(ctx context.Context, _ research.SweepRequest, progress func(research.Progress)) (research.SweepResult, error) {
	if progress != nil {
		progress(research.Progress{Done: 1, Total: 100})
	}
	close(b.started)
	<-ctx.Done()
	close(b.stopped)
	return research.SweepResult{Partial: true, PartialReason: ctx.Err().Error()}, nil
}

func waitFor[T any](t *testing.T, ch <-chan T, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(20 * time.Second):
		t.Fatalf("gave up waiting for %s", what)
	}
}
