package project

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
)

// The keys wicket reads. Values never leave this package except to the
// caller that asked for that key by name.
const (
	KeyObserve = "WICKET_NODE_OBSERVE_KEY" // reads node state
	KeyControl = "WICKET_NODE_CONTROL_KEY" // writes to the node
	// KeyAgent, optional, writes to the node as the agent: the node holds
	// those writes to [agent.envelope] (node/server/envelope.go).
	KeyAgent  = "WICKET_NODE_AGENT_KEY"
	KeyData   = "WICKET_DATA_TOKEN" // bearer token for a non-loopback data service
	KeyLedger = "WICKET_LEDGER_KEY" // keys the research ledger's chain; never served or logged
	// Alpaca market data (US stock bars; crypto bars need none).
	KeyAlpacaID     = "WICKET_ALPACA_KEY_ID"
	KeyAlpacaSecret = "WICKET_ALPACA_SECRET_KEY"
	// KeyOperator holds the operator's private key (hex seed) for an
	// operator command's environment only; it is never read from
	// secrets.env (see operator.go), and wicket mcp refuses to start with it.
	KeyOperator = "WICKET_OPERATOR_KEY"
)

// KnownKeys lists the keys wicket uses, in display order.
var KnownKeys = []string{KeyObserve, KeyControl, KeyData, KeyLedger,
	KeyAlpacaID, KeyAlpacaSecret, KeyCluster,
}

// GeneratedKeys are the keys `wicket init` generates: wicket's own. A
// provider's keys (Alpaca's) come from the provider and are never made up.
var GeneratedKeys = []string{KeyObserve, KeyControl, KeyData, KeyLedger, KeyCluster}

// Source says where a key's value was found.
type Source string

// Sources, in lookup order: the environment wins over secrets.env.
const (
	FromEnvironment Source = "environment"
	FromSecretsFile Source = "secrets.env"
)

// Secrets resolves keys from the environment first, then secrets.env.
type Secrets struct {
	Path   string      // secrets.env
	Exists bool        // whether Path exists
	Mode   fs.FileMode // permission bits of Path, when it exists
	file   map[string]string
	order  []string // key names in file order
	getenv func(string) (string, bool)
}

// LoadSecrets reads path (a missing file is not an error) and resolves keys
// against getenv (os.LookupEnv in production). A malformed line is an error
// naming its line number, never its content.
func LoadSecrets(path string, getenv func(string) (string, bool)) (*Secrets, error) {
	s := &Secrets{Path: path, file: map[string]string{}, getenv: getenv}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return s, nil
	case err != nil:
		return nil, fmt.Errorf("read secrets: %w", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read secrets: %w", err)
	}
	s.Exists, s.Mode = true, fi.Mode().Perm()
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return nil, fmt.Errorf("%s:%d: expected KEY=value", path, n)
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
			v = v[1 : len(v)-1]
		}
		if k == KeyOperator {
			return nil, fmt.Errorf("%s:%d: %s does not belong in secrets.env, which wicket mcp (the agent's process) reads: "+
				"move the key to settings/operator.key (mode 0600) or make a new pair with `wicket init --operator-key`, and delete this line", path, n, KeyOperator)
		}
		if _, dup := s.file[k]; !dup {
			s.order = append(s.order, k)
		}
		s.file[k] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read secrets: %w", err)
	}
	return s, nil
}

// Lookup returns the trimmed value of key and where it came from. An empty
// value counts as absent.
func (s *Secrets) Lookup(key string) (string, Source, bool) {
	if s.getenv != nil {
		if v, ok := s.getenv(key); ok && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v), FromEnvironment, true
		}
	}
	if v, ok := s.file[key]; ok && strings.TrimSpace(v) != "" {
		return strings.TrimSpace(v), FromSecretsFile, true
	}
	return "", "", false
}

// KeyInfo describes one key without its value.
type KeyInfo struct {
	Name     string `json:"name"`
	Present  bool   `json:"present"`
	Source   Source `json:"source,omitempty"`
	Shadowed bool   `json:"shadowed,omitempty"` // also in secrets.env, but the environment wins
	Known    bool   `json:"known"`              // one of KnownKeys
}

// List describes every known key (the node's and the providers', and the
// real venues' and the research cluster's keys that are set) and every
// other key found in secrets.env, never a value.
func (s *Secrets) List() []KeyInfo {
	var out []KeyInfo
	known := map[string]bool{}
	for _, k := range KnownKeys {
		known[k] = true
		out = append(out, s.info(k, true))
	}
	for _, k := range append(append(venueKeyNames(), natsKeys...), KeyAgent) { // shown once set, in the environment or the file
		if _, _, ok := s.Lookup(k); ok && !known[k] {
			known[k] = true
			out = append(out, s.info(k, true))
		}
	}
	var extra []string
	for _, k := range s.order {
		if !known[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		out = append(out, s.info(k, false))
	}
	return out
}

func (s *Secrets) info(k string, known bool) KeyInfo {
	_, src, ok := s.Lookup(k)
	ki := KeyInfo{Name: k, Present: ok, Source: src, Known: known}
	if src == FromEnvironment {
		if v, inFile := s.file[k]; inFile && strings.TrimSpace(v) != "" {
			ki.Shadowed = true
		}
	}
	return ki
}

// LooseMode reports whether secrets.env is readable or writable by group or
// others.
func (s *Secrets) LooseMode() bool { return s.Exists && s.Mode&0o077 != 0 }

// Secrets loads this project's secrets.env against getenv.
func (p Project) Secrets(getenv func(string) (string, bool)) (*Secrets, error) {
	return LoadSecrets(p.SecretsPath(), getenv)
}
