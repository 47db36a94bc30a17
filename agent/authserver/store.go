package authserver

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"
)

// File names under the project's settings/ directory (all mode 0600).
const (
	GrantsFile = "oauth-grants.json" // clients, waiting requests, consents, grants
	KeysFile   = "oauth-keys.json"   // the token signing keys (private)
)

// Lifetimes the server keeps to.
const (
	pendingTTL       = 10 * time.Minute    // an authorization request waits this long for consent
	consentTTL       = 5 * time.Minute     // a one-time code is good this long
	codeTTL          = time.Minute         // an authorization code is good this long
	unusedClient     = 24 * time.Hour      // a registered client never granted anything expires
	idleClient       = 30 * 24 * time.Hour // a client with no live grant expires after this
	refreshIdle      = 30 * 24 * time.Hour // a grant whose refresh token is not used expires
	grantMax         = 90 * 24 * time.Hour // a grant ends this long after consent, used or not
	maxClients       = 200                 // registered clients at most
	maxPending       = 20                  // authorization requests waiting at most
	maxPendingClient = 3                   // of them from one client
	maxCodeFailure   = 5                   // wrong one-time codes before a request is dropped
)

// Client is a client registered by RFC 7591 dynamic registration.
type Client struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	RedirectURIs []string  `json:"redirect_uris"`
	Registered   time.Time `json:"registered"`
	LastUsed     time.Time `json:"last_used"`
}

// Pending is an authorization request waiting for the operator's consent.
type Pending struct {
	ID          string    `json:"id"`
	ClientID    string    `json:"client_id"`
	ClientName  string    `json:"client_name"`
	RedirectURI string    `json:"redirect_uri"`
	Scope       string    `json:"scope"`
	Resource    string    `json:"resource"`
	Challenge   string    `json:"code_challenge"` // PKCE S256, a hash
	State       string    `json:"state,omitempty"`
	Created     time.Time `json:"created"`
	Expires     time.Time `json:"expires"`
	Failures    int       `json:"failures,omitempty"` // wrong codes typed
	Denied      bool      `json:"denied,omitempty"`   // the operator said no
}

// RedirectHost is the host the client's redirect goes to, shown to the
// operator.
func (p *Pending) RedirectHost() string { return redirectHost(p.RedirectURI) }

// Consent is the operator's answer to one request: the hash of the
// one-time code wicket approve --oauth printed, the scope granted, signed
// with the operator key so only its holder can make one.
type Consent struct {
	Request  string    `json:"request"`
	CodeHash string    `json:"code_sha256"`
	Scope    string    `json:"scope"`
	Expires  time.Time `json:"expires"`
	By       string    `json:"by"`
	Sig      []byte    `json:"sig"`
}

// Grant is one consent's line of tokens (a refresh-token family): its
// current refresh token's hash, the hashes it rotated away from (a reuse
// of one revokes the grant), its scope and resource. Its Name is the
// caller's name in traces and what `wicket callers revoke` takes.
type Grant struct {
	ID         string    `json:"id"`
	Name       string    `json:"name"`
	ClientID   string    `json:"client_id"`
	ClientName string    `json:"client_name"`
	Scope      string    `json:"scope"`
	Resource   string    `json:"resource"`
	Created    time.Time `json:"created"`
	LastUsed   time.Time `json:"last_used"`
	Expires    time.Time `json:"expires"`
	Refresh    string    `json:"refresh_sha256"`
	Rotated    []string  `json:"rotated_sha256,omitempty"`
	Revoked    time.Time `json:"revoked,omitzero"`
	RevokedWhy string    `json:"revoked_why,omitempty"`
}

// Live reports whether the grant still issues and its tokens still verify.
func (g *Grant) Live(now time.Time) bool { return g.Revoked.IsZero() && now.Before(g.Expires) }

// grants is the grants file's content.
type grants struct {
	Clients  map[string]*Client  `json:"clients"`
	Pending  map[string]*Pending `json:"pending"`
	Consents map[string]*Consent `json:"consents"`
	Grants   map[string]*Grant   `json:"grants"`
}

func (g *grants) init() {
	if g.Clients == nil {
		g.Clients = map[string]*Client{}
	}
	if g.Pending == nil {
		g.Pending = map[string]*Pending{}
	}
	if g.Consents == nil {
		g.Consents = map[string]*Consent{}
	}
	if g.Grants == nil {
		g.Grants = map[string]*Grant{}
	}
}

// prune drops what has expired: requests and consents past their time,
// grants past their end (a revoked one is kept until then, so a reused
// refresh token is still recognised), clients nobody uses.
func (g *grants) prune(now time.Time) {
	for id, p := range g.Pending {
		if !now.Before(p.Expires) {
			delete(g.Pending, id)
		}
	}
	for id, c := range g.Consents {
		if !now.Before(c.Expires) || g.Pending[c.Request] == nil {
			delete(g.Consents, id)
		}
	}
	live := map[string]bool{}
	for id, gr := range g.Grants {
		if !now.Before(gr.Expires) {
			delete(g.Grants, id)
			continue
		}
		if gr.Live(now) {
			live[gr.ClientID] = true
		}
	}
	for id, c := range g.Clients {
		ttl := idleClient
		if c.LastUsed.Equal(c.Registered) {
			ttl = unusedClient
		}
		if !live[id] && now.Sub(c.LastUsed) > ttl {
			delete(g.Clients, id)
		}
	}
}

