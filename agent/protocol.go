package agent

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"wicket/strategy/templates"
	"wicket/strategy/worker"
)

// The protocol's corners: completions and the node watch behind
// resources/subscribe and subscriptions/listen (notices: listen.go).

// notifyFailure tells the client about failures it should hear of at
// once: a strategy worker killed for its memory or CPU limit.
func (s *Server) notifyFailure(tool string, res *result) {
	var we *worker.Error
	if errors.As(res.cause, &we) && (we.Kind == worker.KindMemory || we.Kind == worker.KindCPU) {
		s.announce(mcp.LoggingLevelWarning, "worker", fmt.Sprintf("%s: a strategy worker was killed at its %s limit: %s", tool, we.Kind, res.errText))
	}
}

// completer completes prompt arguments and resource-template variables
// from real names: strategies, templates and series.
type completer struct{ s *Server }

const maxCompletions = 100

func (c completer) CompletePromptArgument(ctx context.Context, _ string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	return c.complete(ctx, arg), nil
}

func (c completer) CompleteResourceArgument(ctx context.Context, _ string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	return c.complete(ctx, arg), nil
}

func (c completer) complete(ctx context.Context, arg mcp.CompleteArgument) *mcp.Completion {
	var names []string
	switch arg.Name {
	case "series":
		names = c.s.tb.seriesNames(ctx)
	case "strategy", "name":
		names = c.s.tb.strategyNames(ctx)
	case "template":
		for _, t := range templates.List() {
			names = append(names, t.Name)
		}
	case "venue":
		for _, v := range c.s.venues.list() {
			names = append(names, v["name"].(string))
		}
	}
	var match []string
	for _, n := range names {
		if strings.HasPrefix(strings.ToLower(n), strings.ToLower(arg.Value)) {
			match = append(match, n)
		}
	}
	sort.Strings(match)
	out := &mcp.Completion{Values: []string{}, Total: len(match)}
	if len(match) > maxCompletions {
		match, out.HasMore = match[:maxCompletions], true
	}
	out.Values = append(out.Values, match...)
	return out
}

// seriesNames lists the stored series, or none when there is no store.
func (tb *toolbox) seriesNames(ctx context.Context) []string {
	if tb.Research == nil {
		return nil
	}
	list, err := tb.Research.ListSeries(ctx)
	if err != nil {
		return nil
	}
	var out []string
	for _, s := range list.Series {
		out = append(out, s.Series)
	}
	return out
}

// strategyNames lists the project's strategies, or none.
func (tb *toolbox) strategyNames(ctx context.Context) []string {
	if tb.Research == nil {
		return nil
	}
	list, err := tb.Research.ListStrategies(ctx)
	if err != nil {
		return nil
	}
	var out []string
	for _, s := range list.Strategies {
		out = append(out, s.Name)
	}
	return out
}

// watchInterval spaces node polls, and so resources/updated notifications:
// at most one a second.
const watchInterval = time.Second

// nodeWatch polls the node while the client is subscribed to
// wicket://node/snapshot (resources/subscribe, or a subscriptions/listen
// stream), has asked for log messages, or listens for notices: a change
// of the trading state or a new node event sends
// notifications/resources/updated (at most once a second), and losing or
// regaining the node is a notice (listen.go).
type nodeWatch struct {
	s *Server

	mu         sync.Mutex
	subscribed bool
	logs       bool
	cancel     context.CancelFunc
	reachable  *bool
	lastKey    string
	risk       riskSeen // the kill and the dead man's switch last seen (tools_risk.go)
}

func newNodeWatch(s *Server) *nodeWatch { return &nodeWatch{s: s} }

// prime reads the node once when the watch has not yet (so a change made
// after a listen stream is acknowledged is a change) and starts it.
func (w *nodeWatch) prime(ctx context.Context) {
	if w.s.tb.Node == nil {
		return
	}
	w.mu.Lock()
	primed := w.lastKey != ""
	w.mu.Unlock()
	if !primed {
		w.poll(ctx)
	}
	w.ensure()
}

func (w *nodeWatch) subscribe(on bool) {
	w.mu.Lock()
	w.subscribed = on
	w.mu.Unlock()
	w.ensure()
}

func (w *nodeWatch) wantLogs() {
	w.mu.Lock()
	w.logs = true
	w.mu.Unlock()
	w.ensure()
}

// ensure starts the poller when it is wanted and a node is configured.
func (w *nodeWatch) ensure() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cancel != nil || (!w.subscribed && !w.logs && !w.s.listen.wants(uriSnapshot) && !w.s.listen.wants(uriSession)) || w.s.tb.Node == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	go w.run(ctx)
}

func (w *nodeWatch) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cancel != nil {
		w.cancel()
		w.cancel = nil
	}
}

func (w *nodeWatch) run(ctx context.Context) {
	t := time.NewTicker(watchInterval)
	defer t.Stop()
	for {
		w.poll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (w *nodeWatch) poll(ctx context.Context) {
	pctx, cancel := context.WithTimeout(ctx, watchInterval)
	defer cancel()
	snap, err := w.s.tb.Node.Snapshot(pctx, "", 1)
	if ctx.Err() != nil {
		return
	}
	w.observe(err)
	if err != nil {
		return
	}
	w.risk.notice(w.s, snap)
	w.pollAlerts(ctx) // alerts.go
	key := string(snap.TradingState)
	if n := len(snap.Events); n > 0 {
		key += fmt.Sprintf("/%d", snap.Events[n-1].Seq)
	}
	w.mu.Lock()
	changed := w.lastKey != "" && key != w.lastKey
	w.lastKey = key
	subscribed := w.subscribed
	w.mu.Unlock()
	if changed && subscribed {
		w.s.mcp.SendNotificationToAllClients(string(mcp.MethodNotificationResourceUpdated), map[string]any{"uri": uriSnapshot})
	}
	if changed {
		w.s.listen.updated(uriSnapshot, nil)
	}
}

// observe records whether the node answered and tells the client when
// that changes.
func (w *nodeWatch) observe(err error) {
	up := err == nil
	w.mu.Lock()
	was := w.reachable
	w.reachable = &up
	w.mu.Unlock()
	switch {
	case was == nil && !up, was != nil && *was && !up:
		w.s.announce(mcp.LoggingLevelWarning, "node", fmt.Sprintf("the node at %s is unreachable: %v; node tools will fail until it is back", w.s.opts.NodeAddr, err))
	case was != nil && !*was && up:
		w.s.announce(mcp.LoggingLevelNotice, "node", fmt.Sprintf("the node at %s is reachable again", w.s.opts.NodeAddr))
	}
}

var _ server.PromptCompletionProvider = completer{}

// Logging is served to legacy sessions only: protocol 2026-07-28
// deprecates it (SEP-2577), and wicket's notices reach a modern caller
// through subscriptions/listen instead (listen.go). server/discover
// therefore does not advertise it, while initialize still does:
// modernDiscover is the AfterDiscover hook, and the capabilities a modern
// client is offered are the legacy ones without logging.
func modernDiscover(_ context.Context, _ any, _ *mcp.DiscoverRequest, res *mcp.DiscoverResult) {
	if res != nil {
		res.Capabilities.Logging = nil
	}
}
