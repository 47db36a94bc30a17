package authserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
)

// grantError is an RFC 6749 §5.2 error the token endpoint answers.
type grantError struct{ code, desc string }

func (e *grantError) Error() string { return e.code + ": " + e.desc }

// token answers POST /oauth/token: authorization_code (with the PKCE
// verifier) or refresh_token (rotated: the old one is spent, and using a
// spent one revokes the whole grant).
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "the body must be application/x-www-form-urlencoded")
		return
	}
	f := r.PostForm
	if f.Get("client_secret") != "" || r.Header.Get("Authorization") != "" {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "clients here are public (token_endpoint_auth_method none): send client_id only")
		return
	}
	if res := f.Get("resource"); res != "" && res != s.o.Resource {
		oauthError(w, http.StatusBadRequest, "invalid_target", "this server issues tokens only for "+s.o.Resource)
		return
	}
	var (
		out map[string]any
		err error
	)
	switch f.Get("grant_type") {
	case "authorization_code":
		out, err = s.exchange(f.Get("code"), f.Get("client_id"), f.Get("redirect_uri"), f.Get("code_verifier"))
	case "refresh_token":
		out, err = s.refresh(f.Get("refresh_token"), f.Get("client_id"), f.Get("scope"))
	default:
		err = &grantError{"unsupported_grant_type", "grant_type must be authorization_code or refresh_token"}
	}
	var ge *grantError
	switch {
	case errors.As(err, &ge):
		status := http.StatusBadRequest
		if ge.code == "invalid_client" {
			status = http.StatusUnauthorized
		}
		oauthError(w, status, ge.code, ge.desc)
	case err != nil:
		oauthError(w, http.StatusInternalServerError, "server_error", "the grant could not be recorded")
	default:
		w.Header().Set("Pragma", "no-cache")
		b, _ := json.Marshal(out)
		writeJSON(w, http.StatusOK, b)
	}
}

