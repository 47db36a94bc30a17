package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"wicket/strategy/templates"
	"wicket/strategy/worker"
)

// The protocol's corners: logging notifications,
// completions and the node watch behind resources/subscribe.

// notify sends a notifications/message to this session's client at level,
// when the client's level admits it. Only for what an agent should know
// when it happens (a worker killed, the node lost or back), never for
// per-call chatter.
func (s *Server) notify(level mcp.LoggingLevel, logger string, data any) {
	id, _ := s.client.Load().(string)
	if id == "" {
		return
	}
	_ = s.mcp.SendLogMessageToSpecificClient(id, mcp.NewLoggingMessageNotification(level, logger, data))
}

// notifyFailure tells the client about failures it should hear of at
// once: a strategy worker killed for its memory or CPU limit.
func (s *Server) notifyFailure(tool string, res *result) {
	var we *worker.Error
	if errors.As(res.cause, &we) && (we.Kind == worker.KindMemory || we.Kind == worker.KindCPU) {
		s.notify(mcp.LoggingLevelWarning, "worker", fmt.Sprintf("%s: a strategy worker was killed at its %s limit: %s", tool, we.Kind, res.errText))
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
// wicket://node/snapshot or has asked for log messages: a change of the
// trading state or a new node event sends notifications/resources/updated
// (at most once a second), and losing or regaining the node sends a
// notifications/message.
type nodeWatch struct {
	s *Server

	mu         sync.Mutex
	subscribed bool
	logs       bool
	listeners  map[*listener]bool // 2026-07-28 subscriptions/listen streams on the snapshot
	cancel     context.CancelFunc
	reachable  *bool
	lastKey    string
}

func newNodeWatch(s *Server) *nodeWatch { return &nodeWatch{s: s, listeners: map[*listener]bool{}} }

// listener is one open subscriptions/listen stream (protocol 2026-07-28)
// that asked for wicket://node/snapshot: notifications/resources/updated
// go to it directly, tagged with its subscription id, since mcp-go's
// broadcast reaches only legacy sessions with that method.
type listener struct {
	sess server.ClientSession
	id   any // the listen request's id (the wire layer's surrogate)
}

// listen is the BeforeSubscriptionsListen hook: a stream that names the
// snapshot joins the watch until its request ends. The watch reads the
// node once first (when it has not yet), so a change made after the
// client sees the acknowledgement is a change.
func (w *nodeWatch) listen(ctx context.Context, id any, req *mcp.SubscriptionsListenRequest) {
	sess := server.ClientSessionFromContext(ctx)
	if sess == nil || w.s.tb.Node == nil || !slices.Contains(req.Params.Notifications.ResourceSubscriptions, uriSnapshot) {
		return
	}
	l := &listener{sess: sess, id: id}
	w.mu.Lock()
	primed := w.lastKey != ""
	w.listeners[l] = true
	w.mu.Unlock()
	if !primed {
		w.poll(ctx)
	}
	w.ensure()
	go func() {
		<-ctx.Done()
		w.mu.Lock()
		delete(w.listeners, l)
		w.mu.Unlock()
	}()
}

// updated tells every listener that the snapshot changed.
func (w *nodeWatch) updated() {
	w.mu.Lock()
	ls := make([]*listener, 0, len(w.listeners))
	for l := range w.listeners {
		ls = append(ls, l)
	}
	w.mu.Unlock()
	for _, l := range ls {
		n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
			Method: string(mcp.MethodNotificationResourceUpdated),
			Params: mcp.NotificationParams{
				Meta:             map[string]any{mcp.MetaKeySubscriptionID: l.id},
				AdditionalFields: map[string]any{"uri": uriSnapshot},
			},
		}}
		select {
		case l.sess.NotificationChannel() <- n:
		default: // a stream that does not drain loses this update, never blocks the watch
		}
	}
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
	if w.cancel != nil || (!w.subscribed && !w.logs && len(w.listeners) == 0) || w.s.tb.Node == nil {
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
		w.updated()
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
	if was != nil && *was != up {
		w.updated() // the snapshot now reads unreachable, or again reachable
	}
	switch {
	case was == nil && !up, was != nil && *was && !up:
		w.s.notify(mcp.LoggingLevelWarning, "node", fmt.Sprintf("the node at %s is unreachable: %v; node tools will fail until it is back", w.s.opts.NodeAddr, err))
	case was != nil && !*was && up:
		w.s.notify(mcp.LoggingLevelNotice, "node", fmt.Sprintf("the node at %s is reachable again", w.s.opts.NodeAddr))
	}
}

var _ server.PromptCompletionProvider = completer{}
