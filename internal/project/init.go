package project

import (
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Init creates a project in dir (created if missing): wicket.toml with
// commented defaults, strategies/, indicators/, settings/secrets.env (mode
// 0600, fresh random keys read from random), the operator key pair
// (settings/operator.key, mode 0600, and settings/operator.pub) and
// settings/state/. It refuses
// to touch a directory that already holds wicket.toml.
func Init(dir string, random io.Reader) (Project, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Project{}, fmt.Errorf("init: %w", err)
	}
	p := Project{Root: abs}
	if exists(p.ConfigPath()) {
		return Project{}, fmt.Errorf("init: %s already exists; a project is never overwritten (edit it, or choose another directory)", p.ConfigPath())
	}
	for _, d := range []string{abs, p.StrategiesDir(), p.IndicatorsDir(), p.StateDir(), p.TraceDir()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return Project{}, fmt.Errorf("init: %w", err)
		}
	}
	if err := os.Chmod(p.SettingsDir(), 0o700); err != nil {
		return Project{}, fmt.Errorf("init: %w", err)
	}
	secrets := "# Node keys for this project. Keep this file mode 0600; never commit it.\n" +
		"# The environment overrides any key here. `wicket secrets list` shows which are set.\n"
	for _, k := range GeneratedKeys {
		v, err := randomKey(random)
		if err != nil {
			return Project{}, fmt.Errorf("init: generate %s: %w", k, err)
		}
		secrets += k + "=" + v + "\n"
	}
	if !exists(p.SecretsPath()) {
		if err := writeNew(p.SecretsPath(), secrets, 0o600); err != nil {
			return Project{}, fmt.Errorf("init: %w", err)
		}
	}
	if err := InitOperatorKey(p, random); err != nil {
		return Project{}, fmt.Errorf("init: %w", err)
	}
	gitignore := filepath.Join(abs, ".gitignore")
	if !exists(gitignore) {
		if err := writeNew(gitignore, "settings/secrets.env\nsettings/operator.key\nsettings/state/\n", 0o644); err != nil {
			return Project{}, fmt.Errorf("init: %w", err)
		}
	}
	// wicket.toml last: its presence marks a finished project.
	if err := writeNew(p.ConfigPath(), DefaultConfigText, 0o644); err != nil {
		return Project{}, fmt.Errorf("init: %w", err)
	}
	return p, nil
}

// AddKey appends a fresh random value of the generated key name to
// secrets.env (created with mode 0600 when missing), for a project made
// before wicket generated that key. It refuses a key the file already
// holds, and returns nothing of the value.
func (p Project) AddKey(name string, random io.Reader) error {
	s, err := p.Secrets(nil)
	if err != nil {
		return err
	}
	if _, _, ok := s.Lookup(name); ok {
		return fmt.Errorf("%s already holds %s", p.SecretsPath(), name)
	}
	v, err := randomKey(random)
	if err != nil {
		return fmt.Errorf("generate %s: %w", name, err)
	}
	if err := os.MkdirAll(p.SettingsDir(), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(p.SecretsPath(), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	line := name + "=" + v + "\n"
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		line = "\n" + line // the file's last line may lack its newline
	}
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func randomKey(r io.Reader) (string, error) {
	b := make([]byte, 32)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// writeNew creates path exclusively with perm (and forces perm past the umask).
func writeNew(path, content string, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
