package front

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"wicket/internal/project"
)

// BenchmarkOAuthCheck is the cost of checking one JWT access token
// (signature against the cached JWKS, iss, aud, exp/nbf, scope → grant),
// the work an OAuth request adds before it reaches the session.
func BenchmarkOAuthCheck(b *testing.B) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	var url string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			_ = json.NewEncoder(w).Encode(map[string]string{"issuer": url, "jwks_uri": url + "/jwks"})
		case "/jwks":
			_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	url = srv.URL
	now := time.Now()
	oa, err := NewOAuth(context.Background(), project.OAuthConfig{Issuer: url, Audience: "http://127.0.0.1/mcp"}, OAuthOptions{Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", "k1"))
	if err != nil {
		b.Fatal(err)
	}
	tok, err := jwt.Signed(sig).Claims(jwt.Claims{Issuer: url, Subject: "bench", Audience: jwt.Audience{"http://127.0.0.1/mcp"},
		Expiry: jwt.NewNumericDate(now.Add(time.Hour))}).Claims(map[string]any{"scope": "wicket:trade"}).Serialize()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := oa.authenticate(ctx, tok); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := oa.authenticate(ctx, tok); err != nil {
			b.Fatal(err)
		}
	}
}
