package server

import (
	"bytes"
	"context"
	"crypto/hmac"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"wicket/node"
)

// verifier checks request signatures and remembers nonces.
type verifier struct {
	keys map[string]string // key id → key
	now  func() time.Time

	mu        sync.Mutex
	seen      map[string]time.Time // nonce → when it may be forgotten
	lastSweep time.Time
}

func newVerifier(observe, control, agent string, now func() time.Time) *verifier {
	v := &verifier{
		keys: map[string]string{node.KeyObserve: observe, node.KeyControl: control},
		now:  now,
		seen: map[string]time.Time{},
	}
	if agent != "" { // the agent's writes (envelope.go)
		v.keys[node.KeyAgent] = agent
	}
	return v
}

// verify authenticates r (whose body has been read into body) and returns
// the key id that signed it. The checks run in an order that tells the
// caller exactly what is wrong: missing headers, unknown key id, nonce
// length, timestamp, bad signature, replayed nonce. A nonce is remembered only once
// its signature is good, so nobody without a key can burn one.
func (v *verifier) verify(r *http.Request, body []byte) (string, *node.Error) {
	keyID := r.Header.Get(node.HeaderKey)
	ts := r.Header.Get(node.HeaderTimestamp)
	nonce := r.Header.Get(node.HeaderNonce)
	sig := r.Header.Get(node.HeaderSignature)
	if keyID == "" || ts == "" || nonce == "" || sig == "" {
		return "", node.Errorf(node.KindAuth, "unsigned",
			"request is not signed: send the %s, %s, %s and %s headers (use node.Client)", node.HeaderKey, node.HeaderTimestamp, node.HeaderNonce, node.HeaderSignature)
	}
	key, ok := v.keys[keyID]
	if !ok {
		return "", node.Errorf(node.KindAuth, "unknown_key", "unknown key id %q: use %q or %q", short(keyID), node.KeyObserve, node.KeyControl)
	}
	if len(nonce) < 16 || len(nonce) > 128 {
		return "", node.Errorf(node.KindAuth, "bad_nonce", "nonce must be 16 to 128 characters")
	}
	secs, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return "", node.Errorf(node.KindAuth, "bad_timestamp", "timestamp %q is not unix seconds", short(ts))
	}
	now := v.now()
	if off := float64(secs) - float64(now.Unix()); off > node.Window.Seconds() || off < -node.Window.Seconds() {
		return "", node.Errorf(node.KindAuth, "stale_timestamp", "%s", staleText(secs, off, now))
	}
	want := node.Sign(key, r.Method, r.URL.RequestURI(), ts, nonce, body)
	if !hmac.Equal([]byte(want), []byte(sig)) {
		return "", node.Errorf(node.KindAuth, "bad_signature",
			"signature does not match: the %s key differs from the node's, or the request changed in transit", keyID)
	}
	if !v.use(nonce, now) {
		return "", node.Errorf(node.KindAuth, "replayed_nonce", "nonce already used: every request needs a fresh nonce")
	}
	return keyID, nil
}

// staleText says how far a refused timestamp is from the node's clock
// (off seconds; float64, so no offset overflows) and, when it reads as
// milliseconds near now, says so.
func staleText(secs int64, off float64, now time.Time) string {
	dir := "ahead of"
	if off < 0 {
		dir, off = "behind", -off
	}
	var far string
	switch {
	case off < 2*24*3600:
		far = (time.Duration(off) * time.Second).String()
	case off < 2*365*24*3600:
		far = strconv.FormatFloat(off/(24*3600), 'f', 0, 64) + " days"
	default:
		far = strconv.FormatFloat(off/(365.25*24*3600), 'f', 0, 64) + " years"
	}
	msg := fmt.Sprintf("timestamp %d is %s %s the node's clock (allowed: %s)", secs, far, dir, node.Window)
	if ms := time.UnixMilli(secs); ms.Sub(now).Abs() < 24*time.Hour {
		return msg + "; it looks like milliseconds: send unix seconds"
	}
	return msg + "; check the clocks of client and node"
}

// use records a nonce and reports whether it was fresh. A nonce is kept
// for two windows, longer than any timestamp it could be replayed with.
func (v *verifier) use(nonce string, now time.Time) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if now.Sub(v.lastSweep) > node.Window {
		for n, until := range v.seen {
			if now.After(until) {
				delete(v.seen, n)
			}
		}
		v.lastSweep = now
	}
	if _, dup := v.seen[nonce]; dup {
		return false
	}
	v.seen[nonce] = now.Add(2 * node.Window)
	return true
}

// short shortens untrusted header text for an error.
func short(s string) string {
	if len(s) > 32 {
		return s[:32] + "..."
	}
	return s
}

type keyIDContext struct{}

// authenticate reads the body (bounded), verifies the signature, and lets
// only the control key reach POST /v1/commands.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			writeError(w, errTooLarge())
			return
		}
		keyID, aerr := s.auth.verify(r, body)
		if aerr != nil {
			s.log.Warn("request refused", "code", aerr.Code, "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
			writeError(w, aerr)
			return
		}
		if r.Method == http.MethodPost && r.URL.Path != "/v1/dry-run" {
			if err := mayWrite(keyID); err != nil {
				writeError(w, err)
				return
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), keyIDContext{}, keyID)))
	})
}
