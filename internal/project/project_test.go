package project

import (
	"bytes"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"
)

func TestValidName(t *testing.T) {
	good := []string{"sma_cross", "BTC-USD@1h", "a", "v1.2", "paper", strings.Repeat("x", 64)}
	bad := []string{"", "../x", "a/b", `a\b`, ".hidden", "-flag", "a..b", "x y", "ünï", strings.Repeat("x", 65), "a\x00", "@1h", "/etc/passwd"}
	for _, n := range good {
		if err := ValidName("strategy", n); err != nil {
			t.Errorf("ValidName(%q) = %v, want nil", n, err)
		}
	}
	for _, n := range bad {
		err := ValidName("series", n)
		var ne *NameError
		if !errors.As(err, &ne) {
			t.Errorf("ValidName(%q) = %v, want *NameError", n, err)
			continue
		}
		if !strings.Contains(err.Error(), "invalid series name") {
			t.Errorf("error %q does not name the kind", err)
		}
	}
}

func TestStrategyPathValidatesFirst(t *testing.T) {
	p := Project{Root: "/proj"}
	if _, err := p.StrategyPath("../../etc/passwd"); err == nil {
		t.Fatal("StrategyPath accepted a path")
	}
	got, err := p.StrategyPath("sma")
	if err != nil || got != filepath.Join("/proj", "strategies", "sma.star") {
		t.Fatalf("StrategyPath(sma) = %q, %v", got, err)
	}
}

func TestFind(t *testing.T) {
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	if _, err := Init(proj, bytes.NewReader(make([]byte, 1024))); err != nil {
		t.Fatal(err)
	}
	deep := filepath.Join(proj, "strategies")
	other := filepath.Join(root, "other")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, flag, env, cwd, want string
		err                        string
	}{
		{"ancestor", "", "", deep, proj, ""},
		{"flag wins", proj, other, other, proj, ""},
		{"env", "", proj, other, proj, ""},
		{"flag without project", other, "", proj, "", "wicket init " + other},
		{"none", "", "", other, "", "create one with `wicket init`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Find(tt.flag, tt.env, tt.cwd)
			if tt.err != "" {
				if !errors.Is(err, ErrNoProject) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want ErrNoProject mentioning %q", err, tt.err)
				}
				return
			}
			if err != nil || p.Root != tt.want {
				t.Fatalf("Find = %q, %v; want %q", p.Root, err, tt.want)
			}
		})
	}
}

func TestDefaultConfigTextDecodesToDefaults(t *testing.T) {
	cfg, err := ParseConfig("wicket.toml", []byte(DefaultConfigText))
	if err != nil {
		t.Fatal(err)
	}
	want := Defaults()
	if diff := cmp.Diff(want, cfg, cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("DefaultConfigText differs from Defaults() (-want +got):\n%s", diff)
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"syntax", "[node]\naddress = \n", "wicket.toml:2:"},
		{"unknown key", "[node]\nadress = \"x\"\n", "unknown key(s) node.adress"},
		{"bad venue name", "[[venues]]\nname = \"../x\"\nsymbols=[\"A\"]\n", "invalid venue name"},
		{"duplicate venue", "[[venues]]\nname = \"p\"\nsymbols=[\"A\"]\n[[venues]]\nname = \"p\"\nsymbols=[\"A\"]\n", "configured twice"},
		{"bad decimal", "[guardrail]\nmax_order_notional = \"lots\"\n", "wicket.toml:2:"},
		{"bad kind", "[[venues]]\nname = \"x\"\nkind = \"kraken\"\nsymbols=[\"A\"]\n", "valid: paper, alpaca, binance"},
		{"empty address", "[node]\naddress = \"\"\n", "set it to the node's HOST:PORT"},
		{"negative research fee", "[research]\nfee_bps = -5\n", "research.fee_bps and research.slippage_bps must not be negative"},
		{"negative research slippage", "[research]\nslippage_bps = -1\n", "must not be negative"},
		{"negative borrow rate", "[research]\nborrow_rates = { \"BTC-USD\" = -1 }\n", "research.borrow_rates.BTC-USD -1 must be an annual fraction"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig("wicket.toml", []byte(tt.text))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want mention of %q", err, tt.want)
			}
		})
	}
	// A partial file keeps the defaults for what it leaves out.
	cfg, err := ParseConfig("wicket.toml", []byte("[node]\naddress = \"127.0.0.1:9999\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Node.Address != "127.0.0.1:9999" || len(cfg.Venues) != 1 || cfg.Research.MaxCombinations != 5000 {
		t.Errorf("partial config = %+v", cfg)
	}
}

