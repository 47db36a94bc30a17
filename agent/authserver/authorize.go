package authserver

import (
	"crypto/ed25519"
	"crypto/subtle"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// authorize answers GET /oauth/authorize: it checks the request (client,
// redirect URI, PKCE S256, resource, scopes), keeps it waiting for the
// operator's consent and shows the consent page. Errors before the
// redirect URI is known are shown on the page; later ones go back to the
// client (RFC 6749 §4.1.2.1).
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	c, err := s.client(r.Context(), q.Get("client_id"))
	if err != nil {
		s.page(w, http.StatusBadRequest, pageData{Error: "This authorization request cannot be served: " + err.Error() + "."})
		return
	}
	redirect := q.Get("redirect_uri")
	if redirect == "" && len(c.redirects) == 1 {
		redirect = c.redirects[0]
	}
	if !c.redirectOK(redirect) {
		s.page(w, http.StatusBadRequest, pageData{Error: "This authorization request names a redirect_uri the client did not register; nothing was sent back."})
		return
	}
	state := q.Get("state")
	fail := func(code, desc string) { s.redirectError(w, r, redirect, state, code, desc) }
	switch {
	case q.Get("response_type") != "code":
		fail("unsupported_response_type", "only response_type=code is offered")
		return
	case q.Get("code_challenge_method") != "S256" || !pkceChallenge(q.Get("code_challenge")):
		fail("invalid_request", "PKCE is required: code_challenge (43 base64url characters) with code_challenge_method=S256")
		return
	case len(state) > 1024:
		fail("invalid_request", "state is over 1024 bytes")
		return
	}
	resource := q.Get("resource")
	if resource == "" {
		resource = s.o.Resource
	}
	if resource != s.o.Resource {
		fail("invalid_target", "this server issues tokens only for "+s.o.Resource)
		return
	}
	scope, err := s.scope(q.Get("scope"), "")
	if err != nil {
		fail("invalid_scope", err.Error())
		return
	}
	now := s.now()
	p := &Pending{ID: s.random(20), ClientID: c.id, ClientName: c.name, RedirectURI: redirect, Scope: scope, Resource: resource,
		Challenge: q.Get("code_challenge"), State: state, Created: now, Expires: now.Add(pendingTTL)}
	err = s.store.update(now, func(g *grants) error {
		mine := 0
		for _, q := range g.Pending {
			if q.ClientID == c.id {
				mine++
			}
		}
		if len(g.Pending) >= maxPending || mine >= maxPendingClient {
			return errors.New("full")
		}
		g.Pending[p.ID] = p
		return nil
	})
	if err != nil {
		fail("temporarily_unavailable", "too many authorization requests are waiting for the operator")
		return
	}
	s.page(w, http.StatusOK, s.pageFor(p, ""))
}

// scope checks a requested scope against the grantable ones (and within
// limit when given), dropping offline_access (refresh tokens are always
// issued, rotated); none asked is the narrowest scope.
func (s *Server) scope(asked, limit string) (string, error) {
	var out []string
	for _, sc := range strings.Fields(asked) {
		if sc == "offline_access" {
			continue
		}
		if _, ok := s.scopes[sc]; !ok {
			return "", fmt.Errorf("scope %q is not offered (offered: %s)", sc, strings.Join(s.scopeNames(), ", "))
		}
		if limit != "" && !hasScope(limit, sc) {
			return "", fmt.Errorf("scope %q was not granted", sc)
		}
		if !hasScope(strings.Join(out, " "), sc) {
			out = append(out, sc)
		}
	}
	if len(out) == 0 {
		if limit != "" {
			return limit, nil
		}
		return s.o.Scopes[0].Name, nil
	}
	var ordered []string // the narrowest first, as Options.Scopes are
	for _, sc := range s.o.Scopes {
		if slices.Contains(out, sc.Name) {
			ordered = append(ordered, sc.Name)
		}
	}
	return strings.Join(ordered, " "), nil
}

func (s *Server) scopeNames() []string {
	var n []string
	for _, sc := range s.o.Scopes {
		n = append(n, sc.Name)
	}
	return n
}

func hasScope(list, sc string) bool {
	for _, f := range strings.Fields(list) {
		if f == sc {
			return true
		}
	}
	return false
}

