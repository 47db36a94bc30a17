package project

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ConfigFile is the file whose presence marks a project's root.
const ConfigFile = "wicket.toml"

// EnvProject names the environment variable that points at a project when
// no --project flag is given.
const EnvProject = "WICKET_PROJECT"

// Project is a resolved project root. Its methods name the fixed layout.
type Project struct {
	Root string // absolute
}

// ConfigPath is <root>/wicket.toml.
func (p Project) ConfigPath() string { return filepath.Join(p.Root, ConfigFile) }

// StrategiesDir holds <name>.star strategies.
func (p Project) StrategiesDir() string { return filepath.Join(p.Root, "strategies") }

// IndicatorsDir holds <name>.star user indicators.
func (p Project) IndicatorsDir() string { return filepath.Join(p.Root, "indicators") }

// SettingsDir holds secrets.env and state/.
func (p Project) SettingsDir() string { return filepath.Join(p.Root, "settings") }

// SecretsPath is settings/secrets.env.
func (p Project) SecretsPath() string { return filepath.Join(p.SettingsDir(), "secrets.env") }

// StateDir is settings/state.
func (p Project) StateDir() string { return filepath.Join(p.SettingsDir(), "state") }

// TraceDir is where `wicket mcp --trace` writes its monthly JSONL files.
func (p Project) TraceDir() string { return filepath.Join(p.StateDir(), "agent") }

// HistoryPath is the bar history store.
func (p Project) HistoryPath() string { return filepath.Join(p.StateDir(), "history.db") }

// ResearchPath is the research ledger: every trial the research tools ran.
func (p Project) ResearchPath() string { return filepath.Join(p.StateDir(), "research.db") }

// JournalPath is the node journal, when the node runs from this project.
func (p Project) JournalPath() string { return filepath.Join(p.StateDir(), "node.db") }

// StrategyPath validates name and returns strategies/<name>.star.
func (p Project) StrategyPath(name string) (string, error) {
	if err := ValidName("strategy", name); err != nil {
		return "", err
	}
	return filepath.Join(p.StrategiesDir(), name+".star"), nil
}

// IndicatorPath validates name and returns indicators/<name>.star.
func (p Project) IndicatorPath(name string) (string, error) {
	if err := ValidName("indicator", name); err != nil {
		return "", err
	}
	return filepath.Join(p.IndicatorsDir(), name+".star"), nil
}

// ErrNoProject is wrapped by Find when no project can be found.
var ErrNoProject = errors.New("no wicket project")

// Find resolves the project a command works on: flagDir (--project) when
// set, else envDir (WICKET_PROJECT) when set, else the nearest ancestor of
// cwd that holds wicket.toml. The error, which wraps ErrNoProject, says how
// to create or point at a project.
func Find(flagDir, envDir, cwd string) (Project, error) {
	switch {
	case flagDir != "":
		return at(flagDir, "--project "+flagDir)
	case envDir != "":
		return at(envDir, EnvProject+"="+envDir)
	}
	dir, err := filepath.Abs(cwd)
	if err != nil {
		return Project{}, fmt.Errorf("resolve working directory: %w", err)
	}
	for d := dir; ; {
		if isFile(filepath.Join(d, ConfigFile)) {
			return Project{Root: d}, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	return Project{}, fmt.Errorf("%w: no %s in %s or any parent directory; create one with `wicket init` (or `wicket init DIR`), or point at one with --project DIR or %s=DIR",
		ErrNoProject, ConfigFile, dir, EnvProject)
}

func at(dir, source string) (Project, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Project{}, fmt.Errorf("resolve %s: %w", source, err)
	}
	if !isFile(filepath.Join(abs, ConfigFile)) {
		return Project{}, fmt.Errorf("%w: %s has no %s; create one with `wicket init %s`",
			ErrNoProject, source, ConfigFile, dir)
	}
	return Project{Root: abs}, nil
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// exists reports whether path exists (any type).
func exists(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, fs.ErrNotExist)
}
