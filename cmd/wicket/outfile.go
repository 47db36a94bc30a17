package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"wicket/internal/project"
)

// Output files a command writes on request (backtest --report, --plot):
// an existing file is never replaced unless --force says so, and nothing
// is ever written under the project's settings/ (its keys, secrets and
// state), whatever the flags. Both are checked before the command runs,
// so a refused path costs nothing.

// checkOutFile refuses file, the value of --flag, when it lies under
// the project's settings/ (through any symbolic link), or exists and
// force is false.
func checkOutFile(p project.Project, flag, file string, force bool) error {
	if file == "" {
		return nil
	}
	target, err := resolvedPath(file)
	if err != nil {
		return usagef("--%s %s: %v", flag, file, err)
	}
	settings, err := resolvedPath(p.SettingsDir())
	if err != nil {
		return usagef("--%s: %v", flag, err)
	}
	if rel, err := filepath.Rel(settings, target); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return usagef("--%s %s is under the project's settings/, which holds its keys and state: write it elsewhere (nothing is ever written under settings/, --force or not)", flag, file)
	}
	if _, err := os.Lstat(file); err == nil && !force {
		return usagef("--%s %s already exists: choose another file, or add --force to replace it", flag, file)
	}
	return nil
}

// resolvedPath is path made absolute with every symbolic link of its
// existing part followed.
func resolvedPath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	rest := ""
	for dir := abs; ; dir = filepath.Dir(dir) {
		real, err := filepath.EvalSymlinks(dir)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) || filepath.Dir(dir) == dir {
			return "", err
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// writeOutFile writes data to file, checked by checkOutFile: a new file,
// or with force one that replaces it.
func writeOutFile(file string, data []byte, force bool) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(file, flags, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s appeared while the backtest ran: it was not replaced (add --force to replace it)", file)
		}
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