// exchange spends an authorization code: a code is good once, within a
// minute, for the client and redirect it was issued to, with the PKCE
// verifier of its challenge. A code used twice revokes what it granted.
func (s *Server) exchange(code, clientID, redirect, verifier string) (map[string]any, error) {
	now := s.now()
	h := hash(code)
	s.mu.Lock()
	ac := s.codes[h]
	delete(s.codes, h)
	spent, replay := s.spent[h]
	for k, v := range s.codes {
		if now.After(v.expires) {
			delete(s.codes, k)
		}
	}
	for k, v := range s.spent {
		if now.After(v.expires) {
			delete(s.spent, k)
		}
	}
	s.mu.Unlock()
	if replay {
		_, _ = s.store.Revoke(now, spent.grant, "authorization code used twice")
		return nil, &grantError{"invalid_grant", "the authorization code was already used; what it granted is revoked"}
	}
	if ac == nil || now.After(ac.expires) {
		return nil, &grantError{"invalid_grant", "the authorization code is unknown or expired"}
	}
	if clientID != ac.clientID {
		return nil, &grantError{"invalid_grant", "the authorization code was issued to another client"}
	}
	if redirect != ac.redirect {
		return nil, &grantError{"invalid_grant", "redirect_uri differs from the authorization request's"}
	}
	sum := sha256.Sum256([]byte(verifier))
	if len(verifier) < 43 || len(verifier) > 128 ||
		subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(ac.challenge)) != 1 {
		return nil, &grantError{"invalid_grant", "code_verifier does not match the code_challenge (PKCE S256)"}
	}
	gr := &Grant{ID: s.random(16), ClientID: ac.clientID, ClientName: ac.clientName, Scope: ac.scope, Resource: ac.resource,
		Created: now, LastUsed: now, Expires: now.Add(grantMax)}
	gr.Name = callerName(ac.clientName, gr.ID)
	refresh := gr.ID + "." + s.random(32)
	gr.Refresh = hash(refresh)
	err := s.store.update(now, func(g *grants) error {
		g.Grants[gr.ID] = gr
		touchClient(g, gr.ClientID, now)
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.spent[h] = spentCode{grant: gr.ID, expires: now.Add(grantMax)}
	s.mu.Unlock()
	return s.issue(gr, gr.Scope, refresh, now)
}

// refresh rotates a refresh token: the presented one must be the grant's
// current one; a spent one revokes the grant (someone holds a copy).
func (s *Server) refresh(token, clientID, scope string) (map[string]any, error) {
	now := s.now()
	id, _, ok := strings.Cut(token, ".")
	if !ok || id == "" {
		return nil, &grantError{"invalid_grant", "the refresh token is not one of this server's"}
	}
	var (
		gr    Grant
		fresh string
		bad   *grantError
	)
	err := s.store.update(now, func(g *grants) error {
		cur := g.Grants[id]
		h := hash(token)
		switch {
		case cur == nil:
			bad = &grantError{"invalid_grant", "the refresh token is unknown or expired"}
		case !cur.Live(now):
			bad = &grantError{"invalid_grant", "the grant was revoked (" + cur.RevokedWhy + "); authorize again"}
		case cur.ClientID != clientID:
			bad = &grantError{"invalid_grant", "the refresh token was issued to another client"}
		case slices.Contains(cur.Rotated, h):
			cur.Revoked, cur.RevokedWhy = now, "a rotated refresh token was used again"
			bad = &grantError{"invalid_grant", "this refresh token was already used: the grant is revoked; authorize again"}
		case subtle.ConstantTimeCompare([]byte(h), []byte(cur.Refresh)) != 1:
			bad = &grantError{"invalid_grant", "the refresh token is not this grant's current one"}
		case now.Sub(cur.LastUsed) > refreshIdle:
			bad = &grantError{"invalid_grant", "the refresh token went unused too long; authorize again"}
		default:
			fresh = cur.ID + "." + s.random(32)
			cur.Rotated = append(cur.Rotated, cur.Refresh)
			if len(cur.Rotated) > 100 {
				cur.Rotated = cur.Rotated[len(cur.Rotated)-100:]
			}
			cur.Refresh, cur.LastUsed = hash(fresh), now
			touchClient(g, cur.ClientID, now)
			gr = *cur
		}
		return nil // a revocation on reuse is written too
	})
	if err != nil {
		return nil, err
	}
	if bad != nil {
		return nil, bad
	}
	narrowed, err := s.scope(scope, gr.Scope)
	if err != nil {
		return nil, &grantError{"invalid_scope", err.Error()}
	}
	return s.issue(&gr, narrowed, fresh, now)
}

// issue signs an access token for gr and answers it with the refresh
// token.
func (s *Server) issue(gr *Grant, scope, refresh string, now time.Time) (map[string]any, error) {
	if err := s.keys.maybeRotate(now); err != nil {
		return nil, err
	}
	exp := now.Add(s.o.AccessTTL)
	tok, err := s.keys.sign(jwt.Claims{Issuer: s.issuer, Subject: gr.Name, Audience: jwt.Audience{gr.Resource},
		IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(exp), ID: s.random(16)},
		map[string]any{"client_id": gr.ClientID, "scope": scope, "grant": gr.ID})
	if err != nil {
		return nil, err
	}
	return map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": int(s.o.AccessTTL.Seconds()),
		"refresh_token": refresh, "scope": scope}, nil
}

// revoke answers RFC 7009 revocation: a refresh token or an access token
// of this server ends its grant. Unknown tokens are answered 200 too.
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "the body must be application/x-www-form-urlencoded")
		return
	}
	tok, now := r.PostForm.Get("token"), s.now()
	id := ""
	if strings.Count(tok, ".") == 2 {
		if payload, err := s.keys.verify(tok); err == nil {
			var cl struct {
				Grant string `json:"grant"`
			}
			if json.Unmarshal(payload, &cl) == nil {
				id = cl.Grant
			}
		}
	} else if gid, _, ok := strings.Cut(tok, "."); ok {
		if g, err := s.store.view(); err == nil && g.Grants[gid] != nil && g.Grants[gid].Refresh == hash(tok) {
			id = gid
		}
	}
	if id != "" {
		if _, err := s.store.Revoke(now, id, "revoked by the client"); err != nil && !errors.Is(err, ErrNoGrant) {
			oauthError(w, http.StatusServiceUnavailable, "temporarily_unavailable", "the revocation could not be recorded; try again")
			return
		}
	}
	w.WriteHeader(http.StatusOK)
}

// callerName is a grant's caller name: the client's name as a slug and
// the grant id's first characters ("claude-ab3d9f").
func callerName(clientName, id string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(clientName) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 24 {
			break
		}
	}
	slug := strings.Trim(b.String(), "-")
	if slug == "" {
		slug = "client"
	}
	return slug + "-" + strings.ToLower(id[:6])
}
