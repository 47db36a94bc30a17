package project

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wicket/internal/testkit"
)

func noEnv(string) (string, bool) { return "", false }

// TestOperatorKey: init makes the pair (the private half 0600 and
// ignored by git); the private key is read from the environment first,
// then the file, must match the public key and must not be readable by
// others; a project without one is told how to make one; a second pair
// never overwrites the first.
func TestOperatorKey(t *testing.T) {
	p, err := Init(filepath.Join(t.TempDir(), "proj"), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p.OperatorKeyPath())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("operator.key: %v %v", fi, err)
	}
	if gi, _ := os.ReadFile(filepath.Join(p.Root, ".gitignore")); !strings.Contains(string(gi), "settings/operator.key\n") {
		t.Errorf(".gitignore does not ignore the operator key:\n%s", gi)
	}
	pub, err := p.OperatorPublic()
	if err != nil {
		t.Fatal(err)
	}
	key, err := p.OperatorKey(noEnv)
	if err != nil || !key.Public().(ed25519.PublicKey).Equal(pub) {
		t.Fatalf("operator key %v, matches the public key: %v", err, err == nil && key.Public().(ed25519.PublicKey).Equal(pub))
	}
	if err := InitOperatorKey(p, rand.Reader); err == nil || !strings.Contains(err.Error(), "never overwritten") {
		t.Errorf("a second pair: %v", err)
	}
	if again, _ := p.OperatorKey(noEnv); !again.Equal(key) {
		t.Error("a refused second pair changed the key")
	}

	// The environment wins; a key not matching operator.pub is refused.
	other := testkit.Key(t)
	env := func(k string) (string, bool) {
		if k == KeyOperator {
			return hex.EncodeToString(other.Seed()), true
		}
		return "", false
	}
	if _, err := p.OperatorKey(env); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Errorf("a key not matching operator.pub: %v", err)
	}
	if _, err := p.OperatorKey(func(string) (string, bool) { return "beef", true }); err == nil || !strings.Contains(err.Error(), "64 hex digits") {
		t.Errorf("a malformed key in the environment: %v", err)
	}
	envSame := func(k string) (string, bool) { return hex.EncodeToString(key.Seed()), k == KeyOperator }
	if info, _ := p.OperatorKeyInfo(envSame); !info.Present || info.Source != FromEnvironment || !info.Shadowed {
		t.Errorf("info with the environment: %+v", info)
	}

	// Readable by others: refused.
	if err := os.Chmod(p.OperatorKeyPath(), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := p.OperatorKey(noEnv); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a loose operator.key: %v", err)
	}
	if info, loose := p.OperatorKeyInfo(noEnv); !info.Present || info.Source != FromOperatorFile || !loose {
		t.Errorf("info of a loose file: %+v %v", info, loose)
	}

	// A project made before the operator key.
	for _, f := range []string{p.OperatorKeyPath(), p.OperatorPublicPath()} {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	for name, err := range map[string]error{"public": second(p.OperatorPublic()), "private": second(p.OperatorKey(noEnv))} {
		if !errors.Is(err, ErrNoOperatorKey) || !strings.Contains(err.Error(), "wicket init --operator-key") {
			t.Errorf("%s key of an old project: %v", name, err)
		}
	}
	if err := InitOperatorKey(p, rand.Reader); err != nil {
		t.Fatal(err)
	}
	if _, err := p.OperatorKey(noEnv); err != nil {
		t.Errorf("after making one: %v", err)
	}
}

func second[T any](_ T, err error) error { return err }

// TestOperatorKeyNotInSecretsEnv: secrets.env, which wicket mcp reads, is
// refused when it holds the operator key, and the error shows no value.
func TestOperatorKeyNotInSecretsEnv(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secrets.env")
	value := strings.Repeat("ab", 32)
	if err := os.WriteFile(path, []byte("WICKET_NODE_OBSERVE_KEY=0123456789abcdef\n"+KeyOperator+"="+value+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadSecrets(path, noEnv)
	if err == nil || !strings.Contains(err.Error(), ":2: "+KeyOperator+" does not belong in secrets.env") || strings.Contains(err.Error(), value) {
		t.Errorf("secrets.env with the operator key: %v", err)
	}
}