func pkceChallenge(c string) bool {
	if len(c) != 43 {
		return false
	}
	for _, r := range c {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// redirectError sends an error back to the client's redirect URI.
func (s *Server) redirectError(w http.ResponseWriter, r *http.Request, redirect, state, code, desc string) {
	u, _ := url.Parse(redirect)
	v := u.Query()
	v.Set("error", code)
	v.Set("error_description", desc)
	if state != "" {
		v.Set("state", state)
	}
	v.Set("iss", s.issuer)
	u.RawQuery = v.Encode()
	http.Redirect(w, r, u.String(), http.StatusSeeOther)
}

// consent answers the consent page's form: the one-time code the
// operator's terminal printed for this request, or a refusal.
func (s *Server) consent(w http.ResponseWriter, r *http.Request) {
	if o := r.Header.Get("Origin"); o != "" && !strings.EqualFold(o, s.issuer) {
		s.page(w, http.StatusForbidden, pageData{Error: "The consent form must be sent from " + s.issuer + "'s own page."})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	if err := r.ParseForm(); err != nil {
		s.page(w, http.StatusBadRequest, pageData{Error: "The consent form could not be read."})
		return
	}
	id, typed, deny := r.PostForm.Get("request"), normalizeCode(r.PostForm.Get("code")), r.PostForm.Get("deny") != ""
	now := s.now()
	var (
		done   *Pending // answered: go back to the client
		denied bool
		again  pageData // shown again, with why
		code   string
	)
	err := s.store.update(now, func(g *grants) error {
		p := g.Pending[id]
		if p == nil {
			return errors.New("gone")
		}
		c := g.Consents[id]
		switch {
		case deny || p.Denied:
			done, denied = p, true
		case c == nil || !ed25519.Verify(s.o.Operator, consentMessage(p, c), c.Sig) || !now.Before(c.Expires):
			again = s.pageFor(p, "No one-time code is ready for this request: run `wicket approve --oauth` in the project at a terminal and answer this request there.")
			return nil
		case subtle.ConstantTimeCompare([]byte(hash(typed)), []byte(c.CodeHash)) != 1:
			p.Failures++
			if p.Failures >= maxCodeFailure {
				done, denied = p, true
				break
			}
			again = s.pageFor(p, fmt.Sprintf("That is not this request's code (%d tries left).", maxCodeFailure-p.Failures))
			return nil
		default:
			done = p
			code = s.random(32)
			s.mu.Lock()
			s.codes[hash(code)] = &authCode{clientID: p.ClientID, clientName: p.ClientName, redirect: p.RedirectURI, challenge: p.Challenge,
				scope: c.Scope, resource: p.Resource, expires: now.Add(codeTTL)}
			s.mu.Unlock()
			touchClient(g, p.ClientID, now)
		}
		delete(g.Pending, id)
		delete(g.Consents, id)
		return nil
	})
	switch {
	case err != nil && err.Error() == "gone":
		s.page(w, http.StatusBadRequest, pageData{Error: "This authorization request has expired or was already answered: start again from the client."})
	case err != nil:
		s.page(w, http.StatusInternalServerError, pageData{Error: "The consent could not be recorded: " + err.Error()})
	case done == nil:
		s.page(w, http.StatusOK, again)
	case denied:
		s.redirectError(w, r, done.RedirectURI, done.State, "access_denied", "the operator did not grant this request")
	default:
		u, _ := url.Parse(done.RedirectURI)
		v := u.Query()
		v.Set("code", code)
		if done.State != "" {
			v.Set("state", done.State)
		}
		v.Set("iss", s.issuer)
		u.RawQuery = v.Encode()
		http.Redirect(w, r, u.String(), http.StatusSeeOther)
	}
}

// consentMessage is what the operator key signs: the request as shown
// (client, redirect, resource, PKCE challenge) and the answer.
func consentMessage(p *Pending, c *Consent) []byte {
	return []byte(strings.Join([]string{"wicket oauth consent v1", p.ID, p.ClientID, p.RedirectURI, p.Resource, p.Challenge,
		c.Scope, c.CodeHash, c.Expires.UTC().Format(time.RFC3339Nano), c.By}, "\n"))
}

// normalizeCode reads a typed code: case and separators do not matter.
func normalizeCode(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '2' && r <= '7':
			return r
		}
		return -1
	}, s)
}

