package project

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// MaxStrategyBytes bounds a strategy file: a strategy is one short file.
const MaxStrategyBytes = 1 << 20

// ReadStrategy is the one reader of a project strategy by name: it
// validates name, then reads strategies/<name>.star through an os.Root on
// the project, so the file must lie inside the project (a symlink that
// leaves it is refused), must be a regular file (never a FIFO, socket or
// device; it is opened non-blocking, so a FIFO cannot hang the reader) and
// at most MaxStrategyBytes. A missing file is an error wrapping
// fs.ErrNotExist. size is the file's size when it could be learnt.
func (p Project) ReadStrategy(name string) (text string, size int64, err error) {
	if err := ValidName("strategy", name); err != nil {
		return "", 0, err
	}
	if p.Root == "" {
		return "", 0, fmt.Errorf("%w: no project to read strategy %q from", ErrNoProject, name)
	}
	root, err := os.OpenRoot(p.Root)
	if err != nil {
		return "", 0, fmt.Errorf("open the project: %w", err)
	}
	defer root.Close()
	rel := "strategies/" + name + ".star"
	return readBounded(rel, func(flag int) (*os.File, error) { return root.OpenFile(filepath.FromSlash(rel), flag, 0) })
}

// ReadStrategyFile reads a strategy an operator named by path (the CLI's
// FILE argument) under the same rules as ReadStrategy, except that the
// path may lie anywhere the operator can read: a regular file of at most
// MaxStrategyBytes, opened non-blocking.
func ReadStrategyFile(path string) (text string, size int64, err error) {
	return readBounded(path, func(flag int) (*os.File, error) { return os.OpenFile(path, flag, 0) })
}

// readBounded opens a file with open, checks it is a regular file no
// larger than MaxStrategyBytes, and reads it. display names it in errors.
func readBounded(display string, open func(flag int) (*os.File, error)) (string, int64, error) {
	f, err := open(os.O_RDONLY | syscall.O_NONBLOCK)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
			// os.Root's refusal of a path that escapes the project.
			return "", 0, fmt.Errorf("%s: %w (a strategy must be a file inside the project)", display, pe.Err)
		}
		return "", 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", 0, err
	}
	if !fi.Mode().IsRegular() {
		return "", 0, fmt.Errorf("%s is not a regular file (%s); a strategy is a plain .star file", display, FileKind(fi.Mode()))
	}
	if fi.Size() > MaxStrategyBytes {
		return "", fi.Size(), fmt.Errorf("%s is larger than %d KiB; a strategy is one short file", display, MaxStrategyBytes>>10)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxStrategyBytes+1))
	if err != nil {
		return "", fi.Size(), fmt.Errorf("read %s: %w", display, err)
	}
	if len(b) > MaxStrategyBytes {
		return "", int64(len(b)), fmt.Errorf("%s grew past %d KiB while it was read; a strategy is one short file", display, MaxStrategyBytes>>10)
	}
	return string(b), fi.Size(), nil
}
