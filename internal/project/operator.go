package project

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The operator key is an Ed25519 key pair that stands for the person at
// the terminal: `wicket node arm` signs arming with it and `wicket approve`
// signs its answers. The private half lives in settings/operator.key (mode
// 0600), or in the environment variable KeyOperator of an operator command;
// it is never in secrets.env, which wicket mcp reads. The public half,
// settings/operator.pub, is what the node and wicket mcp verify with.

// ErrNoOperatorKey is wrapped when a project has no operator key (it was
// made before wicket had one).
var ErrNoOperatorKey = errors.New("no operator key")

// OperatorKeyPath is settings/operator.key, the operator's private key.
func (p Project) OperatorKeyPath() string { return filepath.Join(p.SettingsDir(), "operator.key") }

// OperatorPublicPath is settings/operator.pub, the operator's public key.
func (p Project) OperatorPublicPath() string { return filepath.Join(p.SettingsDir(), "operator.pub") }

// operatorMigration is what a project without an operator key is told.
func (p Project) operatorMigration() string {
	return fmt.Sprintf("run `wicket init --operator-key %s` to make one (settings/operator.key and settings/operator.pub), "+
		"then restart wicket node serve and wicket mcp", p.Root)
}

const (
	operatorKeyHeader = "# wicket operator key (Ed25519 seed, hex). Only `wicket node arm` and `wicket approve` read it;\n" +
		"# wicket mcp never does. Keep it mode 0600 and never commit it; whoever holds it can arm venues and approve writes.\n"
	operatorPubHeader = "# wicket operator public key (Ed25519, hex). The node and wicket mcp verify arming and approvals with it.\n"
)

// InitOperatorKey makes the project's operator key pair from random. It
// never overwrites: if either file exists it refuses and says so.
func InitOperatorKey(p Project, random io.Reader) error {
	for _, path := range []string{p.OperatorKeyPath(), p.OperatorPublicPath()} {
		if exists(path) {
			return fmt.Errorf("operator key: %s already exists; an operator key is never overwritten (to replace it, remove settings/operator.key and settings/operator.pub, run this again and restart the node and wicket mcp)", path)
		}
	}
	pub, priv, err := ed25519.GenerateKey(random)
	if err != nil {
		return fmt.Errorf("operator key: %w", err)
	}
	if err := os.MkdirAll(p.SettingsDir(), 0o700); err != nil {
		return fmt.Errorf("operator key: %w", err)
	}
	if err := writeNew(p.OperatorKeyPath(), operatorKeyHeader+hex.EncodeToString(priv.Seed())+"\n", 0o600); err != nil {
		return fmt.Errorf("operator key: %w", err)
	}
	if err := writeNew(p.OperatorPublicPath(), operatorPubHeader+hex.EncodeToString(pub)+"\n", 0o644); err != nil {
		return fmt.Errorf("operator key: %w", err)
	}
	return nil
}

// OperatorPublic reads settings/operator.pub. A project without one gets an
// error wrapping ErrNoOperatorKey that says how to make one.
func (p Project) OperatorPublic() (ed25519.PublicKey, error) {
	b, err := readKeyFile(p.OperatorPublicPath())
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: %s does not exist (the project was made before wicket had an operator key); %s",
			ErrNoOperatorKey, p.OperatorPublicPath(), p.operatorMigration())
	case err != nil:
		return nil, err
	}
	return ed25519.PublicKey(b), nil
}

// OperatorKey is the operator's private key, for the operator commands
// only: the environment variable KeyOperator (the hex seed) first, else
// settings/operator.key, which must not be readable by group or others.
// When settings/operator.pub exists the key must match it. wicket mcp
// never calls this.
func (p Project) OperatorKey(getenv func(string) (string, bool)) (ed25519.PrivateKey, error) {
	var seed []byte
	if v, ok := getenv(KeyOperator); ok && strings.TrimSpace(v) != "" {
		b, err := parseKeyHex(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", KeyOperator, err)
		}
		seed = b
	} else {
		fi, err := os.Stat(p.OperatorKeyPath())
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("%w: %s does not exist and %s is not set; %s",
				ErrNoOperatorKey, p.OperatorKeyPath(), KeyOperator, p.operatorMigration())
		case err != nil:
			return nil, fmt.Errorf("operator key: %w", err)
		case fi.Mode().Perm()&0o077 != 0:
			return nil, fmt.Errorf("operator key: %s has mode %04o: other users could read it; run chmod 600 %s",
				p.OperatorKeyPath(), fi.Mode().Perm(), p.OperatorKeyPath())
		}
		if seed, err = readKeyFile(p.OperatorKeyPath()); err != nil {
			return nil, err
		}
	}
	key := ed25519.NewKeyFromSeed(seed)
	if pub, err := p.OperatorPublic(); err == nil && !bytes.Equal(pub, key.Public().(ed25519.PublicKey)) {
		return nil, fmt.Errorf("operator key: it does not match %s, which the node and wicket mcp verify with; use the key made with it, or make a new pair (remove both files, run `wicket init --operator-key`)",
			p.OperatorPublicPath())
	} else if err != nil && !errors.Is(err, ErrNoOperatorKey) {
		return nil, err
	}
	return key, nil
}

// readKeyFile reads a key file: comment lines (#) and one line of 64 hex
// digits (32 bytes). Errors name the file and line, never the content.
func readKeyFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("operator key: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		b, err := parseKeyHex(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("%s: no key in the file (expected one line of 64 hex digits); make a new pair with `wicket init --operator-key` after removing both files", path)
}

func parseKeyHex(s string) ([]byte, error) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != ed25519.SeedSize {
		return nil, fmt.Errorf("expected 64 hex digits (an Ed25519 key), got %d characters", len(s))
	}
	return b, nil
}

// FromOperatorFile is where the operator key is found when it is not in
// the environment.
const FromOperatorFile Source = "settings/operator.key"

// OperatorKeyInfo describes the operator key without reading it: set in
// the environment (KeyOperator), else whether settings/operator.key
// exists. loose is true when that file is readable by group or others.
func (p Project) OperatorKeyInfo(getenv func(string) (string, bool)) (info KeyInfo, loose bool) {
	info = KeyInfo{Name: KeyOperator, Known: true}
	fi, err := os.Stat(p.OperatorKeyPath())
	inFile := err == nil
	loose = inFile && fi.Mode().Perm()&0o077 != 0
	if v, ok := getenv(KeyOperator); ok && strings.TrimSpace(v) != "" {
		info.Present, info.Source, info.Shadowed = true, FromEnvironment, inFile
		return info, loose
	}
	if inFile {
		info.Present, info.Source = true, FromOperatorFile
	}
	return info, loose
}