// Store is the grants file settings/oauth-grants.json, shared by the
// server and the operator's commands: every change is made under an
// advisory lock on a fresh read and written whole (temp file, rename);
// readers reload it when it changed, so a revocation made by another
// process is seen at the next token check.
type Store struct {
	path string
	mu   sync.Mutex
	seen os.FileInfo // the file last read
	cur  *grants
}

// OpenStore opens the grants file in dir (the project's settings/).
func OpenStore(dir string) *Store { return &Store{path: filepath.Join(dir, GrantsFile)} }

func (s *Store) read() (*grants, os.FileInfo, error) {
	g := &grants{}
	// Stat before reading: if the file is replaced in between, the
	// content is the newer one and the next view reads it again.
	fi, err := os.Stat(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		g.init()
		return g, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("oauth grants: %w", err)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		// Whoever can write it can bring a revoked grant back.
		return nil, nil, fmt.Errorf("oauth grants: %s is writable by others (mode %o): chmod 600 it", s.path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(s.path)
	if err != nil {
		return nil, nil, fmt.Errorf("oauth grants: %w", err)
	}
	if err := json.Unmarshal(b, g); err != nil {
		return nil, nil, fmt.Errorf("oauth grants: %s is not valid JSON (%v): move it away to start with no clients and no grants", s.path, err)
	}
	g.init()
	return g, fi, nil
}

// view returns the file's content, read again only when it changed.
func (s *Store) view() (*grants, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fi, err := os.Stat(s.path)
	if err == nil && s.cur != nil && s.seen != nil && os.SameFile(fi, s.seen) && fi.ModTime().Equal(s.seen.ModTime()) && fi.Size() == s.seen.Size() {
		return s.cur, nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("oauth grants: %w", err)
	}
	g, fi, err := s.read()
	if err != nil {
		return nil, err
	}
	s.cur, s.seen = g, fi
	return g, nil
}

// update changes the file under its lock: fn sees a fresh, pruned read
// and its change is written unless it returns an error.
func (s *Store) update(now time.Time, fn func(*grants) error) error {
	lk, err := lockFile(s.path + ".lock")
	if err != nil {
		return err
	}
	defer lk.Close()
	g, _, err := s.read()
	if err != nil {
		return err
	}
	g.prune(now)
	if err := fn(g); err != nil {
		return err
	}
	b, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".oauth-grants-*")
	if err != nil {
		return fmt.Errorf("oauth grants: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("oauth grants: %w", err)
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		return fmt.Errorf("oauth grants: %w", err)
	}
	s.mu.Lock()
	s.cur, s.seen = nil, nil // read again at the next view
	s.mu.Unlock()
	return nil
}

// Waiting lists the authorization requests waiting for consent, oldest
// first, without those already answered.
func (s *Store) Waiting(now time.Time) ([]Pending, error) {
	g, err := s.view()
	if err != nil {
		return nil, err
	}
	var out []Pending
	for _, p := range g.Pending {
		if now.Before(p.Expires) && !p.Denied && g.Consents[p.ID] == nil {
			out = append(out, *p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	return out, nil
}

// Grants lists the grants, live and revoked, newest first.
func (s *Store) Grants() ([]Grant, error) {
	g, err := s.view()
	if err != nil {
		return nil, err
	}
	var out []Grant
	for _, gr := range g.Grants {
		out = append(out, *gr)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Created.After(out[j].Created) })
	return out, nil
}

// ErrNoGrant is Revoke's error for a name no live grant has.
var ErrNoGrant = errors.New("no such OAuth grant")

// Revoke ends the grant named name (or with that id) at once: its refresh
// token stops working and its access tokens stop verifying at the
// server's next check. It returns the grant revoked.
func (s *Store) Revoke(now time.Time, name, why string) (Grant, error) {
	var out Grant
	err := s.update(now, func(g *grants) error {
		for _, gr := range g.Grants {
			if (gr.Name == name || gr.ID == name) && gr.Live(now) {
				gr.Revoked, gr.RevokedWhy = now, why
				out = *gr
				return nil
			}
		}
		return fmt.Errorf("%w named %q (wicket callers list shows the live ones)", ErrNoGrant, name)
	})
	return out, err
}

// revoked reports whether grant id is no longer live (revoked, expired or
// unknown); read from the file as it is now.
func (s *Store) revoked(id string, now time.Time) (bool, error) {
	g, err := s.view()
	if err != nil {
		return true, err
	}
	gr := g.Grants[id]
	return gr == nil || !gr.Live(now), nil
}

// hash is the SHA-256 of a secret in hex: what is stored instead of it.
func hash(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}
