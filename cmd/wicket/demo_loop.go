package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// loop drives the traced server through the whole agent loop. A step that
// misbehaves is recorded and the loop goes on, so the transcript shows
// everything that happened.
func (d *demo) loop(ctx context.Context, s *mcpSession) {
	d.section("Session")
	if sess, err := readSessionResource(ctx, s); err != nil {
		d.fail("read wicket://session: %v", err)
	} else {
		d.session, _ = sess["session"].(string)
		d.say("wicket://session: profile %v, %d tools served, trace on, session %s", sess["profile"], len(asList(sess["served"])), short(d.session))
	}

	d.section("Author")
	var source string
	d.step(ctx, s, "list_templates", nil, func(r demoCall) error {
		n := len(asList(r.obj["templates"]))
		if n < 8 {
			return fmt.Errorf("%d templates, want at least 8", n)
		}
		d.say("%d templates, e.g. %s", n, templateNames(r.obj, 4))
		return nil
	})
	d.step(ctx, s, "list_templates", map[string]any{"name": "sma_cross"}, func(r demoCall) error {
		source, _ = r.obj["source"].(string)
		if source == "" {
			return fmt.Errorf("no source")
		}
		d.say("sma_cross: %s (%d lines)", r.obj["summary"], strings.Count(source, "\n"))
		return nil
	})
	d.step(ctx, s, "validate_strategy", map[string]any{"source": source}, func(r demoCall) error {
		if r.obj["valid"] != true {
			return fmt.Errorf("template reported invalid: %s", r.text)
		}
		d.say("valid, style %v, warm-up %v bars, %d problems", r.obj["style"], r.obj["warmup"], len(asList(r.obj["problems"])))
		return nil
	})
	d.step(ctx, s, "discover_params", map[string]any{"source": source}, func(r demoCall) error {
		var names []string
		for _, k := range asList(r.obj["params"]) {
			if m, ok := k.(map[string]any); ok {
				names = append(names, fmt.Sprintf("%v=%v", m["name"], m["default"]))
			}
		}
		if len(names) == 0 {
			return fmt.Errorf("no knobs")
		}
		d.say("knobs: %s", strings.Join(names, ", "))
		return nil
	})

	d.section("Research")
	d.research(ctx, s, source)

	d.section("Observe and trade (paper venue)")
	d.step(ctx, s, "node_snapshot", map[string]any{"events": 0}, func(r demoCall) error {
		for _, v := range asList(r.obj["venues"]) {
			m, _ := v.(map[string]any)
			d.say("venue %v (%v): cash %v, equity %v, trading state %v", m["name"], m["kind"], m["cash"], m["equity"], r.obj["trading_state"])
		}
		return nil
	})
	order := map[string]any{"venue": "paper", "symbol": "BTC-USD", "side": "buy", "type": "market", "quantity": "0.01",
		"reason": "wicket demo: a first gated order"}
	var token, coid string
	d.step(ctx, s, "submit_order", order, func(r demoCall) error {
		token, _ = r.obj["preview_token"].(string)
		coid, _ = r.obj["client_order_id"].(string)
		if r.obj["status"] != "preview" || token == "" {
			return fmt.Errorf("no preview: %s", r.text)
		}
		g, _ := r.obj["guardrail"].(map[string]any)
		dr, _ := r.obj["dry_run"].(map[string]any)
		d.say("preview: client_order_id %s, guardrail ok=%v, node dry run would_accept=%v; nothing sent", coid, g["ok"], dr["would_accept"])
		d.say("token %s expires %v", short(token), r.obj["expires_at"])
		return nil
	})
	confirm := with(order, map[string]any{"confirm": true, "preview_token": token})
	d.step(ctx, s, "submit_order", confirm, func(r demoCall) error {
		if r.obj["status"] != "accepted" || r.obj["client_order_id"] != coid {
			return fmt.Errorf("confirmed order not accepted with the previewed id: %s", r.text)
		}
		d.say("accepted: order %v, client_order_id %v (the previewed one), ticket %v", r.obj["order_id"], r.obj["client_order_id"], short(fmt.Sprint(r.obj["ticket"])))
		return nil
	})
	d.expectRefusal(ctx, s, "submit_order", confirm, "already", "the same token again")

	d.section("A second server, started with --profile read-only")
	ro, err := d.startMCP(ctx, "--trace", "--profile", "read-only", "--node", d.node)
	if err != nil {
		d.fail("start the read-only server: %v", err)
		return
	}
	defer ro.Close()
	d.expectRefusal(ctx, ro, "submit_order", order, "REFUSED [profile]", "a write under read-only")
}

// step calls a tool and checks its successful result.
func (d *demo) step(ctx context.Context, s *mcpSession, tool string, args map[string]any, check func(demoCall) error) {
	fmt.Fprintf(d.out, "> %s %s\n", tool, brief(args))
	r, err := s.call(ctx, tool, args)
	switch {
	case err != nil:
		d.fail("%s: %v", tool, err)
	case r.isError:
		d.fail("%s: %s", tool, r.text)
	default:
		if err := check(r); err != nil {
			d.fail("%s: %v", tool, err)
		}
	}
}

// expectRefusal calls a tool that must refuse, with want in its text.
func (d *demo) expectRefusal(ctx context.Context, s *mcpSession, tool string, args map[string]any, want, what string) {
	fmt.Fprintf(d.out, "> %s %s   (%s)\n", tool, brief(args), what)
	r, err := s.call(ctx, tool, args)
	switch {
	case err != nil:
		d.fail("%s: %v", tool, err)
	case !r.isError || !strings.Contains(r.text, want):
		d.fail("%s (%s) was not refused: %s", tool, what, r.text)
	default:
		first, _, _ := strings.Cut(r.text, ". ")
		d.say("refused as expected: %s.", first)
	}
}

