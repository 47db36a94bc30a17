package front

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// The issuer's key set, as OAuth verifies tokens against it. go-oidc's
// remote key set keeps the keys it fetched for the life of the process
// and fetches again only for a token they do not verify, so a key the
// issuer removed (rotated out, or revoked after a leak) kept verifying.
// jwksKeys instead holds the keys for the JWKS response's cache lifetime
// (its Cache-Control max-age, bounded to jwksMinLife..jwksMaxLife, and
// jwksMaxLife without one) and fetches them again once that has passed,
// so a removed key stops verifying within jwksMaxLife; a token naming a
// key it does not hold (a new one) fetches them again at once, at most
// once per jwksMinRefetch. When the keys are due and cannot be fetched,
// it verifies nothing: it never trusts keys older than their lifetime.

// Bounds of the key set's lifetime, and of how often it is fetched.
const (
	jwksMaxLife    = 10 * time.Minute
	jwksMinLife    = 30 * time.Second
	jwksMinRefetch = 30 * time.Second
	jwksTimeout    = 10 * time.Second
	jwksMaxBytes   = 1 << 20
)

// jwsAlgs are the signature algorithms a token may use.
var jwsAlgs = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.ES256, jose.ES384, jose.ES512, jose.PS256, jose.PS384, jose.PS512, jose.EdDSA}

type jwksKeys struct {
	url    string
	client *http.Client
	now    func() time.Time

	mu      sync.Mutex
	keys    []jose.JSONWebKey
	fetched time.Time     // when keys were fetched
	life    time.Duration // how long they are good for
	tried   time.Time     // the last fetch begun
	fetches int           // fetches begun (for tests and the log)
}

func newJWKSKeys(url string, client *http.Client, now func() time.Time) *jwksKeys {
	if now == nil {
		now = time.Now
	}
	return &jwksKeys{url: url, client: client, now: now}
}

// VerifySignature is oidc.KeySet: the token's payload when a current key
// of the issuer signed it.
func (k *jwksKeys) VerifySignature(ctx context.Context, token string) ([]byte, error) {
	jws, err := jose.ParseSigned(token, jwsAlgs)
	if err != nil {
		return nil, fmt.Errorf("malformed jwt: %w", err)
	}
	if len(jws.Signatures) != 1 {
		return nil, errors.New("malformed jwt: want one signature")
	}
	kid := jws.Signatures[0].Header.KeyID
	keys, err := k.current(ctx, kid)
	if err != nil {
		return nil, err
	}
	for _, key := range keys {
		if kid != "" && key.KeyID != kid {
			continue
		}
		if payload, err := jws.Verify(key); err == nil {
			return payload, nil
		}
	}
	return nil, errors.New("failed to verify signature: no current key of the issuer verifies the token")
}

// current is the key set to verify a token naming kid with: fetched again
// when its lifetime has passed, or when kid is not in it (rate-limited).
func (k *jwksKeys) current(ctx context.Context, kid string) ([]jose.JSONWebKey, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := k.now()
	due := k.fetched.IsZero() || now.Sub(k.fetched) >= k.life
	unknown := kid != "" && !hasKey(k.keys, kid)
	mayTry := k.tried.IsZero() || now.Sub(k.tried) >= jwksMinRefetch
	switch {
	case due && !mayTry:
		return nil, fmt.Errorf("failed to verify signature: the issuer's keys are older than their lifetime and could not be fetched again (next try in %s)", (jwksMinRefetch - now.Sub(k.tried)).Round(time.Second))
	case due || unknown && mayTry:
		k.tried = now
		k.fetches++
		keys, life, err := k.fetch(ctx)
		if err != nil {
			if due {
				return nil, fmt.Errorf("failed to verify signature: the issuer's keys are due and could not be fetched: %w", err)
			}
			return k.keys, nil // a new kid stays unknown; the keys held are still current
		}
		k.keys, k.life, k.fetched = keys, life, k.now()
	}
	return k.keys, nil
}

func hasKey(keys []jose.JSONWebKey, kid string) bool {
	for _, k := range keys {
		if k.KeyID == kid {
			return true
		}
	}
	return false
}

// fetch reads the JWKS and its lifetime.
func (k *jwksKeys) fetch(ctx context.Context) ([]jose.JSONWebKey, time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), jwksTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.url, nil)
	if err != nil {
		return nil, 0, err
	}
	res, err := k.client.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("GET the JWKS: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, 0, fmt.Errorf("GET the JWKS: %s", res.Status)
	}
	var set jose.JSONWebKeySet
	if err := json.NewDecoder(io.LimitReader(res.Body, jwksMaxBytes)).Decode(&set); err != nil {
		return nil, 0, fmt.Errorf("read the JWKS: %w", err)
	}
	return set.Keys, cacheLife(res.Header.Get("Cache-Control")), nil
}

// cacheLife is a JWKS response's lifetime from its Cache-Control header,
// bounded to jwksMinLife..jwksMaxLife; jwksMaxLife without a max-age.
func cacheLife(cc string) time.Duration {
	life := jwksMaxLife
	for _, d := range strings.Split(cc, ",") {
		d = strings.ToLower(strings.TrimSpace(d))
		switch {
		case d == "no-store" || d == "no-cache":
			life = 0
		case strings.HasPrefix(d, "max-age="):
			if n, err := strconv.Atoi(strings.TrimPrefix(d, "max-age=")); err == nil && n >= 0 {
				life = min(life, time.Duration(n)*time.Second)
			}
		}
	}
	return max(jwksMinLife, min(life, jwksMaxLife))
}