func TestSecrets(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "secrets.env")
	text := "# comment\n\nWICKET_NODE_OBSERVE_KEY = ' spaced '\nexport WICKET_NODE_CONTROL_KEY=\"ctl\"\nEMPTY=\nOTHER=1\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{KeyControl: "  from-env  "}
	s, err := LoadSecrets(path, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	if v, src, ok := s.Lookup(KeyObserve); !ok || v != "spaced" || src != FromSecretsFile {
		t.Errorf("observe = %q %q %v", v, src, ok)
	}
	if v, src, ok := s.Lookup(KeyControl); !ok || v != "from-env" || src != FromEnvironment {
		t.Errorf("control = %q %q %v", v, src, ok)
	}
	if _, _, ok := s.Lookup("EMPTY"); ok {
		t.Error("an empty value counts as present")
	}
	if s.LooseMode() {
		t.Error("0600 reported loose")
	}
	list := s.List()
	names := []string{}
	for _, k := range list {
		names = append(names, k.Name)
	}
	if diff := cmp.Diff([]string{KeyObserve, KeyControl, KeyData, KeyLedger, KeyAlpacaID, KeyAlpacaSecret, KeyCluster, "EMPTY", "OTHER"}, names); diff != "" {
		t.Errorf("List names (-want +got):\n%s", diff)
	}
	if !list[1].Shadowed {
		t.Error("control key from the environment should be marked as shadowing secrets.env")
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	s, _ = LoadSecrets(path, nil)
	if !s.LooseMode() {
		t.Error("0640 not reported loose")
	}
	// A malformed line names its number, not its content.
	if err := os.WriteFile(path, []byte("OK=1\nsecret-without-equals\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = LoadSecrets(path, nil)
	if err == nil || !strings.Contains(err.Error(), ":2:") || strings.Contains(err.Error(), "secret-without-equals") {
		t.Errorf("malformed line error = %v", err)
	}
}

func TestAgentConfig(t *testing.T) {
	cfg, err := ParseConfig("wicket.toml", []byte("[agent]\napproval = \"operator\"\nmax_writes = 3\nmax_notional = \"2500.50\"\nmax_writes_per_minute = 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.Agent
	if a.Approval != ApprovalOperator || a.MaxWrites != 3 || a.MaxNotional.String() != "2500.5" || a.MaxWritesPerMinute != 2 {
		t.Errorf("agent = %+v", a)
	}
	for text, want := range map[string]string{
		"[agent]\napproval = \"ask\"\n":         `approval mode "ask" is not valid (valid: none, elicit, operator)`,
		"[agent]\nmax_writes = -1\n":            "must not be negative",
		"[agent]\nmax_notional = \"-5\"\n":      "must not be negative",
		"[agent]\nmax_writes_per_minute = -2\n": "must not be negative",
		"[agent]\nmax_write = 3\n":              "unknown key(s) agent.max_write",
	} {
		if _, err := ParseConfig("wicket.toml", []byte(text)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
}

// TestAddKey: a project made before a generated key existed gets it
// appended to secrets.env (mode 0600, the other lines kept), once.
func TestAddKey(t *testing.T) {
	p := Project{Root: t.TempDir()}
	if err := p.AddKey(KeyLedger, rand.Reader); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.SecretsPath(), []byte("WICKET_NODE_OBSERVE_KEY=kept"), 0o600); err != nil { // no final newline
		t.Fatal(err)
	}
	if err := p.AddKey(KeyLedger, rand.Reader); err != nil {
		t.Fatal(err)
	}
	s, err := p.Secrets(nil)
	if err != nil {
		t.Fatal(err)
	}
	v, _, ok := s.Lookup(KeyLedger)
	if o, _, _ := s.Lookup(KeyObserve); !ok || len(v) != 64 || o != "kept" || s.Mode != 0o600 {
		t.Fatalf("ledger key %d chars (%v), observe %q, mode %o", len(v), ok, o, s.Mode)
	}
	if err := p.AddKey(KeyLedger, rand.Reader); err == nil || !strings.Contains(err.Error(), "already holds WICKET_LEDGER_KEY") {
		t.Fatalf("a second AddKey: %v", err)
	}
}

func TestAgentOAuthConfig(t *testing.T) {
	cfg, err := ParseConfig("wicket.toml", []byte("[agent.oauth]\nissuer = \"https://auth.example.com\"\naudience = \"https://w.example.com/mcp\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if o := cfg.Agent.OAuth; o == nil || len(o.Scopes) != len(DefaultOAuthScopes) || o.Scopes[0].Name != "wicket:read" {
		t.Errorf("oauth = %+v, want the default scopes", o)
	}
	for text, want := range map[string]string{
		"[agent.oauth]\nissuer = \"http://auth.example.com\"\naudience = \"https://w.example.com/mcp\"\n":                                              "plain http is allowed only to a loopback host",
		"[agent.oauth]\nissuer = \"https://a.example\"\n":                                                                                              "agent.oauth.audience",
		"[agent.oauth]\nissuer = \"https://a.example\"\naudience = \"https://w.example\"\n[[agent.oauth.scope]]\nname = \"a b\"\nprofile = \"full\"\n": "is not an OAuth scope",
		"[agent.oauth]\nissuer = \"https://a.example\"\naudience = \"https://w.example\"\n[[agent.oauth.scope]]\nname = \"x\"\n":                       "give its profile",
	} {
		if _, err := ParseConfig("wicket.toml", []byte(text)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
}

func TestAgentOAuthBuiltinConfig(t *testing.T) {
	cfg, err := ParseConfig("wicket.toml", []byte("[agent.oauth]\nissuer = \"builtin\"\naudience = \"https://w.example.com/mcp\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if o := cfg.Agent.OAuth; o.Issuer != IssuerBuiltin || len(o.Scopes) != len(DefaultOAuthScopes) {
		t.Errorf("oauth = %+v", o)
	}
	for text, want := range map[string]string{
		"[agent.oauth]\nissuer = \"builtin\"\naudience = \"https://w.example.com/mcp\"\njwks_url = \"https://w.example.com/jwks\"\n": "serves its own keys",
		"[agent.oauth]\nissuer = \"builtin\"\n":                                            "agent.oauth.audience",
		"[agent.oauth]\nissuer = \"built-in\"\naudience = \"https://w.example.com/mcp\"\n": `or "builtin"`,
	} {
		if _, err := ParseConfig("wicket.toml", []byte(text)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
}
