package agent_test

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"wicket/agent"
)

// accessCases are the profile × deny combinations the rings are checked on.
var accessCases = []struct {
	profile string
	deny    []string
}{
	{agent.ProfileFull, nil},
	{agent.ProfileReadOnly, nil},
	{agent.ProfileOffline, nil},
	{agent.ProfileFull, []string{"submit_order", "run_sweep"}},
	{agent.ProfileReadOnly, []string{"node_snapshot", "list_series"}},
	{agent.ProfileOffline, []string{"list_indicators"}},
}

func profileArgs(profile string, deny []string) []string {
	args := []string{"--profile", profile}
	for _, d := range deny {
		args = append(args, "--deny-tool", d)
	}
	return args
}

// TestAccessRings checks, per profile and deny list, that tools/list is the
// served set, every refused tool is refused with the REFUSED text, the
// resources follow the same predicate, prompts are re-worded and the
// instructions carry exactly the clauses the spec says.
func TestAccessRings(t *testing.T) {
	proj := newProject(t)
	for _, tc := range accessCases {
		t.Run(tc.profile+"-"+strings.Join(tc.deny, "+"), func(t *testing.T) {
			want, err := agent.Check(tc.profile, tc.deny)
			if err != nil {
				t.Fatal(err)
			}
			s := startMCP(t, nil, proj, profileArgs(tc.profile, tc.deny)...)
			got := s.toolNames(t)
			if !slices.Equal(got, want.ServedNames()) {
				t.Errorf("tools/list = %v\nserved set = %v", got, want.ServedNames())
			}
			for _, name := range want.RefusedNames() {
				res := s.call(t, name, `{}`)
				prefix := "REFUSED [" + string(want.Refused(name)) + "] "
				if !res.IsError || !strings.HasPrefix(text(res), prefix) || !strings.Contains(text(res), "profile "+tc.profile) ||
					!strings.Contains(text(res), "restarting the server") {
					t.Errorf("%s: refused result %q (isError %v)", name, text(res), res.IsError)
				}
			}

			// Resources follow the predicate; wicket://session is always
			// there, and without a node wicket://node/snapshot is not listed
			// (it could not be read).
			resources, err := s.ListResources(context.Background(), mcp.ListResourcesRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var uris []string
			for _, r := range resources.Resources {
				uris = append(uris, r.URI)
			}
			wantURIs := []string{"wicket://session"}
			if want.Served("list_series") {
				wantURIs = append(wantURIs, "wicket://series")
			}
			if want.Served("run_backtest") { // its MCP Apps view (report_app.go)
				wantURIs = append(wantURIs, "ui://wicket/tear-sheet")
			}
			slices.Sort(uris)
			slices.Sort(wantURIs)
			if !slices.Equal(uris, wantURIs) {
				t.Errorf("resources %v, want %v", uris, wantURIs)
			}
			sess := readSession(t, s)
			if sess["profile"] != tc.profile || !sameStrings(sess["served"], want.ServedNames()) || !sameStrings(sess["refused"], want.RefusedNames()) {
				t.Errorf("wicket://session = %v", sess)
			}

			// Instructions: the conditional clauses exactly when their tools are served.
			instr := s.init.Instructions
			for _, always := range []string{"wicket data seed-demo", "wicket node serve", "wicket backtest --local", "wicket secrets list",
				"no tool reads, writes or arms a credential", "never invent a tool name", "never report an operator-side command"} {
				if !strings.Contains(instr, always) {
					t.Errorf("instructions lack %q", always)
				}
			}
			if got := strings.Contains(instr, "call list_series"); got != want.Served("list_series") {
				t.Errorf("list_series clause present=%v, served=%v", got, want.Served("list_series"))
			}
			writes := servedWriteCount(want)
			if got := strings.Contains(instr, "preview_token"); got != (writes > 0) {
				t.Errorf("gate clause present=%v with %d served writes", got, writes)
			}

			// Prompts are never withheld; without writes each opens with the banner.
			prompts, err := s.ListPrompts(context.Background(), mcp.ListPromptsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if len(prompts.Prompts) != 4 {
				t.Errorf("%d prompts, want 4", len(prompts.Prompts))
			}
			for _, p := range prompts.Prompts {
				req := mcp.GetPromptRequest{}
				req.Params.Name = p.Name
				res, err := s.GetPrompt(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				body := res.Messages[0].Content.(mcp.TextContent).Text
				banner := strings.Contains(body, "serves no tool that changes orders")
				if banner != (writes == 0) {
					t.Errorf("prompt %s: banner %v with %d writes", p.Name, banner, writes)
				}
			}
		})
	}
}

func servedWriteCount(a *agent.ToolAccess) int {
	n := 0
	for _, name := range a.ServedNames() {
		if slices.Contains(writeRoster, name) {
			n++
		}
	}
	return n
}

// writeRoster is the node's verb table, as the spec lists it.
var writeRoster = []string{"submit_order", "cancel_order", "modify", "flatten", "market_exit", "mass_cancel", "set_trading_state"}

func readSession(t *testing.T, s *session) map[string]any {
	t.Helper()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = "wicket://session"
	res, err := s.ReadResource(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(res.Contents[0].(mcp.TextResourceContents).Text), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func sameStrings(v any, want []string) bool {
	list, _ := v.([]any)
	if len(list) != len(want) {
		return false
	}
	for i, x := range list {
		if x != want[i] {
			return false
		}
	}
	return true
}

// writeVocabulary is the read-only fence: word tokens that advertise a
// write. "order" is left out as a noun is legitimate (open orders).
var writeVocabulary = []string{
	"submit", "submits", "cancel", "cancels", "modify", "modifies", "flatten", "flattens", "exit", "exits",
	"place", "places", "send", "sends", "arm", "arming", "halt", "halts", "trade", "trades", "buy", "sell",
	"liquidate", "execute", "executes", "confirm", "preview",
}

var wordRE = regexp.MustCompile(`[a-z]+`)

// TestReadOnlyFence checks that under read-only no tool name or
// description, no resource and no instruction sentence advertises a write.
func TestReadOnlyFence(t *testing.T) {
	s := startMCP(t, nil, newProject(t), "--profile", "read-only")
	check := func(where, textv string) {
		t.Helper()
		for _, w := range wordRE.FindAllString(strings.ToLower(strings.ReplaceAll(textv, "_", " ")), -1) {
			if slices.Contains(writeVocabulary, w) {
				t.Errorf("%s advertises a write with %q: %q", where, w, textv)
			}
		}
	}
	tools, err := s.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		check("tool name", tool.Name)
		check("tool "+tool.Name+" description", tool.Description)
		check("tool "+tool.Name+" title", tool.Title)
	}
	resources, err := s.ListResources(context.Background(), mcp.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range resources.Resources {
		check("resource", r.URI+" "+r.Name+" "+r.Description)
	}
	for _, sentence := range strings.Split(s.init.Instructions, "\n") {
		check("instruction", sentence)
	}
	// The fence itself can fail: the full profile trips it.
	full := startMCP(t, nil, newProject(t))
	tripped := false
	for _, name := range full.toolNames(t) {
		for _, w := range wordRE.FindAllString(strings.ReplaceAll(name, "_", " "), -1) {
			tripped = tripped || slices.Contains(writeVocabulary, w)
		}
	}
	if !tripped {
		t.Error("the fence vocabulary does not catch the full profile's write tools")
	}
}

// TestStartupUsageErrors: an unknown profile or deny name exits 2 naming
// the valid set; --trace without a project refuses to start.
func TestStartupUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"mcp", "--profile", "admin"}, "valid: full, read-only, offline"},
		{[]string{"mcp", "--deny-tool", "rm_rf"}, "valid: cancel_order"},
		{[]string{"mcp", "--trace"}, "--trace needs a project"},
	} {
		code, stderr := runWicketCode(t, t.TempDir(), tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("wicket %v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
