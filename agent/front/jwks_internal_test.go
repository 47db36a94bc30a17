package front

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"wicket/internal/project"
	"wicket/internal/testkit"
)

// rotatingIssuer serves a JWKS the test changes, with a Cache-Control
// max-age, and counts the fetches.
type rotatingIssuer struct {
	url     string
	mu      sync.Mutex
	keys    map[string]*ecdsa.PrivateKey // kid → key served
	cc      string
	fetches int
}

func newRotatingIssuer(t *testing.T) *rotatingIssuer {
	t.Helper()
	is := &rotatingIssuer{keys: map[string]*ecdsa.PrivateKey{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		is.mu.Lock()
		defer is.mu.Unlock()
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			_ = json.NewEncoder(w).Encode(map[string]string{"issuer": is.url, "jwks_uri": is.url + "/jwks"})
		case "/jwks":
			is.fetches++
			var set jose.JSONWebKeySet
			for kid, k := range is.keys {
				set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.PublicKey, KeyID: kid, Algorithm: "ES256", Use: "sig"})
			}
			if is.cc != "" {
				w.Header().Set("Cache-Control", is.cc)
			}
			_ = json.NewEncoder(w).Encode(set)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	is.url = srv.URL
	return is
}

func (is *rotatingIssuer) serve(cc string, keys map[string]*ecdsa.PrivateKey) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.cc, is.keys = cc, keys
}

func (is *rotatingIssuer) count() int {
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.fetches
}

// TestOAuthKeyRotation is issue 44's item 4: a key removed from the
// issuer's JWKS kept verifying old and new tokens (3 of 3, 0 fetches).
// The keys are fetched again on the JWKS's cache lifetime (at most 10
// minutes) and on an unknown kid (at most once per 30 s).
func TestOAuthKeyRotation(t *testing.T) {
	is := newRotatingIssuer(t)
	old, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	next, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	is.serve("", map[string]*ecdsa.PrivateKey{"old": old})
	clock := testkit.NewClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	oa, err := NewOAuth(context.Background(), project.OAuthConfig{Issuer: is.url, Audience: testAudience}, OAuthOptions{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	token := func(kid string, key *ecdsa.PrivateKey) string {
		sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", kid))
		if err != nil {
			t.Fatal(err)
		}
		now := clock.Now()
		s, err := jwt.Signed(sig).Claims(jwt.Claims{Issuer: is.url, Subject: "alice", Audience: jwt.Audience{testAudience},
			Expiry: jwt.NewNumericDate(now.Add(time.Hour)), IssuedAt: jwt.NewNumericDate(now)}).Claims(map[string]any{"scope": "wicket:read"}).Serialize()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	verifies := func(tok string) error {
		_, err := oa.authenticate(context.Background(), tok)
		return err
	}
	if err := verifies(token("old", old)); err != nil {
		t.Fatalf("the issuer's key: %v", err)
	}

	// The issuer rotates: "old" is removed, "next" added.
	is.serve("", map[string]*ecdsa.PrivateKey{"next": next})
	clock.Advance(time.Minute)
	if err := verifies(token("next", next)); err != nil {
		t.Fatalf("a token of the new key (an unknown kid fetches the keys again): %v", err)
	}
	if err := verifies(token("old", old)); err == nil {
		t.Error("the removed key still verifies after the keys were fetched again")
	}

	// Removed without a new kid to prompt a fetch: it stops verifying
	// once the keys' lifetime (the response's max-age, here 2 minutes)
	// has passed.
	is.serve("max-age=120", map[string]*ecdsa.PrivateKey{"old": old, "next": next})
	clock.Advance(jwksMaxLife)
	if err := verifies(token("old", old)); err != nil {
		t.Fatalf("the key put back: %v", err)
	}
	is.serve("max-age=120", map[string]*ecdsa.PrivateKey{"next": next})
	clock.Advance(time.Minute)
	if err := verifies(token("old", old)); err != nil {
		t.Fatalf("within the keys' lifetime the key held still verifies: %v", err)
	}
	clock.Advance(time.Minute)
	err = verifies(token("old", old))
	if err == nil || !strings.Contains(err.Error(), "signature") {
		t.Fatalf("a removed key verifies past the keys' lifetime: %v", err)
	}
	// A max-age above the bound is held to 10 minutes.
	if got := cacheLife("public, max-age=86400"); got != jwksMaxLife {
		t.Errorf("max-age of a day: lifetime %s, want %s", got, jwksMaxLife)
	}

	// Unknown kids fetch at most once per jwksMinRefetch.
	before := is.count()
	stray, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	for range 20 {
		_ = verifies(token("k9", stray))
	}
	n1 := is.count() - before
	if n1 > 1 {
		t.Errorf("20 tokens naming an unknown kid fetched the keys %d times, want at most 1", n1)
	}
	clock.Advance(jwksMinRefetch)
	for range 20 {
		_ = verifies(token("k9", stray))
	}
	if n := is.count() - before - n1; n != 1 {
		t.Errorf("%s later, 20 tokens naming an unknown kid fetched %d times, want 1", jwksMinRefetch, n)
	}
}
