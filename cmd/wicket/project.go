package main

import (
	"os"

	"wicket/internal/project"
)

// openProjectAt resolves the project (flag, the --project value, then
// WICKET_PROJECT, then the nearest ancestor holding wicket.toml) and reads
// its wicket.toml, so a malformed file is reported, with line and column, by
// whichever command meets it first. A command's run function calls it with
// the flag its options carry.
func openProjectAt(flag string) (project.Project, project.Config, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return project.Project{}, project.Config{}, err
	}
	p, err := project.Find(flag, os.Getenv(project.EnvProject), cwd)
	if err != nil {
		return p, project.Config{}, err
	}
	cfg, err := p.Config()
	return p, cfg, err
}
