package agent

import (
	"fmt"
	"sort"
	"strings"
)

// Profiles an operator can choose with --profile.
const (
	ProfileFull     = "full"
	ProfileReadOnly = "read-only"
	ProfileOffline  = "offline"
)

// Profiles lists the valid --profile values.
var Profiles = []string{ProfileFull, ProfileReadOnly, ProfileOffline}

// UsageError is an operator's start-up mistake (unknown profile or
// deny-tool name); the CLI exits 2 with its text.
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

// Refusal says why a registered tool is not served.
type Refusal string

// Refusal kinds, as they appear in the REFUSED text.
const (
	byProfile  Refusal = "profile"
	byDenyTool Refusal = "deny-tool"
)

// ToolAccess is what this server offers: the served set (tools/list) and
// its complement, the refused set (tools/call refuses). It is built in one
// pass over the registry; nobody types either roster.
type ToolAccess struct {
	Profile string
	Denied  []string // sorted, as given (validated)
	served  map[string]bool
	refused map[string]Refusal
	order   []string // registry order
}

// newToolAccess derives the served and refused sets from the registry, the
// profile and the deny list. An unknown profile or deny name is a
// *UsageError naming the valid set; nothing falls back to full.
func newToolAccess(reg *registry, profile string, deny []string) (*ToolAccess, error) {
	var allowed func(*toolSpec) bool
	switch profile {
	case ProfileFull:
		allowed = func(*toolSpec) bool { return true }
	case ProfileReadOnly:
		allowed = func(s *toolSpec) bool { return !reg.isWriteTool(s.Name) }
	case ProfileOffline:
		allowed = func(s *toolSpec) bool { return s.Hints.OpenWorld != nil && !*s.Hints.OpenWorld }
	default:
		return nil, &UsageError{fmt.Sprintf("unknown --profile %q; valid: %s", profile, strings.Join(Profiles, ", "))}
	}
	denied := map[string]bool{}
	for _, d := range deny {
		if _, ok := reg.Lookup(d); !ok {
			return nil, &UsageError{fmt.Sprintf("unknown --deny-tool %q; valid: %s", d, strings.Join(reg.Names(), ", "))}
		}
		denied[d] = true
	}
	a := &ToolAccess{Profile: profile, served: map[string]bool{}, refused: map[string]Refusal{}}
	for d := range denied {
		a.Denied = append(a.Denied, d)
	}
	sort.Strings(a.Denied)
	for _, s := range reg.Specs() {
		a.order = append(a.order, s.Name)
		switch {
		case !allowed(s):
			a.refused[s.Name] = byProfile
		case denied[s.Name]:
			a.refused[s.Name] = byDenyTool
		default:
			a.served[s.Name] = true
		}
	}
	return a, nil
}

// Served reports whether name is offered to the agent.
func (a *ToolAccess) Served(name string) bool { return a.served[name] }

// Refused reports why a registered tool is refused ("" when it is served
// or unknown).
func (a *ToolAccess) Refused(name string) Refusal { return a.refused[name] }

// ServedNames lists the served tools, sorted.
func (a *ToolAccess) ServedNames() []string {
	return a.filter(func(n string) bool { return a.served[n] })
}

// RefusedNames lists the refused tools, sorted.
func (a *ToolAccess) RefusedNames() []string {
	return a.filter(func(n string) bool { return a.refused[n] != "" })
}

func (a *ToolAccess) filter(keep func(string) bool) []string {
	out := []string{}
	for _, n := range a.order {
		if keep(n) {
			out = append(out, n)
		}
	}
	return out
}

// refusalText is the isError text for a refused tool. Its first clause,
// "REFUSED [profile] PROFILE" or "REFUSED [deny-tool] TOOL", is the reason
// `wicket trace stats` groups refusals by (trace.RefusalReason reads up to
// the first ": "); the rest names the tool and the running profile, lists
// the served tools and says only the operator can widen the set.
func (a *ToolAccess) refusalText(name string) string {
	var head string
	switch why := a.refused[name]; why {
	case byDenyTool:
		head = fmt.Sprintf("REFUSED [%s] %s: the operator denied this tool (--deny-tool %s)", why, name, name)
	default:
		head = fmt.Sprintf("REFUSED [%s] %s: tool %s is not served under this profile", byProfile, a.Profile, name)
	}
	served := "none"
	if names := a.ServedNames(); len(names) > 0 {
		served = strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s. This server runs profile %s; served tools: %s. "+
		"Nothing was attempted. Only the operator can widen this, by restarting the server with a different --profile or --deny-tool.",
		head, a.Profile, served)
}

// suggest returns up to three served names closest to name.
func (a *ToolAccess) suggest(name string) []string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for _, n := range a.ServedNames() {
		d := editDistance(strings.ToLower(name), n)
		if strings.Contains(n, strings.ToLower(name)) || strings.Contains(strings.ToLower(name), n) {
			d = 0
		}
		if d <= max(3, len(n)/2) {
			cs = append(cs, cand{n, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	var out []string
	for i := 0; i < len(cs) && i < 3; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