func readSessionResource(ctx context.Context, s *mcpSession) (map[string]any, error) {
	req := mcp.ReadResourceRequest{}
	req.Params.URI = "wicket://session"
	res, err := s.ReadResource(ctx, req)
	if err != nil {
		return nil, err
	}
	if len(res.Contents) == 0 {
		return nil, fmt.Errorf("empty resource")
	}
	tc, ok := res.Contents[0].(mcp.TextResourceContents)
	if !ok {
		return nil, fmt.Errorf("not text")
	}
	var m map[string]any
	return m, json.Unmarshal([]byte(tc.Text), &m)
}

// brief shows a call's arguments on one line, long values cut.
func brief(args map[string]any) string {
	if len(args) == 0 {
		return "{}"
	}
	short := map[string]any{}
	for k, v := range args {
		if s, ok := v.(string); ok && len(s) > 40 {
			v = fmt.Sprintf("<%d characters>", len(s))
		}
		short[k] = v
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(short)
	return strings.TrimSpace(b.String())
}

func with(base, extra map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func templateNames(obj map[string]any, n int) string {
	var names []string
	for _, t := range asList(obj["templates"]) {
		if m, ok := t.(map[string]any); ok && len(names) < n {
			names = append(names, fmt.Sprint(m["name"]))
		}
	}
	return strings.Join(names, ", ")
}

// research runs the research steps: the series, a backtest with its
// chart, a sweep with progress notifications, and a walk-forward.
func (d *demo) research(ctx context.Context, s *mcpSession, source string) {
	d.step(ctx, s, "list_series", nil, func(r demoCall) error {
		var names []string
		for _, x := range asList(r.obj["series"]) {
			if m, ok := x.(map[string]any); ok {
				names = append(names, fmt.Sprintf("%v (%v bars)", m["series"], m["bars"]))
			}
		}
		if len(names) < 4 {
			return fmt.Errorf("%d series", len(names))
		}
		d.say("%s", strings.Join(names, ", "))
		return nil
	})
	bt := map[string]any{"source": source, "series": "BTC-USD@1h", "params": map[string]any{"fast": 20, "slow": 60}, "plot": true, "trades_limit": 3}
	d.step(ctx, s, "run_backtest", bt, func(r demoCall) error {
		m, _ := r.obj["metrics"].(map[string]any)
		if m == nil {
			return fmt.Errorf("no metrics: %.300s", r.text)
		}
		images := 0
		for _, c := range r.res.Content {
			if _, ok := c.(mcp.ImageContent); ok {
				images++
			}
		}
		if images != 1 {
			return fmt.Errorf("plot: true gave %d images", images)
		}
		d.say("total_return %v, sharpe %v, max_drawdown %v, %v trades, final equity %v; chart: 1 PNG", m["total_return"], m["sharpe"], m["max_drawdown"], m["trades"], m["final_equity"])
		return nil
	})

	var mu sync.Mutex
	notes := 0
	first := make(chan struct{})
	var once sync.Once
	s.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationProgress) {
			mu.Lock()
			notes++
			mu.Unlock()
			once.Do(func() { close(first) })
		}
	})
	grid := map[string]any{"fast": map[string]any{"from": 5, "to": 30, "step": 5}, "slow": []int{40, 60, 90}}
	fmt.Fprintf(d.out, "> run_sweep %s   (with a progressToken)\n", brief(map[string]any{"source": source, "series": "BTC-USD@1h", "grid": grid}))
	req := mcp.CallToolRequest{}
	req.Params.Name = "run_sweep"
	req.Params.Arguments = map[string]any{"source": source, "series": "BTC-USD@1h", "grid": grid, "top": 3}
	req.Params.Meta = &mcp.Meta{ProgressToken: "demo-sweep"}
	res, err := s.CallTool(ctx, req)
	switch {
	case err != nil:
		d.fail("run_sweep: %v", err)
	case res.IsError:
		d.fail("run_sweep: %v", res.Content)
	default:
		var sw map[string]any
		b, _ := json.Marshal(res.StructuredContent) // the text is a summary (agent/runs.go)
		_ = json.Unmarshal(b, &sw)
		top := asList(sw["top"])
		ds, _ := sw["deflated_sharpe"].(map[string]any)
		if len(top) == 0 || ds == nil {
			d.fail("run_sweep: no ranking")
			break
		}
		best, _ := top[0].(map[string]any)
		d.say("%v combinations evaluated; best %s (sharpe %v); deflated Sharpe %v", sw["evaluated"], brief(asMap(best["params"])), best["score"], ds["dsr"])
		// The server writes notifications from another goroutine, so they
		// may trail the result.
		select {
		case <-first:
		case <-time.After(5 * time.Second):
		case <-ctx.Done():
		}
		mu.Lock()
		d.say("%d progress notifications received", notes)
		if notes == 0 {
			d.fail("run_sweep sent no progress notification")
		}
		mu.Unlock()
	}

	wf := map[string]any{"source": source, "series": "BTC-USD@1d", "grid": map[string]any{"fast": []int{5, 10, 20}, "slow": []int{40, 80}}, "windows": 4}
	d.step(ctx, s, "run_walk_forward", wf, func(r demoCall) error {
		windows := asList(r.obj["windows"])
		if len(windows) != 4 {
			return fmt.Errorf("%d windows, want 4", len(windows))
		}
		oos, _ := r.obj["out_of_sample"].(map[string]any)
		d.say("%d windows; stitched out-of-sample return %v, sharpe %v; walk-forward efficiency %v", len(windows), oos["total_return"], oos["sharpe"], r.obj["walk_forward_efficiency"])
		return nil
	})
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
