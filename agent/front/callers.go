package front

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"wicket/agent"
	"wicket/internal/project"
)

// CallersFile is where a project keeps its HTTP callers, under settings/.
const CallersFile = "callers.toml"

// Caller is one named client of `wicket mcp --http`: its own profile and
// deny list, and the SHA-256 of its bearer token (the token itself is shown
// once, when the caller is added, and never stored).
type Caller struct {
	Name        string    `toml:"name"`
	Profile     string    `toml:"profile"`
	Deny        []string  `toml:"deny_tool,omitempty"`
	TokenSHA256 string    `toml:"token_sha256"`
	Added       time.Time `toml:"added"`

	// grant is the OAuth scope that granted Profile and Deny, for a caller
	// authenticated by an access token (Name is then its subject); "" for
	// a bearer caller of this file.
	grant string
}

// owner is who a session belongs to: a bearer caller, or an OAuth subject
// under one grant (a token of another scope opens a session of its own).
func (c Caller) owner() string {
	if c.grant == "" {
		return "caller " + c.Name
	}
	return oauthOwnerPrefix + c.grant + " " + c.Name
}

// oauthOwnerPrefix starts the owner of an OAuth subject's session.
const oauthOwnerPrefix = "oauth "

// Callers is the set of callers in settings/callers.toml.
type Callers struct {
	list []Caller
}

type callersDoc struct {
	Caller []Caller `toml:"caller"`
}

// LoadCallers reads path; a missing file is an empty set.
func LoadCallers(path string) (*Callers, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Callers{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read callers: %w", err)
	}
	var doc callersDoc
	if err := toml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	seen := map[string]bool{}
	for _, c := range doc.Caller {
		if err := project.ValidName("caller", c.Name); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if seen[c.Name] {
			return nil, fmt.Errorf("%s: caller %q appears twice", path, c.Name)
		}
		seen[c.Name] = true
		if h, err := hex.DecodeString(c.TokenSHA256); err != nil || len(h) != sha256.Size {
			return nil, fmt.Errorf("%s: caller %q: token_sha256 must be 64 hex digits", path, c.Name)
		}
		if _, err := agent.Check(c.Profile, c.Deny); err != nil {
			return nil, fmt.Errorf("%s: caller %q: %w", path, c.Name, err)
		}
	}
	return &Callers{list: doc.Caller}, nil
}

// Save writes the set to path (mode 0600) through a temporary file, so a
// crash never leaves half a file.
func (cs *Callers) Save(path string) error {
	var buf bytes.Buffer
	buf.WriteString("# wicket mcp --http callers: one [[caller]] per client, each with its own profile.\n" +
		"# Only the SHA-256 of each bearer token is kept; manage with `wicket callers add|list|remove`.\n\n")
	if err := toml.NewEncoder(&buf).Encode(callersDoc{Caller: cs.list}); err != nil {
		return fmt.Errorf("encode callers: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".callers-*.toml")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil { // on disk before it takes the name
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// List returns the callers sorted by name.
func (cs *Callers) List() []Caller {
	out := append([]Caller(nil), cs.list...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Len is the number of callers.
func (cs *Callers) Len() int { return len(cs.list) }

// Add creates a caller with a fresh token, which it returns: the only time
// the token exists outside the caller's hands. The name, profile and deny
// list are validated first (a *agent.UsageError for the last two).
func (cs *Callers) Add(name, profile string, deny []string, now time.Time) (string, error) {
	if err := project.ValidName("caller", name); err != nil {
		return "", agent.NewUsageError(err.Error())
	}
	for _, c := range cs.list {
		if c.Name == name {
			return "", agent.NewUsageError(fmt.Sprintf("caller %q exists; remove it first (wicket callers remove %s) to issue a new token", name, name))
		}
	}
	access, err := agent.Check(profile, deny)
	if err != nil {
		return "", err
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("mint a token: %w", err)
	}
	token := "wkc_" + base64.RawURLEncoding.EncodeToString(raw)
	cs.list = append(cs.list, Caller{Name: name, Profile: profile, Deny: access.Denied, TokenSHA256: tokenHash(token), Added: now.UTC().Truncate(time.Second)})
	return token, nil
}

// Remove deletes a caller; its token stops working at the next server start.
func (cs *Callers) Remove(name string) error {
	for i, c := range cs.list {
		if c.Name == name {
			cs.list = append(cs.list[:i], cs.list[i+1:]...)
			return nil
		}
	}
	names := []string{}
	for _, c := range cs.List() {
		names = append(names, c.Name)
	}
	valid := "none"
	if len(names) > 0 {
		valid = strings.Join(names, ", ")
	}
	return agent.NewUsageError(fmt.Sprintf("no caller %q; callers: %s", name, valid))
}

// authenticate returns the caller whose token this is. Every stored hash
// is compared, in constant time, whatever matches.
func (cs *Callers) authenticate(token string) (Caller, bool) {
	if token == "" {
		return Caller{}, false
	}
	sum := sha256.Sum256([]byte(token))
	var found Caller
	hit := 0
	for _, c := range cs.list {
		want, err := hex.DecodeString(c.TokenSHA256)
		if err != nil {
			continue
		}
		if subtle.ConstantTimeCompare(sum[:], want) == 1 {
			found, hit = c, 1
		}
	}
	return found, hit == 1
}

func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
