package authserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"
)

// client is a resolved client: registered, or described by its metadata
// document.
type client struct {
	id, name  string
	redirects []string
	cimd      bool
}

// Limits on client ID metadata documents.
const (
	cimdMaxBytes = 5 << 10 // a document is at most 5 KiB
	cimdTimeout  = 5 * time.Second
	cimdTTL      = time.Hour // a fetched document is used this long
	cimdEntries  = 100
	maxNameLen   = 100
	maxRedirects = 10
)

// isCIMD reports whether a client_id is a metadata document's URL.
func isCIMD(id string) bool {
	return strings.HasPrefix(id, "https://") || strings.HasPrefix(id, "http://")
}

// client resolves a client_id: a registered client from the grants file,
// or an https URL whose metadata document is fetched (and cached).
func (s *Server) client(ctx context.Context, id string) (*client, error) {
	if id == "" {
		return nil, errors.New("client_id is missing")
	}
	if isCIMD(id) {
		return s.cimd.get(ctx, id, s.now())
	}
	g, err := s.store.view()
	if err != nil {
		return nil, err
	}
	c := g.Clients[id]
	if c == nil {
		return nil, errors.New("unknown client_id (it may have expired unused): register the client again")
	}
	return &client{id: c.ID, name: c.Name, redirects: c.RedirectURIs}, nil
}

// redirectOK reports whether uri is one of c's redirect URIs: exactly, or
// for a loopback http redirect with any port (RFC 8252 §7.3).
func (c *client) redirectOK(uri string) bool {
	for _, r := range c.redirects {
		if r == uri {
			return true
		}
		a, err1 := url.Parse(r)
		b, err2 := url.Parse(uri)
		if err1 == nil && err2 == nil && a.Scheme == "http" && b.Scheme == "http" && isLoopback(a.Hostname()) &&
			a.Hostname() == b.Hostname() && a.Path == b.Path && a.RawQuery == b.RawQuery {
			return true
		}
	}
	return false
}

// checkRedirect validates a redirect URI a client declares: https, http to
// loopback, or a private-use scheme of a native app (RFC 8252 §7.1); no
// fragment.
func checkRedirect(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Fragment != "" || strings.ContainsAny(raw, " \t\r\n") {
		return fmt.Errorf("redirect URI %q is not an absolute URI without a fragment", raw)
	}
	switch u.Scheme {
	case "https":
		if u.Host == "" {
			return fmt.Errorf("redirect URI %q has no host", raw)
		}
	case "http":
		if !isLoopback(u.Hostname()) {
			return fmt.Errorf("redirect URI %q: plain http only to a loopback host; use https", raw)
		}
	case "javascript", "data", "file", "vbscript":
		return fmt.Errorf("redirect URI %q: scheme %s is not allowed", raw, u.Scheme)
	default:
		if !strings.Contains(u.Scheme, ".") {
			return fmt.Errorf("redirect URI %q: a native app's scheme must be reverse-DNS (e.g. com.example.app:/callback)", raw)
		}
	}
	return nil
}

// cleanName is a client name safe to show: printable, at most 100 runes.
func cleanName(name string) string {
	name = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			return -1
		}
		return r
	}, strings.TrimSpace(name))
	if r := []rune(name); len(r) > maxNameLen {
		name = string(r[:maxNameLen])
	}
	if name == "" {
		return "unnamed client"
	}
	return name
}

func redirectHost(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return "?"
	}
	if u.Host == "" {
		return u.Scheme + ":"
	}
	return u.Host
}

// registration is what RFC 7591 clients send (the fields wicket reads).
type registration struct {
	RedirectURIs []string `json:"redirect_uris"`
	ClientName   string   `json:"client_name"`
	GrantTypes   []string `json:"grant_types"`
	Response     []string `json:"response_types"`
	AuthMethod   string   `json:"token_endpoint_auth_method"`
}

func (reg *registration) check() error {
	if len(reg.RedirectURIs) == 0 || len(reg.RedirectURIs) > maxRedirects {
		return fmt.Errorf("give between 1 and %d redirect_uris", maxRedirects)
	}
	for _, r := range reg.RedirectURIs {
		if err := checkRedirect(r); err != nil {
			return err
		}
	}
	for _, g := range reg.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			return fmt.Errorf("grant type %q is not offered: only authorization_code and refresh_token", g)
		}
	}
	for _, rt := range reg.Response {
		if rt != "code" {
			return fmt.Errorf("response type %q is not offered: only code", rt)
		}
	}
	return nil
}

// register is RFC 7591 dynamic registration of a public client, rate
// limited (10 at once, then one every 6 minutes, for the whole server:
// behind a proxy every client has the proxy's address).
func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	now := s.now()
	if wait, ok := s.reg.take(now); !ok {
		w.Header().Set("Retry-After", fmt.Sprint(int(wait.Seconds())+1))
		oauthError(w, http.StatusTooManyRequests, "invalid_request", "too many client registrations; try again later")
		return
	}
	var reg registration
	if err := json.NewDecoder(io.LimitReader(r.Body, 16<<10)).Decode(&reg); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "the body must be a JSON object of client metadata (RFC 7591)")
		return
	}
	if err := reg.check(); err != nil {
		code := "invalid_client_metadata"
		if strings.HasPrefix(err.Error(), "redirect URI") {
			code = "invalid_redirect_uri"
		}
		oauthError(w, http.StatusBadRequest, code, err.Error())
		return
	}
	c := &Client{ID: "wkc_" + s.random(24), Name: cleanName(reg.ClientName), RedirectURIs: reg.RedirectURIs, Registered: now, LastUsed: now}
	err := s.store.update(now, func(g *grants) error {
		if len(g.Clients) >= maxClients {
			return errors.New("full")
		}
		g.Clients[c.ID] = c
		return nil
	})
	if err != nil {
		oauthError(w, http.StatusServiceUnavailable, "temporarily_unavailable", "no more clients can be registered now; unused ones expire within a day")
		return
	}
	body, _ := json.Marshal(map[string]any{
		"client_id": c.ID, "client_id_issued_at": now.Unix(), "client_name": c.Name, "redirect_uris": c.RedirectURIs,
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
		"token_endpoint_auth_method": "none",
	})
	writeJSON(w, http.StatusCreated, body)
}

