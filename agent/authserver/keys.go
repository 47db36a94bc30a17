package authserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// signingKey is one ES256 key pair of the issuer.
type signingKey struct {
	Created time.Time       `json:"created"`
	Key     jose.JSONWebKey `json:"jwk"` // private
}

// keyRing holds the issuer's signing keys in settings/oauth-keys.json
// (0600): the newest signs; older ones stay in the JWKS until no token
// they signed can still be live, then are dropped (rotation).
type keyRing struct {
	path    string
	rotate  time.Duration // a key signs this long
	keep    time.Duration // an old key is served this long after the next one is made
	random  io.Reader
	mu      sync.Mutex
	keys    []signingKey // oldest first
	signers map[string]jose.Signer
}

func openKeys(dir string, rotate, keep time.Duration, random io.Reader, now time.Time) (*keyRing, error) {
	r := &keyRing{path: filepath.Join(dir, KeysFile), rotate: rotate, keep: keep, random: random, signers: map[string]jose.Signer{}}
	fi, err := os.Stat(r.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("oauth keys: %w", err)
	case fi.Mode().Perm()&0o077 != 0:
		return nil, fmt.Errorf("oauth keys: %s is readable by others (mode %o): it holds the token signing keys; chmod 600 it", r.path, fi.Mode().Perm())
	default:
		b, err := os.ReadFile(r.path)
		if err != nil {
			return nil, fmt.Errorf("oauth keys: %w", err)
		}
		if err := json.Unmarshal(b, &r.keys); err != nil {
			return nil, fmt.Errorf("oauth keys: %s is not valid (%v): remove it and restart; tokens it signed stop verifying", r.path, err)
		}
		for _, k := range r.keys {
			if _, ok := k.Key.Key.(*ecdsa.PrivateKey); !ok {
				return nil, fmt.Errorf("oauth keys: %s holds a key that is not an EC private key: remove it and restart", r.path)
			}
		}
	}
	if err := r.maybeRotate(now); err != nil {
		return nil, err
	}
	return r, nil
}

// maybeRotate makes a key when there is none or the newest is older than
// rotate, drops keys no live token can name, and saves the ring.
func (r *keyRing) maybeRotate(now time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	changed := false
	if len(r.keys) == 0 || now.Sub(r.keys[len(r.keys)-1].Created) >= r.rotate {
		k, err := ecdsa.GenerateKey(elliptic.P256(), r.random)
		if err != nil {
			return fmt.Errorf("oauth keys: %w", err)
		}
		id := make([]byte, 8)
		if _, err := io.ReadFull(r.random, id); err != nil {
			return err
		}
		r.keys = append(r.keys, signingKey{Created: now, Key: jose.JSONWebKey{Key: k, KeyID: fmt.Sprintf("%x", id), Algorithm: string(jose.ES256), Use: "sig"}})
		changed = true
	}
	for len(r.keys) > 1 && now.Sub(r.keys[1].Created) >= r.keep {
		delete(r.signers, r.keys[0].Key.KeyID)
		r.keys = r.keys[1:]
		changed = true
	}
	if !changed {
		return nil
	}
	b, err := json.MarshalIndent(r.keys, "", "  ")
	if err != nil {
		return err
	}
	tmp := r.path + ".new"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("oauth keys: %w", err)
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, r.path)
}

// sign signs claims with the newest key as an RFC 9068 access token.
func (r *keyRing) sign(claims ...any) (string, error) {
	r.mu.Lock()
	k := r.keys[len(r.keys)-1]
	s := r.signers[k.Key.KeyID]
	if s == nil {
		var err error
		s, err = jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: k.Key.Key},
			(&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", k.Key.KeyID))
		if err != nil {
			r.mu.Unlock()
			return "", err
		}
		r.signers[k.Key.KeyID] = s
	}
	r.mu.Unlock()
	b := jwt.Signed(s)
	for _, c := range claims {
		b = b.Claims(c)
	}
	return b.Serialize()
}

// public is the JWKS: the public halves of every key kept.
func (r *keyRing) public() jose.JSONWebKeySet {
	r.mu.Lock()
	defer r.mu.Unlock()
	set := jose.JSONWebKeySet{}
	for i := len(r.keys) - 1; i >= 0; i-- {
		set.Keys = append(set.Keys, r.keys[i].Key.Public())
	}
	return set
}

// verify checks raw's ES256 signature against the key its kid names and
// returns the payload.
func (r *keyRing) verify(raw string) ([]byte, error) {
	tok, err := jose.ParseSigned(raw, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		return nil, errors.New("malformed jwt")
	}
	if len(tok.Signatures) != 1 {
		return nil, errors.New("malformed jwt: one signature expected")
	}
	kid := tok.Signatures[0].Header.KeyID
	r.mu.Lock()
	var pub *ecdsa.PublicKey
	for _, k := range r.keys {
		if k.Key.KeyID == kid {
			pub = &k.Key.Key.(*ecdsa.PrivateKey).PublicKey
		}
	}
	r.mu.Unlock()
	if pub == nil {
		return nil, errors.New("failed to verify signature: no key of this issuer has that kid")
	}
	payload, err := tok.Verify(pub)
	if err != nil {
		return nil, errors.New("failed to verify signature")
	}
	return payload, nil
}

// KeySet verifies the issuer's own access tokens for the resource server
// (it satisfies go-oidc's KeySet): the signature against the current keys,
// then that the token's grant is still live in the grants file, so a
// revocation is seen at the next request.
type KeySet struct{ s *Server }

// VerifySignature implements oidc.KeySet.
func (k KeySet) VerifySignature(_ context.Context, raw string) ([]byte, error) {
	payload, err := k.s.keys.verify(raw)
	if err != nil {
		return nil, err
	}
	var cl struct {
		Grant string `json:"grant"`
	}
	if json.Unmarshal(payload, &cl) != nil || cl.Grant == "" {
		return nil, errors.New("malformed jwt: no grant")
	}
	gone, err := k.s.store.revoked(cl.Grant, k.s.now())
	if err != nil {
		return nil, fmt.Errorf("the grants file cannot be read: %w", err)
	}
	if gone {
		return nil, errors.New("the token's grant was revoked")
	}
	return payload, nil
}