// Approve answers a waiting request for the operator: it makes a one-time
// code for it, good for 5 minutes, granting scope (all or part of what was
// asked), signed with the operator key, and returns the code to show at
// the terminal (formatted XXXX-XXXX). Only its hash is stored.
func Approve(st *Store, now time.Time, id, scope string, key ed25519.PrivateKey, by string, random io.Reader) (string, error) {
	b := make([]byte, 8)
	if _, err := io.ReadFull(random, b); err != nil {
		return "", err
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	for i := range b {
		b[i] = alphabet[int(b[i])%32]
	}
	code := string(b)
	err := st.update(now, func(g *grants) error {
		p := g.Pending[id]
		if p == nil || p.Denied {
			return fmt.Errorf("the request %s is no longer waiting (expired or answered)", id)
		}
		for _, sc := range strings.Fields(scope) {
			if !hasScope(p.Scope, sc) {
				return fmt.Errorf("scope %q was not asked for", sc)
			}
		}
		if strings.TrimSpace(scope) == "" {
			return errors.New("grant at least one scope")
		}
		c := &Consent{Request: id, CodeHash: hash(code), Scope: scope, Expires: now.Add(consentTTL), By: by}
		if p.Expires.Before(c.Expires) {
			p.Expires = c.Expires
		}
		c.Sig = ed25519.Sign(key, consentMessage(p, c))
		g.Consents[id] = c
		return nil
	})
	if err != nil {
		return "", err
	}
	return code[:4] + "-" + code[4:], nil
}

// Deny refuses a waiting request for the operator: the page's next answer
// sends the client access_denied.
func Deny(st *Store, now time.Time, id string) error {
	return st.update(now, func(g *grants) error {
		p := g.Pending[id]
		if p == nil {
			return fmt.Errorf("the request %s is no longer waiting", id)
		}
		p.Denied = true
		delete(g.Consents, id)
		return nil
	})
}

// pageData is what the consent page shows.
type pageData struct {
	Issuer       string
	Request      string
	ClientName   string
	ClientID     string
	RedirectHost string
	Scopes       []Scope
	Trade        bool
	Expires      string
	Note         string
	Error        string
	formTarget   string // the redirect's origin, for the CSP
}

func (s *Server) pageFor(p *Pending, note string) pageData {
	d := pageData{Issuer: s.issuer, Request: p.ID, ClientName: p.ClientName, ClientID: p.ClientID, RedirectHost: p.RedirectHost(),
		Expires: p.Expires.UTC().Format("15:04:05 UTC"), Note: note, formTarget: cspSource(p.RedirectURI)}
	for _, f := range strings.Fields(p.Scope) {
		sc := s.scopes[f]
		d.Scopes = append(d.Scopes, sc)
		d.Trade = d.Trade || sc.Name != s.o.Scopes[0].Name
	}
	return d
}

func (s *Server) page(w http.ResponseWriter, status int, d pageData) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	// form-action also binds the redirect after the POST (browsers apply
	// it to redirects), so the client's redirect origin is allowed too.
	// same-origin keeps the form's Origin header (no-referrer would make
	// it "null") and sends no Referer to the client.
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' "+d.formTarget+"; frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	w.WriteHeader(status)
	_ = consentPage.Execute(w, d)
}

var consentPage = template.Must(template.New("consent").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>wicket: authorize a client</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:38rem;margin:2rem auto;padding:0 1rem}
.warn{background:#fff3cd;padding:.5rem 1rem;border-left:4px solid #c80}.err{color:#a00}code{background:#eee;padding:0 .2rem}</style>
</head><body>
<h1>Authorize a client of wicket</h1>
{{if .Error}}<p class="err">{{.Error}}</p>{{else}}
<p><strong>{{.ClientName}}</strong> asks to use this wicket server ({{.Issuer}}).</p>
<ul><li>Client: <code>{{.ClientID}}</code></li><li>Sends you back to: <strong>{{.RedirectHost}}</strong></li></ul>
<p>It asks for:</p><ul>{{range .Scopes}}<li><code>{{.Name}}</code>: {{.Words}}</li>{{end}}</ul>
{{if .Trade}}<p class="warn">This grants trading: the client may preview and confirm orders within the node's guardrails.</p>{{end}}
<p>Only the operator can grant this. At a terminal in the project, run <code>wicket approve --oauth</code>: it shows this request
(request <code>{{.Request}}</code>) and, if you grant it, prints a one-time code. Type it here before {{.Expires}}.</p>
{{if .Note}}<p class="err">{{.Note}}</p>{{end}}
<form method="post" action="/oauth/authorize">
<input type="hidden" name="request" value="{{.Request}}">
<label>One-time code <input name="code" autocomplete="off" autofocus size="12"></label>
<button type="submit">Grant</button> <button type="submit" name="deny" value="1">Deny</button>
</form>{{end}}
</body></html>
`))

// cspSource is a redirect URI's origin as a CSP source expression: the
// origin of an http(s) URI, the scheme of a native app's.
func cspSource(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || strings.ContainsAny(uri, " ;,'") {
		return ""
	}
	if u.Host == "" {
		return u.Scheme + ":"
	}
	return u.Scheme + "://" + u.Host
}