// touchClient marks a registered client used (it then does not expire
// while it holds a live grant).
func touchClient(g *grants, id string, now time.Time) {
	if c := g.Clients[id]; c != nil {
		c.LastUsed = now
	}
}

// cimdCache fetches client ID metadata documents and keeps each an hour.
type cimdCache struct {
	http *http.Client
	mu   sync.Mutex
	docs map[string]cimdEntry
}

type cimdEntry struct {
	c       *client
	fetched time.Time
}

func newCIMDCache(c *http.Client) *cimdCache {
	return &cimdCache{http: c, docs: map[string]cimdEntry{}}
}

func (cc *cimdCache) get(ctx context.Context, id string, now time.Time) (*client, error) {
	cc.mu.Lock()
	e, ok := cc.docs[id]
	cc.mu.Unlock()
	if ok && now.Sub(e.fetched) < cimdTTL {
		return e.c, nil
	}
	c, err := cc.fetch(ctx, id)
	if err != nil {
		return nil, err
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if len(cc.docs) >= cimdEntries {
		for k, v := range cc.docs {
			if now.Sub(v.fetched) >= cimdTTL || len(cc.docs) >= cimdEntries {
				delete(cc.docs, k)
			}
		}
	}
	cc.docs[id] = cimdEntry{c: c, fetched: now}
	return c, nil
}

// fetch reads and checks one client ID metadata document: an https URL
// with a path (http only to loopback), at most 5 KiB within 5 s, JSON
// naming itself as client_id, a public client with redirect URIs.
func (cc *cimdCache) fetch(ctx context.Context, id string) (*client, error) {
	u, err := url.Parse(id)
	if err != nil || u.Host == "" || u.Path == "" || u.Path == "/" || u.Fragment != "" || u.User != nil ||
		(u.Scheme != "https" && !(u.Scheme == "http" && isLoopback(u.Hostname()))) {
		return nil, fmt.Errorf("client_id %q: a client ID metadata document's URL must be https with a path", id)
	}
	ctx, cancel := context.WithTimeout(ctx, cimdTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, id, nil)
	if err != nil {
		return nil, fmt.Errorf("client_id %q: %v", id, err)
	}
	req.Header.Set("Accept", "application/json")
	res, err := cc.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("client_id %q: its metadata document cannot be fetched: %v", id, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("client_id %q: its metadata document answered %s", id, res.Status)
	}
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return nil, fmt.Errorf("client_id %q: its metadata document is %q, not JSON", id, mt)
	}
	b, err := io.ReadAll(io.LimitReader(res.Body, cimdMaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("client_id %q: reading its metadata document: %v", id, err)
	}
	if len(b) > cimdMaxBytes {
		return nil, fmt.Errorf("client_id %q: its metadata document is over %d bytes", id, cimdMaxBytes)
	}
	var doc struct {
		registration
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("client_id %q: its metadata document is not a JSON object", id)
	}
	switch {
	case doc.ClientID != id:
		return nil, fmt.Errorf("client_id %q: its metadata document names client_id %q", id, doc.ClientID)
	case doc.ClientSecret != "":
		return nil, fmt.Errorf("client_id %q: a metadata document must not hold a client_secret", id)
	case doc.AuthMethod != "" && doc.AuthMethod != "none":
		return nil, fmt.Errorf("client_id %q: token_endpoint_auth_method %q is not offered: only none (public clients with PKCE)", id, doc.AuthMethod)
	}
	if err := doc.check(); err != nil {
		return nil, fmt.Errorf("client_id %q: %v", id, err)
	}
	return &client{id: id, name: cleanName(doc.ClientName), redirects: doc.RedirectURIs, cimd: true}, nil
}

// fetchClient fetches metadata documents: 5 s in all, no redirects, and
// only public addresses unless loopback is allowed (a resource on
// loopback is one operator's own machine), so a client_id cannot make
// the server probe its network.
func fetchClient(loopback bool) *http.Client {
	d := &net.Dialer{Timeout: cimdTimeout, Control: func(_, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		ip := net.ParseIP(host)
		if ip == nil {
			return fmt.Errorf("address %s is not an IP", host)
		}
		if loopback && ip.IsLoopback() {
			return nil
		}
		if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsUnspecified() || ip.IsMulticast() ||
			ip.IsInterfaceLocalMulticast() || (ip.To4() != nil && ip.To4()[0] == 100 && ip.To4()[1]&0xc0 == 64) {
			return fmt.Errorf("address %s is not public", ip)
		}
		return nil
	}}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = d.DialContext
	return &http.Client{Transport: tr, Timeout: cimdTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return errors.New("redirects are not followed") }}
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
